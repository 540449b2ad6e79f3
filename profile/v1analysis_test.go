package profile

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// v1AnalysisFile is a profile with the analysis section (section 14) as
// mpiscope wrote it on 2026-11-26, kept as it was written:
// testdata/README.md has the recipe. Every later version must read its
// analysis to exactly v1AnalysisWant, written out by hand below.
const v1AnalysisFile = "testdata/v1-analysis.mps"

// waits.c's late-sender case, 2 ranks: rank 0 computes 20 ms before each
// of its 5 MPI_Send, rank 1 waits in MPI_Recv (as that run's clocks had
// it: 97 ms in all).
var v1AnalysisWant = &Analysis{
	Ranks: []int{0, 1}, Events: 10, Calls: 10, Seconds: 0.6393447450078125, MPISeconds: 0.14116089115625, Messages: 5,
	Patterns: []AnalysisPattern{
		{Pattern: "late_sender", Seconds: 0.096990258640625, Instances: 5, ByRank: []float64{0, 0.096990258640625}},
		{Pattern: "late_receiver", ByRank: []float64{0, 0}},
		{Pattern: "wait_nxn", ByRank: []float64{0, 0}},
		{Pattern: "wait_barrier", ByRank: []float64{0, 0}},
		{Pattern: "late_broadcast", ByRank: []float64{0, 0}},
		{Pattern: "early_reduce", ByRank: []float64{0, 0}},
	},
	Rows: []AnalysisRow{{Pattern: "late_sender", Rank: 1, Func: "MPI_Recv", Callsite: "/tmp/rep-pin/waits.c:124", Caller: "main",
		Comm: "MPI_COMM_WORLD", Seconds: 0.096990258640625, Instances: 5}},
	Path: AnalysisPath{Seconds: 0.6193629490468749, EndRank: 1, StartRank: 0, Jumps: 1,
		ByRank: []float64{0.6070342088203124, 0.0123287402265625}, Computation: 0.6069390776484375, MPI: 0.0124238713984375,
		Funcs: []AnalysisShare{{Func: "MPI_Recv", Seconds: 0.0123287402265625}, {Func: "MPI_Send", Seconds: 9.5131171875e-05}},
		Callsites: []AnalysisShare{
			{Func: "MPI_Recv", Callsite: "/tmp/rep-pin/waits.c:124", Caller: "main", Seconds: 0.0123287402265625},
			{Func: "MPI_Send", Callsite: "/tmp/rep-pin/waits.c:122", Caller: "main", Seconds: 9.5131171875e-05}}},
	Delays: []AnalysisDelay{{Rank: 0, Func: "MPI_Send", Callsite: "/tmp/rep-pin/waits.c:122", Caller: "main",
		Seconds: 0.096990258640625, Short: 0.096990258640625, Instances: 5}},
}

// TestReadV1AnalysisFile: the pinned file's analysis reads to exactly
// v1AnalysisWant, and the rest of the file reads.
func TestReadV1AnalysisFile(t *testing.T) {
	p, info, err := Load(v1AnalysisFile)
	if err != nil {
		t.Fatal(err)
	}
	if info.Partial || p.Meta.NumRanks != 2 || len(p.Funcs) == 0 {
		t.Errorf("info %+v, %d ranks, %d functions", info, p.Meta.NumRanks, len(p.Funcs))
	}
	// Written before the one-sided counts were kept (2026-11-28): none.
	if p.Analysis != nil && p.Analysis.RMA != nil {
		t.Errorf("one-sided counts %+v in a file written without them", p.Analysis.RMA)
	}
	if !reflect.DeepEqual(p.Analysis, v1AnalysisWant) {
		t.Errorf("read %+v\nwant %+v", p.Analysis, v1AnalysisWant)
	}
	// It writes back to a file that reads the same.
	q, err := Unmarshal(Marshal(p), "again")
	if err != nil || !reflect.DeepEqual(q.Analysis, v1AnalysisWant) {
		t.Errorf("written again: %+v, %v", q.Analysis, err)
	}
}

// v1AnalysisRMAFile is a profile with the analysis's one-sided counts
// (section 17) as mpiscope wrote it on 2026-11-28 (testdata/README.md):
// rma.c's efence case on 3 ranks, two fences an iteration for 5
// iterations, none unmatched.
const v1AnalysisRMAFile = "testdata/v1-analysis-rma.mps"

// TestReadV1AnalysisRMAFile: the pinned file's counts read as the program
// makes them, and the file writes back to the same bytes.
func TestReadV1AnalysisRMAFile(t *testing.T) {
	b, err := os.ReadFile(v1AnalysisRMAFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Unmarshal(b, v1AnalysisRMAFile)
	if err != nil {
		t.Fatal(err)
	}
	if p.Analysis == nil || p.Analysis.RMA == nil || *p.Analysis.RMA != (AnalysisRMA{Fences: 10}) || len(p.Analysis.Ranks) != 3 {
		t.Fatalf("analysis %+v", p.Analysis)
	}
	if !bytes.Equal(Marshal(p), b) {
		t.Errorf("written again, the file differs")
	}
}
