package trace

import "testing"

// TestHostClocks: ranks on rank 0's host use rank 0's conversion (offset
// 0, whatever their own samples say); ranks of another host share the
// conversion of that host's rank with the quickest samples.
func TestHostClocks(t *testing.T) {
	mk := func(rank int, host string, off int64, rtt uint64) *Rank {
		return &Rank{Header: &Header{Rank: rank, Host: host, Timer: "tsc"},
			Calib: Calib{Tick0: 0, Ns0: uint64(1000 * rank), NsPerTick: 1},
			Syncs: []Sync{{LocalNs: 0, OffsetNs: off, RTTNs: rtt}}}
	}
	j := &Job{Ranks: []*Rank{mk(0, "a", 0, 0), mk(1, "a", 700, 2000), mk(2, "b", 5000, 3000), mk(3, "b", 5400, 1000)}}
	w := NewWalker(j, WalkOptions{})
	ns := func(r int) float64 { return w.Clocks[r].Ns(1_000_000) }
	if ns(1) != ns(0) {
		t.Errorf("rank 1 (rank 0's host): %v, rank 0: %v; want equal", ns(1), ns(0))
	}
	if ns(2) != ns(3) || ns(3) != 1_000_000+3000+5400 {
		t.Errorf("ranks 2 and 3 (host b): %v and %v, want both %v (rank 3's samples)", ns(2), ns(3), 1_000_000+3000+5400)
	}
}
