package mpitest_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
)

// TestFortranFailures runs testdata/progs/fortran/fail.F90 built with
// mpif.h, use mpi and use mpi_f08, on both families, without mpiscope
// and with it: what the Fortran entries write back when a call that
// completes no request fails (truncated receives, invalid ranks and
// groups) or MPI_Improbe finds nothing must be what the implementation's
// own entries write (docs/bindings.md, "Failures and indices": Open MPI
// leaves MPI_Sendrecv's and MPI_Sendrecv_replace's statuses and every
// output handle as they were after a failure; MPICH writes what its C
// function wrote). The lines that tell the two families apart are checked
// by value, and the profile counts the failing calls.
func TestFortranFailures(t *testing.T) {
	// By construction, rank 1's truncated receives (tags 1 to 4 from
	// rank 0) as each family's bindings leave the status.
	want := map[string][]string{
		"openmpi": {"r1 sendrecv truncated: fail=T source=-7 tag=-7 error_set=F",
			"r1 sendrecv_replace truncated: fail=T source=-7 tag=-7 error_set=F",
			"r1 mrecv truncated: fail=T source=0 tag=3 error_set=F", "r1 mrecv truncated: message null=F",
			"r1 recv truncated: fail=T source=0 tag=4 error_set=F"},
		"mpich": {"r1 sendrecv truncated: fail=T source=0 tag=1 error_set=F",
			"r1 sendrecv_replace truncated: fail=T source=0 tag=2 error_set=T",
			"r1 mrecv truncated: fail=T source=0 tag=3 error_set=F", "r1 recv truncated: fail=T source=0 tag=4 error_set=F"},
	}
	common := []string{"r0 isend bad rank: fail=T handle=-7", "r1 irecv bad rank: fail=T handle=-7",
		"r0 comm_create null group: fail=T handle=-7", "r1 improbe bad rank: fail=T handle=-7", "r0 improbe bad rank: flag=T",
		"r1 iprobe bad rank: fail=T flag=T", "r0 improbe nothing: flag=F"}
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, b := range []struct{ name, flag string }{{"mpif", "-DMPIF"}, {"usempi", "-DUSEMPI"}, {"f08", "-DF08"}} {
			t.Run(b.name, func(t *testing.T) {
				dir := t.TempDir()
				bin := mpitest.Compile(t, f.MPIFORT, "fortran/fail.F90", dir, b.flag)
				// MPICH's mpi_f08 entries set a LOGICAL flag from a
				// variable of theirs also when the C function failed
				// without writing it: its value is undefined then.
				undef := f.Name == "mpich" && b.name == "f08"
				mask := func(lines []string) []string {
					for i, l := range lines {
						if undef && strings.Contains(l, "bad rank") && strings.Contains(l, "flag=") {
							lines[i] = l[:strings.Index(l, "flag=")] + "flag=?"
						}
					}
					return lines
				}
				plain := mask(plainOutputs(t, f, bin, dir, 22))
				for _, w := range append(slices.Clone(want[f.Name]), common...) {
					if !slices.Contains(plain, w) && !(undef && strings.Contains(w, "flag=")) {
						t.Errorf("without mpiscope: no line %q:\n%s", w, strings.Join(plain, "\n"))
					}
				}
				out := filepath.Join(dir, "with")
				p, _, _ := f.Profile(t, 2, nil, bin, out)
				if got := mask(rankOutputs(t, out)); !slices.Equal(got, plain) {
					t.Errorf("with mpiscope the program sees other values:\n%s",
						testutil.Diff("without", "with", strings.Join(plain, "\n"), strings.Join(got, "\n")))
				}
				// Through the converted entries: rank 1's one call of each
				// receive, each rank's two MPI_Improbe, MPI_Isend, ...
				for name, n := range map[string]int64{"MPI_Sendrecv": 1, "MPI_Sendrecv_replace": 1, "MPI_Mrecv": 1, "MPI_Mprobe": 1,
					"MPI_Improbe": 4, "MPI_Iprobe": 2, "MPI_Isend": 2, "MPI_Irecv": 2, "MPI_Comm_create": 2} {
					if got := mpitest.Func(p, name).Calls; got != n {
						t.Errorf("%s: %d calls, want %d", name, got, n)
					}
				}
			})
		}
	})
}
