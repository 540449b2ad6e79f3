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

// TestAnalysisRMAReport: the one-sided counts of the analysis in the text
// and HTML summary lines (as `mpiscope analyze` words them), JSON rma and
// CSV analysis_rma; zero counts show in JSON and CSV only; a profile
// written before they were kept (RMA nil) shows none of them.
func TestAnalysisRMAReport(t *testing.T) {
	p := analysisFixture()
	p.Analysis.RMA = &profile.AnalysisRMA{Fences: 10, Epochs: 5, Locks: 20, Unmatched: 3}
	const line = "2 ranks, 40 events, 20 calls, 0.500000 s traced; 6 messages and 2 collectives matched" +
		"; one-sided: 10 fences, 5 PSCW epoch pairs and 20 lock epochs matched, 3 unmatched"
	if txt := render(t, p, Text, Options{}); !strings.Contains(txt, line+"\n") {
		t.Errorf("text lacks %q:\n%s", line, txt)
	}
	if page := render(t, p, HTML, Options{}); !strings.Contains(page, line+".</p>") {
		t.Errorf("HTML lacks %q", line)
	}
	rma := func(p *profile.Profile) (*jsonAnalysisRMA, []string) {
		t.Helper()
		var doc struct {
			Analysis struct {
				RMA *jsonAnalysisRMA `json:"rma"`
			} `json:"analysis"`
		}
		if err := json.Unmarshal([]byte(render(t, p, JSON, Options{})), &doc); err != nil {
			t.Fatal(err)
		}
		var row []string
		for _, tb := range csvTables(p, Options{}) {
			if tb.name == "analysis_rma" {
				if strings.Join(tb.header, ",") != "fences_matched,pscw_epochs_matched,lock_epochs,unmatched" || len(tb.rows) != 1 {
					t.Errorf("analysis_rma: header %q, %d rows", tb.header, len(tb.rows))
				}
				row = tb.rows[0]
			}
		}
		return doc.Analysis.RMA, row
	}
	if j, row := rma(p); j == nil || *j != (jsonAnalysisRMA{Fences: 10, Epochs: 5, Locks: 20, Unmatched: 3}) || strings.Join(row, ",") != "10,5,20,3" {
		t.Errorf("JSON rma %+v, CSV analysis_rma %q", j, row)
	}
	// Field names as `mpiscope analyze -format json` has them.
	if js := render(t, p, JSON, Options{}); !strings.Contains(js, `"rma": {
      "fences_matched": 10,
      "pscw_epochs_matched": 5,
      "lock_epochs": 20,
      "unmatched": 3
    }`) {
		t.Errorf("JSON rma not as analyze writes it:\n%s", js)
	}
	p.Analysis.RMA = &profile.AnalysisRMA{}
	if txt := render(t, p, Text, Options{}); strings.Contains(txt, "one-sided") {
		t.Errorf("zero counts in the text:\n%s", txt)
	}
	if j, row := rma(p); j == nil || *j != (jsonAnalysisRMA{}) || strings.Join(row, ",") != "0,0,0,0" {
		t.Errorf("zero counts: JSON rma %+v, CSV analysis_rma %q", j, row)
	}
	p.Analysis.RMA = nil
	if j, row := rma(p); j != nil || row != nil {
		t.Errorf("no counts: JSON rma %+v, CSV analysis_rma %q", j, row)
	}
	if js := render(t, p, JSON, Options{}); strings.Contains(js, `"rma"`) {
		t.Errorf("no counts: JSON has rma")
	}
}
