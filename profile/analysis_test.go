package profile

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
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
		RMA:      &AnalysisRMA{Fences: 10, Epochs: 5, Locks: 300, Unmatched: 1},
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

// body is the sections of an encoded profile (between its header and its
// checksum).
func body(t *testing.T, b []byte) []byte {
	t.Helper()
	rest := b[len(magic):]
	_, n := binary.Uvarint(rest) // version
	l, m := binary.Uvarint(rest[n:])
	return rest[n+m : n+m+int(l)]
}

// TestAnalysisRMASection: the one-sided counts are section 17, its four
// uvarints in order, written after the compensation section and only with
// them; they read back, a merge copies them; a section 17 without an
// analysis section, or cut short, is a format error naming it.
func TestAnalysisRMASection(t *testing.T) {
	p := &Profile{Meta: Meta{NumRanks: 2}, Ranks: []Rank{{Rank: 0, State: "final"}}, Analysis: sampleAnalysis(),
		CompRanks: []CompRank{{Rank: 0, Calls: 1}}}
	b := body(t, Marshal(p))
	want := section(17, cat(uv(10), uv(5), uv(300), uv(1)))
	if !bytes.HasSuffix(b, want) {
		t.Errorf("the body does not end with section 17 %x:\n%x", want, b)
	}
	q, err := Unmarshal(Marshal(p), "rma")
	if err != nil || q.Analysis == nil || !reflect.DeepEqual(q.Analysis.RMA, &AnalysisRMA{Fences: 10, Epochs: 5, Locks: 300, Unmatched: 1}) {
		t.Fatalf("read back %+v, %v", q.Analysis, err)
	}
	m := MergeAll([]*Profile{q})
	q.Analysis.RMA.Locks = 7
	if m.Analysis.RMA == nil || m.Analysis.RMA.Locks != 300 {
		t.Errorf("merged %+v (the merge must copy the counts)", m.Analysis.RMA)
	}
	// Zero counts are written (the analysis kept them); none, not.
	p.Analysis.RMA = &AnalysisRMA{}
	if b := body(t, Marshal(p)); !bytes.HasSuffix(b, section(17, cat(uv(0), uv(0), uv(0), uv(0)))) {
		t.Errorf("zero counts not written: %x", b)
	}
	p.Analysis.RMA = nil
	noRMA := body(t, Marshal(p))
	if q, err := Unmarshal(Marshal(p), "none"); err != nil || q.Analysis.RMA != nil {
		t.Errorf("without counts: read %+v, %v", q.Analysis, err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"no analysis", frame(1, section(17, cat(uv(1), uv(2), uv(3), uv(4)))), "analysis one-sided section without an analysis section"},
		{"short", frame(1, cat(noRMA, section(17, cat(uv(1), uv(2), uv(3))))), "analysis one-sided section"},
		{"long", frame(1, cat(noRMA, section(17, cat(uv(1), uv(2), uv(3), uv(4), uv(5))))), "1 unexpected bytes at end of analysis one-sided section"},
	} {
		_, err := Unmarshal(tc.data, "h.mps")
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "h.mps") {
			t.Errorf("%s: %v, want an error naming h.mps with %q", tc.name, err, tc.msg)
		}
	}
}
