package profile

import (
	"reflect"
	"testing"
)

// TestWaitsEncodeMerge: wait states survive encoding, and merging two
// ranks' sums their waits and keeps the longest single wait with its
// ranks, in either order.
func TestWaitsEncodeMerge(t *testing.T) {
	loc := Loc{Module: "/bin/app", Offset: 0x1234, Function: "main", File: "a.c", Line: 7}
	r0 := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 0}}, Waits: []Wait{
		{Kind: WaitNxN, Func: "MPI_Barrier", Loc: loc, Comm: "world", Calls: 1, WaitNs: 30e6, MaxNs: 30e6, MaxRank: 0, MaxPeer: 3, RankWait: SpreadOf(0, 30e6)},
	}}
	r1 := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 1}}, Waits: []Wait{
		{Kind: WaitNxN, Func: "MPI_Barrier", Loc: loc, Comm: "world", Calls: 1, WaitNs: 20e6, MaxNs: 20e6, MaxRank: 1, MaxPeer: 3, RankWait: SpreadOf(1, 20e6)},
		{Kind: WaitLateSender, Func: "MPI_Recv", Loc: loc, Comm: "world", Calls: 2, WaitNs: 5e6, MaxNs: 4e6, MaxRank: 1, MaxPeer: 0, RankWait: SpreadOf(1, 5e6)},
	}}
	for _, order := range [][]*Profile{{r0, r1}, {r1, r0}} {
		m := MergeAll(order)
		got, err := Unmarshal(Marshal(m), "test")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Waits) != 2 {
			t.Fatalf("waits: %+v", got.Waits)
		}
		ls, nxn := got.Waits[0], got.Waits[1] // sorted by kind: late-sender < wait-at-nxn
		if ls.Kind != WaitLateSender || ls.Calls != 2 || ls.WaitNs != 5e6 {
			t.Errorf("late sender: %+v", ls)
		}
		if nxn.Calls != 2 || nxn.WaitNs != 50e6 || nxn.MaxNs != 30e6 || nxn.MaxRank != 0 || nxn.MaxPeer != 3 ||
			nxn.RankWait.N != 2 || nxn.RankWait.MinRank != 1 || nxn.RankWait.MaxRank != 0 || nxn.Loc != loc {
			t.Errorf("barrier: %+v", nxn)
		}
		if !reflect.DeepEqual(got.Waits, m.Waits) {
			t.Errorf("decoded %+v, encoded %+v", got.Waits, m.Waits)
		}
	}
}
