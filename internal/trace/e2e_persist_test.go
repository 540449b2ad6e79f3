package trace_test

import (
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestTracePersistent: persistent sends and receives (persist.c: per rank
// 20 of each, started with MPI_Start and MPI_Startall, completed with
// MPI_Wait and MPI_Waitall) keep their role from MPI_Start to their
// completion: each rank records 20 send posts, 20 receive posts, 20 send
// completions (which carry no status: nothing was received) and 20
// receive completions of 8 bytes from the other rank, tag 7; the
// completion calls of the inactive requests between the rounds (130 per
// rank, most of them answered by the requests' MS_TR_IDLE note since
// 2026-11-28) record none; after MPI_Request_free an MPI_Isend and an
// MPI_Irecv complete as such (21 of each completion). Every completion
// meets its post; OTF2 has exactly 42 MpiIsend, 42 MpiIsendComplete,
// 42 MpiIrecvRequest and 42 MpiIrecv (2 ranks) and no blocking send or
// receive.
func TestTracePersistent(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		job, _ := run(t, f, "persist.c", 2, map[string]string{"MPISCOPE_TRACE": "1"})
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Ranks) != 2 {
			t.Fatalf("%d rank traces, want 2", len(j.Ranks))
		}
		for _, r := range j.Ranks {
			n := map[string]int{}
			err := r.Scan(func(tid int, evs []trace.Event) error {
				for _, e := range evs {
					switch {
					case e.Kind == trace.KPost && e.Flags&trace.FSend != 0:
						n["send post"]++
					case e.Kind == trace.KPost && e.Flags&trace.FRecv != 0:
						n["recv post"]++
					case e.Kind == trace.KComplete && e.Flags&trace.FSend != 0 && e.Flags&trace.FRecv == 0:
						n["send completion"]++
						if e.RPeer != -1 || e.RBytes != 0 {
							n["send completion with a receive"]++
						}
					case e.Kind == trace.KComplete && e.Flags&trace.FRecv != 0:
						n["recv completion"]++
						if e.RPeer != int32(1-r.Header.Rank) || e.RTag != 7 || e.RBytes != 8 {
							n["recv completion of another message"]++
						}
					case e.Kind == trace.KComplete:
						n["other completion"]++
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range map[string]int{"send post": 20, "recv post": 20, "send completion": 21, "recv completion": 21,
				"send completion with a receive": 0, "recv completion of another message": 0, "other completion": 0} {
				if n[k] != want {
					t.Errorf("rank %d: %d %ss, want %d", r.Header.Rank, n[k], k, want)
				}
			}
		}
		out, w := writeOTF2(t, j, job)
		if w.Unmatched != 0 {
			t.Errorf("%d unmatched completions", w.Unmatched)
		}
		text := otf2Print(t, out)
		lines := otf2Lines(text)
		for rec, n := range map[string]int{"MPI_ISEND": 42, "MPI_ISEND_COMPLETE": 42, "MPI_IRECV_REQUEST": 42, "MPI_IRECV": 42,
			"MPI_SEND": 0, "MPI_RECV": 0} {
			if len(lines[rec]) != n {
				t.Errorf("otf2-print: %d %s lines, want %d", len(lines[rec]), rec, n)
			}
		}
		if t.Failed() {
			t.Logf("%s", text)
		}
	})
}
