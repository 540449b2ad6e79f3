package mpitest_test

// The piggyback channel from Fortran: transp.F90 (transp.c's cases, and
// the failures of the calls that complete requests, from mpif.h, use mpi
// and use mpi_f08) must print what it prints without mpiscope, and give
// the same exact counts, with the channel off, on and with compensation
// on.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

// pbPolled are the calls a program repeats until something has arrived:
// their counts are the run's.
var pbPolled = map[string]bool{"MPI_Iprobe": true, "MPI_Improbe": true, "MPI_Test": true, "MPI_Testall": true,
	"MPI_Testany": true, "MPI_Testsome": true, "MPI_Waitsome": true, "MPI_Request_get_status": true}

// pbCounts is a profile's calls and bytes per function (but the polled
// ones) and its point-to-point matrix, one line each.
func pbCounts(p *profile.Profile) string {
	var b strings.Builder
	for _, fn := range p.Funcs {
		if !pbPolled[fn.Name] {
			fmt.Fprintf(&b, "%s %d %d\n", fn.Name, fn.Calls, fn.Bytes)
		}
	}
	for _, pr := range p.Peers {
		fmt.Fprintf(&b, "peer %d %d %d %d %d %d\n", pr.Rank, pr.Peer, pr.SentMsgs, pr.SentBytes, pr.RecvMsgs, pr.RecvBytes)
	}
	return b.String()
}

// TestPiggybackFortran runs transp.F90 built with mpif.h, use mpi and use
// mpi_f08, on both families, without mpiscope, with mpiscope and the
// channel off, with the channel on and with compensation on: the same
// output in all four (statuses, counts from MPI_Get_count, data,
// truncation under MPI_ERRORS_RETURN, probes followed by receives sized
// from MPI_Get_count, and what each binding writes back when a call that
// completes requests fails, or completes only null requests: the Fortran
// entries write what the implementation's own do, docs/bindings.md), the
// same counts, and exact ones where the program fixes them.
func TestPiggybackFortran(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, b := range []struct{ name, flag string }{{"mpif", "-DMPIF"}, {"usempi", "-DUSEMPI"}, {"f08", "-DF08"}} {
			t.Run(b.name, func(t *testing.T) {
				dir := t.TempDir()
				bin := mpitest.Compile(t, f.MPIFORT, "piggyback/transp.F90", dir, b.flag)
				plain := fMask(plainOutputs(t, f, bin, dir, 103))
				var want, base string
				for _, c := range []struct {
					name string
					env  map[string]string
				}{
					{"off", nil},
					{"channel", map[string]string{"MPISCOPE_PIGGYBACK": "1"}},
					{"compensated", map[string]string{"MPISCOPE_COMPENSATE": "1"}},
				} {
					out := filepath.Join(dir, c.name)
					p, _, res := f.Profile(t, 2, c.env, bin, out)
					// A truncated receive's count is the
					// implementation's, and MPICH's varies from run to
					// run (TestPiggybackTruncate checks its values).
					got := fMask(rankOutputs(t, out))
					// Rank 0's 14 sends and its 11 whose receives fail,
					// two by each rank for the indices, and rank 1's to
					// MPI_PROC_NULL;
					// each rank's 9 MPI_Isend and 1 MPI_Issend;
					// each rank's 201 MPI_Sendrecv (200 in the loop) and
					// its 2 MPI_Sendrecv_replace, one of rank 1's to
					// MPI_PROC_NULL.
					mpitest.Want(t, p, map[string][2]int64{
						"MPI_Send": {30, 428 + 11*32 + 4*4}, "MPI_Sendrecv": {402, 2 * (20 + 200*16)}, "MPI_Sendrecv_replace": {4, 3 * 16},
						"MPI_Isend": {18, 2 * 4 * (4 + 5 + 6 + 7 + 2 + 5 + 1 + 8 + 3)}, "MPI_Issend": {2, 24},
					})
					if c.name == "off" {
						want, base = got, pbCounts(p)
						if got != plain {
							t.Errorf("with mpiscope (the channel off), the output differs from the run without it:\n%s",
								testutil.Diff("without", "with", plain, got))
						}
						continue
					}
					if got != want {
						t.Errorf("%s: output differs from the channel off\ngot:\n%s\nwant:\n%s\nstderr:\n%s", c.name, got, want, res.Stderr)
					}
					if got := pbCounts(p); got != base {
						t.Errorf("%s: counts differ with the channel on:\n%s\nwant:\n%s", c.name, got, base)
					}
					late := int64(0)
					for _, w := range p.Waits {
						if w.Kind == profile.WaitLateSender {
							late += w.Calls
						}
					}
					if late == 0 {
						t.Errorf("%s: no late-sender measurement: the channel is off", c.name)
					}
					if comp := len(p.CompRanks) > 0; comp != (c.name == "compensated") {
						t.Errorf("%s: compensated figures for %d ranks", c.name, len(p.CompRanks))
					}
				}
			})
		}
	})
}

// fMask joins transp.F90's output lines, the counts of its truncated
// receives replaced by "?".
func fMask(lines []string) string {
	for i, l := range lines {
		if strings.HasPrefix(l, "r1 truncate") {
			lines[i] = truncCount.ReplaceAllString(l, "count=? elements=?")
		}
	}
	return strings.Join(lines, "\n")
}
