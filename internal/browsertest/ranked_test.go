package browsertest

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// TestCommTraffic: testdata/progs/commtraffic.c on 4 ranks, in both MPI
// families. The heat map offers every communicator, and each choice shows
// exactly that communicator's pairs (world ranks, bytes and messages); the
// per-rank bars by function hold each rank's times of the profile, in rank
// order and sorted.
func TestCommTraffic(t *testing.T) {
	b := newBrowser(t)
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "commtraffic.c", t.TempDir())
		p, job, _ := f.Profile(t, 4, nil, prog)
		page := filepath.Join(job, "report.html")
		b.open(t, "file://"+page)
		opts := eval[[]string](t, b, `Array.from(document.querySelectorAll("#matrix-comm option")).map(o => o.textContent)`)
		want := []string{"all communicators", "MPI_COMM_WORLD only", "Comm_split:2@0", "Comm_split:2@1"}
		if !slices.Equal(opts, want) {
			t.Fatalf("communicators %q, want %q", opts, want)
		}
		cells := func(i int, metric string) string {
			return fmt.Sprint(eval[[][3]int64](t, b, fmt.Sprintf(`(function(){
				var m = document.getElementById("matrix-metric"); m.value = %q; m.dispatchEvent(new Event("change"));
				var s = document.getElementById("matrix-comm"); s.selectedIndex = %d; s.dispatchEvent(new Event("change"));
				return Array.from(document.querySelectorAll("#plot-matrix rect.cell")).map(r => [+r.dataset.from, +r.dataset.to, +r.dataset.v]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
			})()`, metric, i)))
		}
		for i, w := range []string{
			"[[0 1 1000] [0 2 5000] [1 2 1000] [1 3 5000] [2 3 1000] [3 0 1000]]",
			"[[0 1 1000] [1 2 1000] [2 3 1000] [3 0 1000]]",
			"[[0 2 5000]]",
			"[[1 3 5000]]",
		} {
			if got := cells(i, "2"); got != w {
				t.Errorf("%s, bytes: %s, want %s", want[i], got, w)
			}
		}
		if got, w := cells(3, "3"), "[[1 3 5]]"; got != w {
			t.Errorf("Comm_split:2@1, messages: %s, want %s", got, w)
		}
		if got, w := cells(1, "3"), "[[0 1 10] [1 2 10] [2 3 10] [3 0 10]]"; got != w {
			t.Errorf("world, messages: %s, want %s", got, w)
		}

		// The bars: each rank's time per function, from the profile.
		type bar struct {
			First int              `json:"first"`
			N     int              `json:"n"`
			Parts map[string]int64 `json:"parts"`
		}
		bars := func(order string) []bar {
			return eval[[]bar](t, b, fmt.Sprintf(`(function(){
				var s = document.getElementById("rank-order"); s.value = %q; s.dispatchEvent(new Event("change"));
				return Array.from(document.querySelectorAll("#plot-rankfuncs g.rankfunc-bar")).map(g => ({first: +g.dataset.first, n: +g.dataset.n,
					parts: Object.fromEntries(Array.from(g.querySelectorAll("rect.part")).map(r => [r.dataset.func, +r.dataset.v]))}));
			})()`, order))
		}
		wantParts := map[int]map[string]int64{}
		mpi := map[int]int64{}
		for _, rf := range p.RankFuncs {
			if wantParts[rf.Rank] == nil {
				wantParts[rf.Rank] = map[string]int64{}
			}
			// 9 functions: the 8 with the most time by name, one as "other".
			wantParts[rf.Rank][rf.Func] += rf.TimeNs
			mpi[rf.Rank] += rf.TimeNs
		}
		for _, order := range []string{"rank", "sorted"} {
			got := bars(order)
			if len(got) != 4 {
				t.Fatalf("%s: %d bars, want 4", order, len(got))
			}
			for i, g := range got {
				if order == "rank" && g.First != i {
					t.Errorf("bar %d is rank %d", i, g.First)
				}
				if order == "sorted" && i > 0 && mpi[g.First] < mpi[got[i-1].First] {
					t.Errorf("sorted: rank %d (%d ns) after rank %d (%d ns)", g.First, mpi[g.First], got[i-1].First, mpi[got[i-1].First])
				}
				w := wantParts[g.First]
				var sum, wsum int64
				for fn, v := range g.Parts {
					sum += v
					if fn != "other" && v != w[fn] {
						t.Errorf("%s: rank %d %s: %d ns, want %d", order, g.First, fn, v, w[fn])
					}
				}
				for _, v := range w {
					wsum += v
				}
				if g.N != 1 || sum != wsum {
					t.Errorf("%s: rank %d: %d ranks, %d ns in all, want 1 and %d", order, g.First, g.N, sum, wsum)
				}
			}
		}
		b.quiet(t, func(u string) bool { return u == "file://"+page })
	})
}
