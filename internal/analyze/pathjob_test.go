package analyze

import (
	"slices"
	"sync"
	"testing"
)

// TestPathExchanges: a path of T jumps built by hand over p ranks (the
// ranks it visits drawn at random, each jump's partner the next one's
// rank), beside a chain of 5000 jumps on one rank that the path never
// reaches, takes exactly floor(log2 T) + 3 exchanges (1 for T = 0)
// whatever the other chain's length: the doubling stops when the path is
// marked. The segments, start rank and jumps are the offline replay's.
func TestPathExchanges(t *testing.T) {
	// T -> exchanges: the two that find the successors, then levels 0 to
	// L = floor(log2 T), the last level the one whose jump at place
	// 2^L - 1 has the path's start 2^L steps on (T < 2^(L+1)): 2 + L + 1.
	// T = 0: the end rank has no jump, the first exchange says so. So 1:
	// 3; 2, 3: 4; 4 to 7: 5; 8 to 15: 6; 1024 to 2047: 13; 2048: 14
	// (ceil(log2 T) + 3 before 2026-11-28: 5 for T = 3, 6 for T = 5, 7
	// for 9, 14 for 1025).
	want := map[int]int{0: 1, 1: 3, 2: 4, 3: 4, 4: 5, 5: 5, 7: 5, 8: 6, 9: 6, 15: 6, 16: 7, 1024: 13, 1025: 13, 2047: 13, 2048: 14}
	const other = 5000
	for _, size := range []int{1, 2, 3, 7} {
		for T, wx := range want {
			rng := newMix(uint64(size*7919 + T))
			// place t of the path is on rank at[t]; at[T] is its start.
			at := make([]int32, T+1)
			for x := range at {
				at[x] = int32(rng.next() % uint64(size))
			}
			if T == 0 {
				at[0] = int32(size - 1)
			}
			big := float64(10*T + 10*other + 2000)
			ws := make([]rankWaits, size)
			for x := range T {
				t1 := big - 10*float64(x)
				ws[at[x]].jumps = append(ws[at[x]].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: at[x+1]})
			}
			off := -1 // the other chain's rank: not the path's start
			if size > 1 {
				off = int(at[T]+1) % size
				for m := range other {
					t1 := float64(1000 + 10*m)
					ws[off].jumps = append(ws[off].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: int32(off)})
				}
			}
			passes := make([]*rankPass, size)
			for r := range passes {
				ws[r].sortJumps()
				p := newRankPass(r, r, 1)
				p.ncalls, p.first, p.last = 1, 0, big-1
				if r == int(at[0]) {
					p.last = big + 1
				}
				passes[r] = p
			}
			w := replay(passes, ws)
			if w.info.Jumps != T || w.info.StartRank != int(at[T]) || w.info.EndRank != int(at[0]) {
				t.Fatalf("%d ranks, T=%d: the replay finds %+v (not the path built)", size, T, w.info)
			}
			net := newChanNet(size)
			segs := make([][][2]float64, size)
			infos := make([]pathInfo, size)
			sts := make([]pathStats, size)
			errs := make([]error, size)
			var wg sync.WaitGroup
			for r := range size {
				wg.Add(1)
				go func() {
					defer wg.Done()
					segs[r], errs[r] = doublingReplay(chanComm{r, net}, ws[r].jumps, passes[r], int(at[0]), &infos[r], &sts[r])
				}()
			}
			wg.Wait()
			for r := range size {
				if errs[r] != nil {
					t.Fatalf("%d ranks, T=%d, rank %d: %v", size, T, r, errs[r])
				}
				if len(segs[r]) == 0 {
					segs[r] = nil
				}
				if !slices.Equal(segs[r], w.segs[r]) {
					t.Errorf("%d ranks, T=%d, rank %d: segments %v, want %v", size, T, r, segs[r], w.segs[r])
				}
				if infos[r].StartRank != int(at[T]) || infos[r].Jumps != T {
					t.Errorf("%d ranks, T=%d, rank %d: start rank %d, %d jumps; want %d, %d", size, T, r, infos[r].StartRank, infos[r].Jumps, at[T], T)
				}
				if st := sts[r]; st.exchanges != wx || st.tokens {
					t.Errorf("%d ranks, T=%d, rank %d: %+v, want %d exchanges and no token", size, T, r, st, wx)
				}
			}
			if a, tk := net.a2as.Load(), net.tokens.Load(); a != int64(size*wx) || tk != 0 {
				t.Errorf("%d ranks, T=%d: %d exchanges over the ranks, %d tokens; want %d, none", size, T, a, tk, size*wx)
			}
		}
	}
}
