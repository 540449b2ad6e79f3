package profile

import (
	"fmt"
	"math"
)

// sample is a profile with every field set to a distinct value.
func sample() *Profile {
	return &Profile{
		Meta: Meta{
			Command:    []string{"./app", "-n", "10"},
			NumRanks:   4,
			Hosts:      []string{"node1", "node2"},
			MPILibrary: "Open MPI v5.0.3",
			MPIVersion: "3.1",
			Family:     "openmpi",
			Tool:       "mpiscope 0.1",
			Timer:      "tsc",
			StartNs:    1700000000000000000,
			StopNs:     1700000001000000000,
			Settings:   []Setting{{"MPISCOPE_DIR", "/tmp/x"}, {"MPISCOPE_SITES", "1"}},
			Snapshot:   2,
			Partial:    true,
		},
		Ranks: []Rank{
			{Rank: 0, Host: "node1", PID: 100, AppNs: 1000, MPINs: 400, Calls: 10, Threads: 1, State: "final"},
			{Rank: 3, Host: "node2", PID: 200, AppNs: 2000, MPINs: 500, Calls: 11, Threads: 2, State: "abort", Dropped: 7},
		},
		Funcs: []Func{
			{Name: "MPI_Allreduce", Class: "coll", Calls: 5, TimeNs: 300, MinCallNs: 20, MaxCallNs: 100, Bytes: 40,
				RankTime: Spread{N: 2, Sum: 300, SumSq: 50000, Min: 100, Max: 200, MinRank: 3, MaxRank: 0}},
			{Name: "MPI_Send", Class: "p2p", Calls: 3, TimeNs: 30, MinCallNs: 5, MaxCallNs: 15, Bytes: 3 << 20,
				RankTime: SpreadOf(0, 30)},
			{Name: "MPI_Wtime", Class: "other"},
		},
		Sites: []Site{
			{Func: "MPI_Send", Loc: Loc{Module: "/bin/app", Offset: 0x1234, Function: "main", File: "app.c", Line: 42},
				Region: "solve", Calls: 3, TimeNs: 30, MinNs: 5, MaxNs: 15, Bytes: 3 << 20, RankTime: SpreadOf(0, 30)},
			{Func: "MPI_Send", Loc: Loc{Module: "/bin/app", Offset: 0xffffffffffffffff}, Calls: 1, TimeNs: -1,
				RankTime: Spread{N: 1, Sum: math.Copysign(0, -1), SumSq: math.Inf(1), Min: math.SmallestNonzeroFloat64, Max: math.MaxFloat64}},
		},
		Hists: []Hist{
			{Func: "MPI_Send", Bins: []Bin{{Log2: 0, Calls: 1}, {Log2: 21, Calls: 2, Bytes: 3 << 20, TimeNs: 29}}},
			{Func: "MPI_Wtime"},
		},
		Comms: []Comm{
			{Key: "world", Name: "MPI_COMM_WORLD", Size: 4, Members: 2, Calls: 8, TimeNs: 330, Bytes: 3<<20 + 40},
			{Key: "MPI_Comm_split:4@0", Size: 2, Creator: "MPI_Comm_split", Members: 1},
		},
		Peers: []Peer{
			{Rank: 0, Peer: 3, SentMsgs: 3, SentBytes: 3 << 20},
			{Rank: 3, Peer: 0, RecvMsgs: 3, RecvBytes: 3 << 20},
			{Rank: math.MaxInt64, Peer: math.MinInt64, SentMsgs: -1},
		},
		Regions: []Region{
			{Path: "solve", Visits: 2, WallNs: 900, MPINs: 30, Ranks: 1, RankMPI: SpreadOf(0, 30)},
			{Path: "solve/inner"},
		},
		Events:        []Event{{Text: "converged", Count: 1, Ranks: 1}},
		RankFuncBlock: 1,
		CommPeerBlock: 1,
		RankFuncs: []RankFunc{
			{Rank: 0, Func: "MPI_Allreduce", Comm: "world", Calls: 2, TimeNs: 200, Bytes: 16},
			{Rank: 0, Func: "MPI_Send", Comm: "MPI_Comm_split:4@0", Calls: 3, TimeNs: 30, Bytes: 3 << 20},
			{Rank: 3, Func: "MPI_Allreduce", Comm: "world", Calls: 3, TimeNs: 100, Bytes: 24},
			{Rank: math.MaxInt64, Func: "MPI_Wait", Calls: -1, TimeNs: math.MinInt64},
		},
		CommPeers: []CommPeer{
			{Rank: 0, Comm: "MPI_Comm_split:4@0", Peer: 3, SentMsgs: 3, SentBytes: 3 << 20},
			{Rank: 3, Comm: "MPI_Comm_split:4@0", Peer: 0, RecvMsgs: 3, RecvBytes: 3 << 20},
			{Rank: math.MaxInt64, Comm: "x", Peer: math.MinInt64, RecvMsgs: -1},
		},
	}
}

// rankProfile is a one-rank profile of the shape of a real application: the
// same nFuncs functions and nSites callsites on every rank (with per-rank
// values), and nPeers neighbours. All values are small integers, so that
// floating-point sums are exact in any order.
func rankProfile(r, numRanks, nFuncs, nSites, nPeers int) *Profile {
	p := &Profile{
		Meta: Meta{
			Command:  []string{"./app"},
			NumRanks: numRanks,
			Hosts:    []string{fmt.Sprintf("node%d", r/32)},
			Family:   "mpich",
			Tool:     "mpiscope test",
			Timer:    "tsc",
			StartNs:  int64(1000 + r%7),
			StopNs:   int64(5000 + r%11),
		},
		Ranks: []Rank{{Rank: r, Host: fmt.Sprintf("node%d", r/32), PID: 1000 + r, AppNs: 4000,
			MPINs: int64(100 + r%13), Calls: int64(nSites), Threads: 1, State: "final"}},
	}
	v := func(i int) int64 { return int64(1 + (i*7+r*13)%97) }
	for i := 0; i < nFuncs; i++ {
		t := v(i) * 10
		p.Funcs = append(p.Funcs, Func{Name: fmt.Sprintf("MPI_F%03d", i), Class: "p2p", Calls: v(i),
			TimeNs: t, MinCallNs: v(i + 1), MaxCallNs: v(i+2) * 3, Bytes: v(i) * 8, RankTime: SpreadOf(r, float64(t))})
	}
	for i := 0; i < nSites; i++ {
		t := v(i) * 5
		p.Sites = append(p.Sites, Site{Func: fmt.Sprintf("MPI_F%03d", i%max(nFuncs, 1)),
			Loc:    Loc{Module: "/home/user/app/bin/solver", Offset: uint64(0x4000 + 16*i)},
			Region: []string{"", "init", "solve"}[i%3], Calls: v(i), TimeNs: t, MinNs: v(i + 3),
			MaxNs: v(i+4) * 2, Bytes: v(i) * 64, RankTime: SpreadOf(r, float64(t))})
	}
	if nSites > 0 {
		p.Hists = []Hist{{Func: "MPI_F000", Bins: []Bin{{Log2: 3, Calls: 1, Bytes: 4, TimeNs: 9}, {Log2: 10 + r%3, Calls: 2, Bytes: 1500, TimeNs: 20}}}}
	}
	p.Comms = []Comm{{Key: "world", Size: numRanks, Members: 1, Calls: 3, TimeNs: 33, Bytes: 64}}
	for i := 1; i <= nPeers; i++ {
		q := (r + i) % max(numRanks, 1)
		p.Peers = append(p.Peers, Peer{Rank: r, Peer: q, SentMsgs: int64(i), SentBytes: int64(i * 100),
			RecvMsgs: int64(i), RecvBytes: int64(i * 90)})
	}
	p.Regions = []Region{{Path: "solve", Visits: 1, WallNs: 3000, MPINs: 50, Ranks: 1, RankMPI: SpreadOf(r, 50)}}
	for i := 0; i < nFuncs; i++ {
		f := &p.Funcs[i]
		p.RankFuncs = append(p.RankFuncs, RankFunc{Rank: r, Func: f.Name, Comm: "world", Calls: f.Calls, TimeNs: f.TimeNs, Bytes: f.Bytes})
	}
	p.RankFuncBlock = 1
	if nPeers > 0 && numRanks > 1 {
		p.CommPeerBlock = 1
		p.CommPeers = append(p.CommPeers, CommPeer{Rank: r, Comm: "MPI_Comm_split:2@0", Peer: r ^ 1, SentMsgs: 1, SentBytes: 8, RecvMsgs: 1, RecvBytes: 8})
	}
	if r%5 == 0 {
		p.Events = []Event{{Text: "checkpoint", Count: 1, Ranks: 1}}
	}
	return p
}
