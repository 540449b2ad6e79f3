package view

import (
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestTimelineCut: a synthetic trace of 4 ranks (10,000 iterations of 6
// calls each per rank: 2 MPI_Irecv, 2 MPI_Isend, MPI_Waitall,
// MPI_Allreduce, and a MPI_Barrier every 100) loads whole under the
// limits, with every message matched; with maxCalls at 8,000 each rank
// stops at its 2,000 calls, the timeline ends where every rank still has
// its calls, and says so.
func TestTimelineCut(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 40_000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	whole, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range whole.calls {
		n += len(c)
	}
	if whole.cut || len(whole.ranks) != 4 || len(whole.msgs) == 0 {
		t.Fatalf("whole: cut %v, ranks %v, %d calls, %d messages", whole.cut, whole.ranks, n, len(whole.msgs))
	}
	sends := 0
	for _, c := range whole.calls {
		for _, k := range c {
			if whole.fns[k.fn] == "MPI_Isend" {
				sends++
			}
		}
	}
	if len(whole.msgs) != sends {
		t.Errorf("%d messages matched, %d sends", len(whole.msgs), sends)
	}
	old := maxCalls
	maxCalls = 8000
	defer func() { maxCalls = old }()
	cut, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !cut.cut || len(cut.warnings) == 0 || !strings.Contains(cut.warnings[len(cut.warnings)-1], "first 2000 calls") {
		t.Fatalf("cut: %v %q", cut.cut, cut.warnings)
	}
	for i, c := range cut.calls {
		if len(c) != 2000 {
			t.Errorf("rank %d: %d calls, want 2000", cut.ranks[i], len(c))
		}
		if last := c[len(c)-1].t1; last < cut.end {
			t.Errorf("rank %d ends at %d, before the timeline's end %d", cut.ranks[i], last, cut.end)
		}
		// The same calls as the whole trace's first 2,000.
		for k := range c {
			if c[k] != whole.calls[i][k] {
				t.Fatalf("rank %d call %d: %+v, whole %+v", cut.ranks[i], k, c[k], whole.calls[i][k])
			}
		}
	}
	if cut.end >= whole.end || cut.end <= 0 {
		t.Errorf("cut at %d ns, the whole trace ends at %d", cut.end, whole.end)
	}
	// Zoomed out: bins of every lane, over the part loaded.
	w := cut.window(0, cut.end, 0, 3, 100)
	if w.Mode != "bins" || len(w.Lanes) != 4 {
		t.Errorf("window: %s, %d lanes", w.Mode, len(w.Lanes))
	}
	lanes := map[float64]bool{}
	for _, b := range w.Bins {
		lanes[b[0]] = true
	}
	if len(lanes) != 4 {
		t.Errorf("bins in %d lanes, want 4", len(lanes))
	}
}
