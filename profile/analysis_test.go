package profile

import (
	"reflect"
	"testing"
)

func sampleAnalysis() *Analysis {
	return &Analysis{
		Ranks: []int{0, 1}, Events: 40, Calls: 20, Seconds: 0.5, MPISeconds: 0.25, Messages: 6, Unmatched: 1, Colls: 2,
		Patterns: []AnalysisPattern{{Pattern: "late_sender", Seconds: 0.02, Instances: 1, ByRank: []float64{0, 0.02}},
			{Pattern: "wait_barrier", ByRank: []float64{0, 0}}},
		Rows: []AnalysisRow{{Pattern: "late_sender", Rank: 1, Func: "MPI_Recv", Callsite: "waits.c:40", Caller: "main",
			Comm: "MPI_COMM_WORLD", Seconds: 0.02, Instances: 1}},
		Path: AnalysisPath{Seconds: 0.5, EndRank: 1, StartRank: 0, Jumps: 1, ByRank: []float64{0.3, 0.2}, Computation: 0.45, MPI: 0.05,
			Funcs:     []AnalysisShare{{Func: "MPI_Recv", Seconds: 0.05}},
			Callsites: []AnalysisShare{{Func: "MPI_Recv", Callsite: "waits.c:40", Caller: "main", Seconds: 0.05}}},
		Delays:   []AnalysisDelay{{Rank: 0, Func: "MPI_Send", Callsite: "waits.c:38", Caller: "main", Seconds: 0.02, Short: 0.015, Long: 0.005, Instances: 1}},
		Warnings: []string{"a warning"},
	}
}

// TestAnalysisSection: the analysis section reads back as written, a
// merge keeps the first profile's, and a profile without one has none.
func TestAnalysisSection(t *testing.T) {
	p := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 0, State: "final"}, {Rank: 1, State: "final"}}, Analysis: sampleAnalysis()}
	q, err := Unmarshal(Marshal(p), "test")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Analysis, p.Analysis) {
		t.Errorf("read back %+v\nwant %+v", q.Analysis, p.Analysis)
	}
	other := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 2, State: "final"}}, Analysis: &Analysis{Calls: 7}}
	m := MergeAll([]*Profile{p, other})
	if !reflect.DeepEqual(m.Analysis, p.Analysis) {
		t.Errorf("merged: %+v", m.Analysis)
	}
	m.Analysis.Rows[0].Seconds = 9
	if p.Analysis.Rows[0].Seconds == 9 {
		t.Errorf("the merge shares its input's rows")
	}
	p.Analysis = nil
	if q, err = Unmarshal(Marshal(p), "test"); err != nil || q.Analysis != nil {
		t.Errorf("no analysis: read %+v, %v", q.Analysis, err)
	}
	// Cut anywhere inside: an error, never a panic.
	p.Analysis = sampleAnalysis()
	b := Marshal(p)
	for n := len(b) - 1; n > len(b)-300 && n > 0; n-- {
		if _, err := Unmarshal(b[:n], "cut"); err == nil {
			t.Fatalf("cut at %d of %d: no error", n, len(b))
		}
	}
}
