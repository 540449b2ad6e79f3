package report

import (
	"fmt"

	"github.com/mpiscope/mpiscope/profile"
)

const sec = int64(1e9)

// spreadOf builds the Spread of per-rank values vals[r] for ranks 0..n-1.
func spreadOf(vals ...float64) profile.Spread {
	s := profile.Spread{N: int64(len(vals))}
	for r, v := range vals {
		s.Sum += v
		s.SumSq += v * v
		if r == 0 || v < s.Min {
			s.Min, s.MinRank = v, r
		}
		if r == 0 || v > s.Max {
			s.Max, s.MaxRank = v, r
		}
	}
	return s
}

// fixture is a 4-rank job with hand-checked numbers:
//
//	rank  Send  Recv  Allreduce  Barrier  Comm_split  = MPI     App
//	0     0.1   0.5   1.0        0.125    0.00025     1.72525  10 s
//	1     0.2   0.5   2.0        0.125    0.00025     2.82525  10 s
//	2     0.3   0.5   0.5        0.125    0.00025     1.42525  10 s
//	3     0.4   0.5   1.0        0.125    0.00025     2.02525  10 s
//
// Total MPI 8.001 s of 40 s app (20.0025%). MPI_Send: 1000 calls, 8000
// bytes, 1 s, rank COV sqrt(0.0125)/0.25 = 0.447214.
func fixture() *profile.Profile {
	const t0 = int64(1714564800) * sec // 2024-05-01T12:00:00Z
	ms := func(x float64) float64 { return x * 1e6 }
	s := func(x float64) float64 { return x * 1e9 }
	p := &profile.Profile{
		Meta: profile.Meta{
			Command:    []string{"./solver", "-n", "128", "--out", "my file.dat"},
			NumRanks:   4,
			Hosts:      []string{"node01", "node02"},
			MPILibrary: "Open MPI v4.1.5, package: Open MPI builder Distribution",
			MPIVersion: "3.1",
			Family:     "openmpi",
			Tool:       "0.1.0",
			Timer:      "tsc",
			StartNs:    t0,
			StopNs:     t0 + 10*sec + 500_000_000,
			Settings: []profile.Setting{
				{Name: "MPISCOPE_DEPTH", Value: "2"},
				{Name: "MPISCOPE_DIR", Value: "/tmp/job"},
			},
		},
	}
	mpi := []int64{1_725_250_000, 2_825_250_000, 1_425_250_000, 2_025_250_000}
	for r := range 4 {
		p.Ranks = append(p.Ranks, profile.Rank{
			Rank: r, Host: fmt.Sprintf("node0%d", r/2+1), PID: 1000 + r, AppNs: 10 * sec, MPINs: mpi[r],
			Calls: 603, Threads: 1, State: "final",
		})
	}
	p.Funcs = []profile.Func{
		{Name: "MPI_Allreduce", Class: "coll", Calls: 400, TimeNs: 4_500_000_000, MinCallNs: 1_000_000,
			MaxCallNs: 90_000_000, Bytes: 3200, RankTime: spreadOf(s(1.0), s(2.0), s(0.5), s(1.0))},
		{Name: "MPI_Barrier", Class: "coll", Calls: 8, TimeNs: 500_000_000, MinCallNs: 10_000_000,
			MaxCallNs: 100_000_000, RankTime: spreadOf(s(0.125), s(0.125), s(0.125), s(0.125))},
		{Name: "MPI_Comm_split", Class: "comm", Calls: 4, TimeNs: 1_000_000, MinCallNs: 200_000,
			MaxCallNs: 300_000, RankTime: spreadOf(ms(0.25), ms(0.25), ms(0.25), ms(0.25))},
		{Name: "MPI_Recv", Class: "p2p", Calls: 1000, TimeNs: 2 * sec, MinCallNs: 500,
			MaxCallNs: 50_000_000, Bytes: 8000, RankTime: spreadOf(s(0.5), s(0.5), s(0.5), s(0.5))},
		{Name: "MPI_Send", Class: "p2p", Calls: 1000, TimeNs: 1 * sec, MinCallNs: 400,
			MaxCallNs: 20_000_000, Bytes: 8000, RankTime: spreadOf(s(0.1), s(0.2), s(0.3), s(0.4))},
	}
	exe := "/home/user/solver/solver"
	p.Sites = []profile.Site{
		{Func: "MPI_Allreduce", Loc: profile.Loc{Module: exe, Offset: 0x4a10, Function: "solve", File: "/home/user/solver/solve.c", Line: 42},
			Region: "solve", Calls: 400, TimeNs: 4_500_000_000, MinNs: 1_000_000, MaxNs: 90_000_000, Bytes: 3200,
			RankTime: spreadOf(s(1.0), s(2.0), s(0.5), s(1.0))},
		{Func: "MPI_Barrier", Loc: profile.Loc{Module: "/usr/lib/libfoo.so.1", Offset: 0x1a2b},
			Calls: 8, TimeNs: 500_000_000, MinNs: 10_000_000, MaxNs: 100_000_000,
			RankTime: spreadOf(s(0.125), s(0.125), s(0.125), s(0.125))},
		{Func: "MPI_Comm_split", Loc: profile.Loc{Module: exe, Offset: 0x1200, Function: "main", File: "/home/user/solver/main.c", Line: 10},
			Calls: 4, TimeNs: 1_000_000, MinNs: 200_000, MaxNs: 300_000,
			RankTime: spreadOf(ms(0.25), ms(0.25), ms(0.25), ms(0.25))},
		{Func: "MPI_Recv", Loc: profile.Loc{Module: exe, Offset: 0x5000, Function: "halo", File: "/home/user/solver/halo.c", Line: 88},
			Region: "solve/halo", Calls: 1000, TimeNs: 2 * sec, MinNs: 500, MaxNs: 50_000_000, Bytes: 8000,
			RankTime: spreadOf(s(0.5), s(0.5), s(0.5), s(0.5))},
		{Func: "MPI_Send", Loc: profile.Loc{Module: exe, Offset: 0x4f00, Function: "halo", File: "/home/user/solver/halo.c", Line: 77},
			Region: "solve/halo", Calls: 600, TimeNs: 600_000_000, MinNs: 400, MaxNs: 20_000_000, Bytes: 4800,
			RankTime: spreadOf(s(0.06), s(0.12), s(0.18), s(0.24))},
		{Func: "MPI_Send", Loc: profile.Loc{Module: exe, Offset: 0x4f40, Function: "halo", File: "/home/user/solver/halo.c", Line: 79},
			Region: "solve/halo", Calls: 400, TimeNs: 400_000_000, MinNs: 450, MaxNs: 15_000_000, Bytes: 3200,
			RankTime: spreadOf(s(0.04), s(0.08), s(0.12), s(0.16))},
	}
	p.Hists = []profile.Hist{
		{Func: "MPI_Allreduce", Bins: []profile.Bin{{Log2: 4, Calls: 400, Bytes: 3200, TimeNs: 4_500_000_000}}},
		{Func: "MPI_Recv", Bins: []profile.Bin{
			{Log2: 0, Calls: 200, Bytes: 0, TimeNs: 300_000_000},
			{Log2: 4, Calls: 799, Bytes: 6392, TimeNs: 1_600_000_000},
			{Log2: 11, Calls: 1, Bytes: 1608, TimeNs: 100_000_000},
		}},
		{Func: "MPI_Send", Bins: []profile.Bin{
			{Log2: 0, Calls: 200, Bytes: 0, TimeNs: 100_000_000},
			{Log2: 4, Calls: 800, Bytes: 8000, TimeNs: 900_000_000},
		}},
	}
	p.Comms = []profile.Comm{
		{Key: "MPI_Comm_split:4@0", Name: "rows", Size: 2, Creator: "MPI_Comm_split", Members: 4, Calls: 400,
			TimeNs: 4_500_000_000, Bytes: 3200},
		{Key: "self", Size: 1, Creator: "MPI_Init", Members: 4},
		{Key: "world", Size: 4, Creator: "MPI_Init", Members: 4, Calls: 2008, TimeNs: 3_500_000_000, Bytes: 16000},
	}
	p.Peers = []profile.Peer{
		{Rank: 0, Peer: 1, SentMsgs: 250, SentBytes: 3000, RecvMsgs: 250, RecvBytes: 1000},
		{Rank: 1, Peer: 0, RecvMsgs: 250, RecvBytes: 3000},
		{Rank: 1, Peer: 2, SentMsgs: 250, SentBytes: 2000, RecvMsgs: 0, RecvBytes: 0},
		{Rank: 2, Peer: 1, RecvMsgs: 250, RecvBytes: 2000},
		{Rank: 2, Peer: 3, SentMsgs: 250, SentBytes: 2000},
		{Rank: 3, Peer: 0, SentMsgs: 250, SentBytes: 1000},
		{Rank: 3, Peer: 2, RecvMsgs: 250, RecvBytes: 2000},
	}
	p.Regions = []profile.Region{
		{Path: "io", Visits: 4, WallNs: 2 * sec, MPINs: 0, Ranks: 1, RankMPI: spreadOf(0)},
		{Path: "solve", Visits: 40, WallNs: 20 * sec, MPINs: 7_500_000_000, Ranks: 4,
			RankMPI: spreadOf(s(1.6), s(2.7), s(1.3), s(1.9))},
		{Path: "solve/halo", Visits: 400, WallNs: 4 * sec, MPINs: 3 * sec, Ranks: 4,
			RankMPI: spreadOf(s(0.6), s(0.7), s(0.8), s(0.9))},
	}
	p.Events = []profile.Event{
		{Text: "checkpoint", Count: 8, Ranks: 4},
		{Text: "converged", Count: 1, Ranks: 1},
		{Text: "restart", Count: 8, Ranks: 2},
	}
	return p
}

// large is a synthetic 50-rank profile with more rows than the default Top
// in every table, for truncation.
func large() *profile.Profile {
	p := &profile.Profile{Meta: profile.Meta{
		Command: []string{"/opt/bench/big"}, NumRanks: 50, MPILibrary: "MPICH Version: 4.1.2",
		MPIVersion: "4.0", Family: "mpich", Tool: "0.1.0", Timer: "clock_gettime",
		StartNs: int64(1714564800) * sec, StopNs: int64(1714564800)*sec + 100*sec,
		Snapshot: 2, Partial: true,
	}}
	for h := range 10 {
		p.Meta.Hosts = append(p.Meta.Hosts, fmt.Sprintf("cn%03d", h))
	}
	for r := range 50 {
		state := "snapshot"
		if r == 7 {
			state = "signal"
		}
		p.Ranks = append(p.Ranks, profile.Rank{Rank: r, Host: fmt.Sprintf("cn%03d", r/5), PID: 4000 + r,
			AppNs: 100 * sec, MPINs: int64(1+(r*37)%50) * sec, Calls: int64(1000 + r), Threads: 1, State: state,
			Dropped: int64(r % 2)})
	}
	for k := range 30 {
		name := fmt.Sprintf("MPI_Func%02d", k)
		vals := make([]float64, 50)
		var total int64
		for r := range vals {
			vals[r] = float64(int64(k+1) * int64(r+1) * 1_000_000)
			total += int64(vals[r])
		}
		p.Funcs = append(p.Funcs, profile.Func{Name: name, Class: "p2p", Calls: int64(100 * (k + 1)),
			TimeNs: total, MinCallNs: 1000, MaxCallNs: 5_000_000, Bytes: int64(64 * k), RankTime: spreadOf(vals...)})
		p.Sites = append(p.Sites, profile.Site{Func: name, Loc: profile.Loc{Module: "/opt/bench/big", Offset: uint64(0x1000 + 16*k)},
			Region: "r", Calls: int64(100 * (k + 1)), TimeNs: total, MinNs: 1000, MaxNs: 5_000_000, Bytes: int64(64 * k),
			RankTime: spreadOf(vals...)})
		p.Hists = append(p.Hists, profile.Hist{Func: name, Bins: []profile.Bin{{Log2: 7, Calls: 1, Bytes: int64(64 * k), TimeNs: 1000}}})
		p.Comms = append(p.Comms, profile.Comm{Key: fmt.Sprintf("MPI_Comm_dup:%d@0", k), Size: 50, Creator: "MPI_Comm_dup",
			Members: 50, Calls: int64(k), TimeNs: int64(k) * 1_000_000})
		p.Regions = append(p.Regions, profile.Region{Path: fmt.Sprintf("phase%02d", k), Visits: 50, WallNs: 10 * sec,
			MPINs: int64(k) * sec / 10, Ranks: 50, RankMPI: spreadOf(1, 2, 3)})
		p.Events = append(p.Events, profile.Event{Text: fmt.Sprintf("event %02d", k), Count: int64(k % 7), Ranks: 1})
	}
	p.Regions = append(p.Regions, profile.Region{Path: "r", Visits: 50, WallNs: 50 * sec, MPINs: 40 * sec, Ranks: 50})
	for r := range 50 {
		p.Peers = append(p.Peers, profile.Peer{Rank: r, Peer: (r + 1) % 50, SentMsgs: 10, SentBytes: int64(100 * (r % 10))})
	}
	return p
}
