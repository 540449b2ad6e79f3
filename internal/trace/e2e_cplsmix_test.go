package trace_test

import (
	"fmt"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestTraceCplsFallback runs cplsmix.c: MPI_Waitall calls whose
// completions record the fast loop (ms_tcpls_fast) begins and then leaves,
// at a persistent request or a cancelled receive, to the general loop,
// which writes the record again from its start (2026-11-28). Each call is
// one completions record holding every request, with the roles and
// receive fields the general loop gives them; and an MPI_Testall of sends
// (and MPI_REQUEST_NULL) with MPI_STATUSES_IGNORE, whose record's entries
// are made before the call (ms_trace_saveall), is one record of its two
// sends.
func TestTraceCplsFallback(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		const n = 5 // N of cplsmix.c
		job, _ := run(t, f, "cplsmix.c", 2, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "off"})
		for r := 0; r < 2; r++ {
			if recs, ents := rawCpls(t, job, r); recs != 4*n || ents != 11*n {
				t.Errorf("rank %d: %d completions records of %d completions, want %d of %d", r, recs, ents, 4*n, 11*n)
			}
		}
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Ranks) != 2 {
			t.Fatalf("%d rank traces, want 2", len(j.Ranks))
		}
		counts := rawCount(t, j, func(r *trace.Rank, e *trace.Event, m map[string]int) {
			if e.Kind != trace.KComplete {
				return
			}
			peer := int32(1 - r.Header.Rank)
			switch {
			case e.Flags&(trace.FSend|trace.FRecv) == trace.FSend && e.RPeer == -1 && e.RBytes == 0:
				m["send"]++
			case e.Flags&(trace.FSend|trace.FRecv) == trace.FRecv && e.RPeer == trace.Cancelled:
				m["cancelled"]++
			case e.Flags&(trace.FSend|trace.FRecv) == trace.FRecv && e.RPeer == peer && e.RBytes == 8:
				m[fmt.Sprintf("recv tag %d", e.RTag)]++
			default:
				m["other"]++
			}
		})
		for i, m := range counts {
			wantCounts(t, fmt.Sprintf("rank %d", i), m, map[string]int{"send": 5 * n, "recv tag 1": n, "recv tag 2": n,
				"recv tag 3": n, "recv tag 4": 2 * n, "cancelled": n, "other": 0})
		}
	})
}
