package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

const unrollC = `#include <mpi.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 100; i++) {
        MPI_Barrier(MPI_COMM_WORLD); MPI_Barrier(MPI_COMM_WORLD); MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
`

const lammpsCxx = `#include <mpi.h>
namespace LAMMPS_NS {
struct CommBrick { void reverse_comm(); };
}
__attribute__((noinline)) void LAMMPS_NS::CommBrick::reverse_comm() { MPI_Barrier(MPI_COMM_WORLD); }
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    LAMMPS_NS::CommBrick c;
    for (int i = 0; i < 10; i++) c.reverse_comm();
    MPI_Finalize();
    return 0;
}
`

const knownF90 = `module solver
contains
  subroutine step()
    use mpi
    integer :: ierr
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end subroutine step
end module solver
subroutine halo()
  use mpi
  integer :: ierr
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
end subroutine halo
program known
  use mpi
  use solver
  integer :: ierr, i
  call MPI_Init(ierr)
  do i = 1, 10
    call step()
    call halo()
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
end program known
`

// TestReportRealPrograms profiles real programs on 2 ranks and reads them
// back with the command: three MPI_Barrier calls on one line of a loop (one
// row of 600 calls in the text, three addresses in JSON), a C++ method and
// gfortran's module procedure, external procedure and main program built
// without debug information (demangled names; -O0 for Fortran, or the main
// program is inlined into main).
func TestReportRealPrograms(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		build := func(cc, name, code string, flags ...string) string {
			src := filepath.Join(dir, name)
			if err := os.WriteFile(src, []byte(code), 0o666); err != nil {
				t.Fatal(err)
			}
			if _, err := exec.LookPath(cc); err != nil {
				mpitest.Skip(t, "%s not installed", cc)
			}
			exe := strings.TrimSuffix(src, filepath.Ext(src))
			args := append(append([]string{"-O1"}, flags...), "-o", exe, src)
			cmd := exec.Command(cc, args...)
			cmd.Dir = dir // gfortran writes solver.mod there
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
			}
			return exe
		}
		report := func(job string, args ...string) string {
			so, se, code := run(append(append([]string{"report"}, args...), job)...)
			if code != 0 {
				t.Fatalf("report %s: exit %d\n%s", job, code, se)
			}
			return so
		}

		_, job, _ := f.Profile(t, 2, nil, build(f.MPICC, "unroll.c", unrollC, "-g"))
		text := report(job)
		if n := strings.Count(text, "MPI_Barrier  main at unroll.c:5 "); n != 1 {
			t.Errorf("%d rows for unroll.c:5, want 1:\n%s", n, text)
		}
		var doc struct {
			Sites []struct {
				Callsite int `json:"callsite"`
				Loc      struct {
					Line int `json:"line"`
				} `json:"loc"`
				Calls int64 `json:"calls"`
			} `json:"sites"`
			Callsites []struct {
				ID    int    `json:"id"`
				Line  int    `json:"line"`
				Calls int64  `json:"calls"`
				Sites []int  `json:"sites"`
				Func  string `json:"func"`
			} `json:"callsites"`
		}
		if err := json.Unmarshal([]byte(report(job, "-format", "json")), &doc); err != nil {
			t.Fatal(err)
		}
		addrs, rows := 0, 0
		for _, s := range doc.Sites {
			if s.Loc.Line == 5 {
				addrs++
			}
		}
		for _, c := range doc.Callsites {
			if c.Line == 5 && c.Func == "MPI_Barrier" {
				rows++
				if c.Calls != 600 || len(c.Sites) != 3 {
					t.Errorf("unroll.c:5 row: %d calls from %d addresses, want 600 from 3", c.Calls, len(c.Sites))
				}
			}
		}
		if addrs != 3 || rows != 1 {
			t.Errorf("unroll.c:5: %d addresses in sites, %d rows in callsites; want 3 and 1", addrs, rows)
		}

		_, job, _ = f.Profile(t, 2, nil, build(f.MPICXX, "lmp.cpp", lammpsCxx))
		text = report(job)
		if !strings.Contains(text, "MPI_Barrier  LAMMPS_NS::CommBrick::reverse_comm() at lmp+0x") || strings.Contains(text, "_ZN") {
			t.Errorf("C++ method not demangled:\n%s", text)
		}

		_, job, _ = f.Profile(t, 2, nil, build(f.MPIFORT, "known.f90", knownF90, "-O0"))
		text = report(job)
		for _, want := range []string{"solver::step at known+0x", "halo at known+0x", "program at known+0x"} {
			if !strings.Contains(text, want) {
				t.Errorf("Fortran report lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "_MOD_") || strings.Contains(text, "MAIN__") || strings.Contains(text, "halo_") {
			t.Errorf("Fortran names not demangled:\n%s", text)
		}
	})
}
