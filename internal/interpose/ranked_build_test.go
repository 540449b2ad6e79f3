package interpose

import (
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestBuildSplitBlocks: in a job of 4 ranks each rank's split is its own;
// in one of 10,000 ranks (above profile.SplitRanks) rank 25 reports it
// for the block of 10 ranks from 20 (RankFunc) and of 79 ranks from 0
// (CommPeer, peers in blocks too), and merging the ranks of a block sums
// them into one entry.
func TestBuildSplitBlocks(t *testing.T) {
	raw := func(rank, size int) *rawRank {
		r := testRaw(rank)
		r.Size = size
		r.Sites[0].Comm = 0
		r.Sites[1].Comm = 0
		r.Sites[2].Comm = -1
		r.CommPeers = map[[2]int]*rawPeer{{0, 100}: {SMsgs: 2, SBytes: 16}, {0, 101}: {SMsgs: 1, SBytes: 8}}
		return r
	}
	p := buildProfile(raw(25, 4), profile.Meta{NumRanks: 4}, resolveTest)
	if p.RankFuncBlock != 1 || p.CommPeerBlock != 1 || len(p.RankFuncs) != 2 || p.RankFuncs[0].Rank != 25 || len(p.CommPeers) != 2 {
		t.Fatalf("4 ranks: blocks %d %d, %+v, %+v", p.RankFuncBlock, p.CommPeerBlock, p.RankFuncs, p.CommPeers)
	}
	if f := p.RankFuncs[1]; f.Func != "MPI_Send" || f.Comm != "world" || f.Calls != 20 || f.TimeNs != 150 || f.Bytes != 160 {
		t.Errorf("MPI_Send: %+v", f)
	}
	if f := p.RankFuncs[0]; f.Func != "MPI_Allreduce" || f.Comm != "" || f.Calls != 10 {
		t.Errorf("MPI_Allreduce: %+v", f)
	}
	var parts []*profile.Profile
	for r := 20; r < 30; r++ {
		parts = append(parts, buildProfile(raw(r, 10000), profile.Meta{NumRanks: 10000}, resolveTest))
	}
	q := parts[5]
	if q.RankFuncBlock != 10 || q.CommPeerBlock != 79 || q.RankFuncs[0].Rank != 20 || len(q.CommPeers) != 1 {
		t.Fatalf("10,000 ranks: blocks %d %d, %+v, %+v", q.RankFuncBlock, q.CommPeerBlock, q.RankFuncs, q.CommPeers)
	}
	if c := q.CommPeers[0]; c.Rank != 0 || c.Peer != 79 || c.SentMsgs != 3 || c.SentBytes != 24 {
		t.Errorf("comm peer: %+v", c)
	}
	m := profile.MergeAll(parts)
	if len(m.RankFuncs) != 2 || m.RankFuncs[1].Calls != 200 || m.RankFuncs[1].Rank != 20 || m.RankFuncBlock != 10 {
		t.Errorf("merged block: %d %+v", m.RankFuncBlock, m.RankFuncs)
	}
	if len(m.CommPeers) != 1 || m.CommPeers[0].SentMsgs != 30 {
		t.Errorf("merged comm peers: %+v", m.CommPeers)
	}
}
