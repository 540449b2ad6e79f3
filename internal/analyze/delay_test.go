package analyze

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"
)

// delaysPlain is the delay analysis as docs/analysis.md states it, with
// nothing made fast: every wait with a window in one list sorted stably
// by window end, descending, from the ranks' waits in reverse (so ties go
// to the higher rank, then index); each partner's waits by window end,
// scanned from the first; the costs found by a scan of those made. The
// oracle of TestDelaysPlain: delays must equal it exactly, sums in the
// same order included.
func delaysPlain(parts []rankPart) []Delay {
	type wt struct {
		DelayWait
		part, k int
		passed  float64
	}
	var all []*wt
	for i := len(parts) - 1; i >= 0; i-- {
		ws := parts[i].DWaits
		for k := len(ws) - 1; k >= 0; k-- {
			if ws[k].Ready > ws[k].T0 {
				all = append(all, &wt{DelayWait: ws[k], part: i, k: k})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b *wt) int {
		switch {
		case a.Ready > b.Ready:
			return -1
		case a.Ready < b.Ready:
			return 1
		}
		return 0
	})
	turn := map[*wt]int{}
	byEnd := make([][]*wt, len(parts))
	for t, w := range all {
		turn[w] = t
		byEnd[w.part] = append(byEnd[w.part], w)
	}
	for i := range byEnd {
		slices.Reverse(byEnd[i])
	}
	type made struct {
		part int
		key  int32
	}
	var keys []made
	var list []Delay
	for t, d := range all {
		load := d.Wait + d.passed
		if load <= 0 {
			continue
		}
		sp := -1
		for i := range parts {
			if parts[i].Rank == d.Partner {
				sp = i
			}
		}
		if sp < 0 {
			continue
		}
		win := d.Ready - d.T0
		var covered float64
		for _, w := range byEnd[sp] {
			if !(w.Ready > d.T0) {
				continue
			}
			if !(w.T0 < d.Ready) {
				break
			}
			o := min(w.Ready, d.Ready) - max(w.T0, d.T0)
			if o <= 0 || turn[w] <= t {
				continue
			}
			o = min(o, win-covered)
			if o <= 0 {
				break
			}
			covered += o
			w.passed += load * o / win
		}
		rest := 1 - covered/win
		if rest <= 0 {
			continue
		}
		x := slices.Index(keys, made{sp, d.PKey})
		if x < 0 {
			x = len(list)
			keys = append(keys, made{sp, d.PKey})
			c := Delay{Rank: d.Partner}
			if ks := parts[sp].Keys; d.PKey >= 0 && int(d.PKey) < len(ks) {
				c.Func, c.Callsite, c.Caller = ks[d.PKey].Func, ks[d.PKey].Site, ks[d.PKey].Caller
			}
			list = append(list, c)
		}
		c := &list[x]
		c.Short += d.Wait * rest / 1e9
		c.Long += d.passed * rest / 1e9
		if d.Wait > 0 {
			c.Instances++
		}
	}
	for i := range list {
		list[i].Seconds = list[i].Short + list[i].Long
	}
	slices.SortStableFunc(list, func(a, b Delay) int { return a.Rank - b.Rank })
	ds := append([]Delay{}, list...)
	sortDelays(ds)
	return ds
}

// randomDelayParts makes size ranks' waits for the delay tests: each
// rank's mostly in the order of their ends, every third rank's with a few
// swapped when swap is set (threads), window ends on a 10 ns grid (ties
// between ranks and within one), one window in ten long (it covers many
// of its partner's waits), waits of no time, empty windows, partners out
// of range, the rank itself or none (-1), partner keys outside the key
// list; world ranks from first, step apart.
func randomDelayParts(rng *mixRand, size, first, step int, swap bool) []rankPart {
	parts := make([]rankPart, size)
	for r := range parts {
		nk := 1 + int(rng.next()%5)
		for k := range nk {
			parts[r].Keys = append(parts[r].Keys, KeyName{Func: fmt.Sprintf("f%d", k), Site: fmt.Sprintf("0x%x", 0x400000+k)})
		}
		parts[r].Rank = first + r*step
		n := int(rng.next() % 300)
		tm := float64(0)
		for range n {
			tm += float64(10 * (1 + rng.next()%8))
			span := 10 * (rng.next() % 12)
			if rng.next()%10 == 0 {
				span = 10 * (rng.next() % 200)
			}
			p := int(rng.next() % uint64(size+2))
			w := DelayWait{T0: tm, Ready: tm + float64(span), Partner: first + p*step, PKey: int32(rng.next()%uint64(nk+2)) - 1}
			switch p {
			case size:
				w.Partner = first + p*step + 1 // no rank's
			case size + 1:
				w.Partner = -1
			}
			if rng.next()%4 != 0 {
				w.Wait = float64(rng.next() % uint64(w.Ready-w.T0+1))
			}
			tm = w.Ready
			parts[r].DWaits = append(parts[r].DWaits, w)
		}
		if swap && r%3 == 0 {
			ws := parts[r].DWaits
			for x := 1; x < len(ws); x++ {
				if rng.next()%5 == 0 {
					ws[x-1], ws[x] = ws[x], ws[x-1]
				}
			}
		}
	}
	return parts
}

// TestDelaysPlain: delays (the ranks' runs merged as they are processed,
// the partner's waits found from the end of what it has left) equals
// delaysPlain exactly on random waits, with the ranks in a list (dense
// world ranks) and in a map (sparse ones), runs in order and not.
func TestDelaysPlain(t *testing.T) {
	for _, size := range []int{1, 2, 3, 8, 17, 40} {
		for seed := range 8 {
			rng := newMix(uint64(size*7919 + seed))
			first, step := 0, 1
			if seed%4 >= 2 {
				first, step = 5, 3000 // sparser than 4 a part: the map
			}
			parts := randomDelayParts(rng, size, first, step, seed%2 == 1)
			want := delaysPlain(parts)
			var got Result
			got.delays(parts)
			if len(want) == 0 && size > 1 {
				t.Fatalf("%d ranks, seed %d: no delay costs", size, seed)
			}
			if !slices.Equal(got.Delays, want) {
				t.Errorf("%d ranks, seed %d: delays\n%v\nwant\n%v", size, seed, got.Delays, want)
			}
		}
	}
}

// TestTurnTree: the merge of runs in processing order takes the waits by
// end, descending, ties to the higher run, each run from its end; with 1
// to 9 runs (trees of 1 to 16 leaves), some empty.
func TestTurnTree(t *testing.T) {
	all := [][]float64{{1, 3, 3, 7}, {}, {3, 5}, {0, 3, 9}, {3}, {}, {2, 8}, {-4}, {3, 3}}
	type got struct {
		ready float64
		run   int32
		x     int
	}
	wants := map[int][]got{
		1: {{7, 0, 3}, {3, 0, 2}, {3, 0, 1}, {1, 0, 0}},
		2: {{7, 0, 3}, {3, 0, 2}, {3, 0, 1}, {1, 0, 0}},
		5: {{9, 3, 2}, {7, 0, 3}, {5, 2, 1}, {3, 4, 0}, {3, 3, 1}, {3, 2, 0}, {3, 0, 2}, {3, 0, 1}, {1, 0, 0}, {0, 3, 0}},
		9: {{9, 3, 2}, {8, 6, 1}, {7, 0, 3}, {5, 2, 1}, {3, 8, 1}, {3, 8, 0}, {3, 4, 0}, {3, 3, 1}, {3, 2, 0}, {3, 0, 2}, {3, 0, 1},
			{2, 6, 0}, {1, 0, 0}, {0, 3, 0}, {-4, 7, 0}},
	}
	for n, want := range wants {
		runs := all[:n]
		left := make([]int, n)
		heads := make([]float64, n)
		for i, r := range runs {
			heads[i] = math.Inf(-1)
			if left[i] = len(r); len(r) > 0 {
				heads[i] = r[len(r)-1]
			}
		}
		tr := newTurnTree(heads)
		var order []got
		for i := tr.top(); i >= 0; i = tr.top() {
			left[i]--
			order = append(order, got{runs[i][left[i]], i, left[i]})
			if left[i] > 0 {
				tr.next(runs[i][left[i]-1])
			} else {
				tr.next(math.Inf(-1))
			}
		}
		if !slices.Equal(order, want) {
			t.Errorf("%d runs: order %v, want %v", n, order, want)
		}
	}
}

// TestFirstEndAfter: the first end above t0 found back from the last is
// sort.Search's, over ends with ties and t0 below, among and above them.
func TestFirstEndAfter(t *testing.T) {
	rng := newMix(7)
	for n := range 70 {
		ends := make([]float64, n)
		e := 0.0
		for i := range ends {
			e += float64(rng.next() % 3)
			ends[i] = e
		}
		for t0 := -1.0; t0 <= e+1; t0 += 0.5 {
			want := sort.Search(n, func(i int) bool { return ends[i] > t0 })
			if got := firstEndAfter(ends, t0); got != want {
				t.Fatalf("%v above %v: %d, want %d", ends, t0, got, want)
			}
		}
	}
}
