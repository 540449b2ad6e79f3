package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

func analysisFixture() *profile.Profile {
	p := fixture()
	p.Analysis = &profile.Analysis{
		Ranks: []int{0, 1}, Events: 40, Calls: 20, Seconds: 0.5, MPISeconds: 0.25, Messages: 6, Colls: 2,
		Patterns: []profile.AnalysisPattern{{Pattern: "late_sender", Seconds: 0.1, Instances: 5, ByRank: []float64{0, 0.1}},
			{Pattern: "wait_barrier", ByRank: []float64{0, 0}}},
		Rows: []profile.AnalysisRow{{Pattern: "late_sender", Rank: 1, Func: "MPI_Recv", Callsite: "waits.c:40", Caller: "main",
			Comm: "MPI_COMM_WORLD", Seconds: 0.1, Instances: 5}},
		Path: profile.AnalysisPath{Seconds: 0.5, EndRank: 1, StartRank: 0, Jumps: 5, ByRank: []float64{0.3, 0.2}, Computation: 0.4, MPI: 0.1,
			Funcs:     []profile.AnalysisShare{{Func: "MPI_Recv", Seconds: 0.1}},
			Callsites: []profile.AnalysisShare{{Func: "MPI_Recv", Callsite: "waits.c:40", Caller: "main", Seconds: 0.1}}},
		Delays: []profile.AnalysisDelay{{Rank: 0, Func: "MPI_Send", Callsite: "waits.c:38", Caller: "main", Seconds: 0.1, Short: 0.06, Long: 0.04, Instances: 5}},
	}
	return p
}

// TestAnalysisReport: the analysis section in text, JSON and CSV, with
// its numbers; a profile without one shows none of it.
func TestAnalysisReport(t *testing.T) {
	p := analysisFixture()
	var b bytes.Buffer
	if err := Write(&b, p, Text, Options{}); err != nil {
		t.Fatal(err)
	}
	txt := b.String()
	for _, want := range []string{
		"Trace analysis (in the job, MPISCOPE_ANALYZE=1; times in s)",
		"2 ranks, 40 events, 20 calls, 0.500000 s traced; 6 messages and 2 collectives matched",
		"Late sender      0.100000   40.0          5",
		"Late sender     1  MPI_Recv  waits.c:40  MPI_COMM_WORLD  0.100000          5",
		"Critical path: 0.500000 s, from rank 0 to rank 1, 5 moves between ranks; computation 0.400000 s (80.0 %), MPI 0.100000 s",
		"   0  0.300000    60.0",
		"   0  MPI_Send  waits.c:38  0.100000    0.060000   0.040000      5",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
	b.Reset()
	if err := Write(&b, p, JSON, Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Analysis *jsonAnalysis `json:"analysis"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if a := doc.Analysis; a == nil || a.Patterns[0].Seconds != 0.1 || a.Rows[0].Callsite != "waits.c:40" || a.Path.ByRank[1] != 0.2 ||
		a.Delays[0].Long != 0.04 || a.Path.Jumps != 5 {
		t.Errorf("JSON analysis %+v", doc.Analysis)
	}
	tables := map[string][][]string{}
	for _, tb := range csvTables(p, Options{}) {
		tables[tb.name] = tb.rows
	}
	if r := tables["analysis_delays"]; len(r) != 1 || strings.Join(r[0], ",") != "0,MPI_Send,waits.c:38,main,0.1,0.06,0.04,5" {
		t.Errorf("analysis_delays %q", r)
	}
	if r := tables["analysis_patterns"]; len(r) != 6 || strings.Join(r[2], ",") != "late_sender,1,0.1," {
		t.Errorf("analysis_patterns %q", r)
	}
	if r := tables["analysis_path"]; len(r) != 3 || strings.Join(r[0], ",") != ",0.5,0,1,5,0.4,0.1" {
		t.Errorf("analysis_path %q", r)
	}
	p.Analysis = nil
	b.Reset()
	Write(&b, p, Text, Options{})
	if strings.Contains(b.String(), "Trace analysis") {
		t.Errorf("a profile without analysis shows the section")
	}
	for _, tb := range csvTables(p, Options{}) {
		if strings.HasPrefix(tb.name, "analysis") {
			t.Errorf("a profile without analysis has CSV table %s", tb.name)
		}
	}
}
