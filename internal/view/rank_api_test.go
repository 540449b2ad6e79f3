package view

import (
	"fmt"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestRankSplit: /api/rank gives the rank's functions per communicator
// (by time) and its traffic per communicator other than WORLD, from the
// profile's RankFuncs and CommPeers; a profile without them gives empty
// lists.
func TestRankSplit(t *testing.T) {
	dir := t.TempDir()
	p := job(0, 1000)
	writeFinal(t, dir, p)
	h := New(dir, Options{}).Handler()
	type answer struct {
		Funcs []rankFuncJSON    `json:"funcs"`
		Comms []commPartnerJSON `json:"comm_partners"`
	}
	if a := decode[answer](t, get(t, h, "/api/rank?rank=2")); a.Funcs == nil || len(a.Funcs) != 0 || a.Comms == nil || len(a.Comms) != 0 {
		t.Errorf("without the split: %+v", a)
	}
	p.RankFuncs = []profile.RankFunc{
		{Rank: 1, Func: "MPI_Send", Comm: "world", Calls: 9, TimeNs: 9},
		{Rank: 2, Func: "MPI_Barrier", Comm: "Comm_split:2@0", Calls: 3, TimeNs: 100},
		{Rank: 2, Func: "MPI_Send", Comm: "world", Calls: 250, TimeNs: 3e9, Bytes: 2000},
		{Rank: 3, Func: "MPI_Send", Comm: "world", Calls: 7, TimeNs: 7},
	}
	p.CommPeers = []profile.CommPeer{
		{Rank: 2, Comm: "Comm_split:2@0", Peer: 0, SentMsgs: 5, SentBytes: 40},
		{Rank: 3, Comm: "Comm_split:2@1", Peer: 1, RecvMsgs: 5, RecvBytes: 40},
	}
	dir = t.TempDir()
	writeFinal(t, dir, p)
	h = New(dir, Options{}).Handler()
	a := decode[answer](t, get(t, h, "/api/rank?rank=2"))
	want := "{[{MPI_Send world 250 3000000000 2000} {MPI_Barrier Comm_split:2@0 3 100 0}] [{Comm_split:2@0 {0 5 40 0 0}}]}"
	if got := fmt.Sprint(a); got != want {
		t.Errorf("rank 2:\n%s\nwant\n%s", got, want)
	}
}

// TestRankAnalysis: /api/rank gives the rank's part of the trace analysis
// made in the job: its time on the critical path and share of it, its
// waiting per pattern and its rows; none without an analysis, or for a
// rank not analyzed.
func TestRankAnalysis(t *testing.T) {
	p := job(0, 1000)
	p.Analysis = &profile.Analysis{Ranks: []int{0, 1, 2, 3},
		Patterns: []profile.AnalysisPattern{{Pattern: "late_sender", Seconds: 0.3, Instances: 5, ByRank: []float64{0, 0.1, 0.2, 0}},
			{Pattern: "wait_barrier", Seconds: 0.05, Instances: 3, ByRank: []float64{0, 0, 0.05, 0}}},
		Rows: []profile.AnalysisRow{{Pattern: "late_sender", Rank: 2, Func: "MPI_Recv", Callsite: "a.c:9", Comm: "world", Seconds: 0.2, Instances: 3},
			{Pattern: "late_sender", Rank: 1, Func: "MPI_Recv", Callsite: "a.c:9", Comm: "world", Seconds: 0.1, Instances: 2}},
		Path: profile.AnalysisPath{Seconds: 2, ByRank: []float64{0.5, 0.5, 0.75, 0.25}}}
	dir := t.TempDir()
	writeFinal(t, dir, p)
	h := New(dir, Options{}).Handler()
	type answer struct {
		Analysis *rankAnalysisJSON `json:"analysis"`
	}
	a := decode[answer](t, get(t, h, "/api/rank?rank=2"))
	want := "&{0.75 37.5 [{late_sender 0.2} {wait_barrier 0.05}] [{late_sender MPI_Recv a.c:9 world 0.2 3}]}"
	if got := fmt.Sprint(a.Analysis); got != want {
		t.Errorf("rank 2:\n%s\nwant\n%s", got, want)
	}
	p.Analysis.Ranks = []int{0, 1}
	dir = t.TempDir()
	writeFinal(t, dir, p)
	if a := decode[answer](t, get(t, New(dir, Options{}).Handler(), "/api/rank?rank=2")); a.Analysis != nil {
		t.Errorf("rank 2 not analyzed: %+v", a.Analysis)
	}
}
