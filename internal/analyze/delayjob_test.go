package analyze

import (
	"fmt"
	"slices"
	"testing"
)

// TestDelaysInJobRandom: the delay costs in the job (delaysInJob, each
// rank on goroutines) equal the offline delays exactly, over random
// waits: each rank's waits mostly in the order of their ends, some ranks'
// out of order (threads: its received runs then need sorting), window
// ends on a 10 ns grid (ties between ranks and within one, which
// turnBefore breaks by rank and index), waits of no time, windows that
// are empty (left out), partners out of range or the rank itself, and
// partner keys outside the key list.
func TestDelaysInJobRandom(t *testing.T) {
	for _, size := range []int{1, 2, 3, 8, 17} {
		for seed := range 6 {
			rng := newMix(uint64(size*1000 + seed))
			parts := make([]rankPart, size)
			for r := range parts {
				nk := 1 + int(rng.next()%5)
				for k := range nk {
					parts[r].Keys = append(parts[r].Keys, KeyName{Func: fmt.Sprintf("f%d", k), Site: fmt.Sprintf("0x%x", 0x400000+k)})
				}
				parts[r].Rank = r
				n := int(rng.next() % 300)
				if seed == 0 && r == 1 {
					n = 0
				}
				tm := float64(0)
				for range n {
					tm += float64(10 * (1 + rng.next()%8))
					w := DelayWait{T0: tm, Ready: tm + float64(10*(rng.next()%12)), Partner: int(rng.next() % uint64(size+2)), PKey: int32(rng.next()%uint64(nk+2)) - 1}
					if w.Partner == size+1 {
						w.Partner = -1
					}
					if rng.next()%4 != 0 {
						w.Wait = float64(rng.next() % uint64(w.Ready-w.T0+1))
					}
					tm = w.Ready
					parts[r].DWaits = append(parts[r].DWaits, w)
				}
				if seed%2 == 1 && r%3 == 0 { // a few swapped: not in order of their ends
					ws := parts[r].DWaits
					for x := 1; x < len(ws); x++ {
						if rng.next()%5 == 0 {
							ws[x-1], ws[x] = ws[x], ws[x-1]
						}
					}
				}
			}
			var want Result
			want.delays(parts)
			got := make([][]Delay, size)
			errs := onRanks(newChanNet(size), func(r int, c chanComm) (err error) {
				var st delayStats
				got[r], err = delaysInJob(c, parts[r].DWaits, parts[r].Keys, &st)
				return err
			})
			var all []Delay
			for r := range size {
				if errs[r] != nil {
					t.Fatalf("%d ranks, seed %d: rank %d: %v", size, seed, r, errs[r])
				}
				all = append(all, got[r]...)
			}
			sortDelays(all)
			if len(want.Delays) == 0 && size > 1 {
				t.Fatalf("%d ranks, seed %d: no delay costs offline", size, seed)
			}
			if !slices.Equal(all, want.Delays) {
				t.Errorf("%d ranks, seed %d: in the job\n%v\noffline\n%v", size, seed, all, want.Delays)
			}
		}
	}
}
