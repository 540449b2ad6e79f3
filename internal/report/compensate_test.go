package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestCompensationReport: the text, JSON and CSV reports show the
// measured and compensated figures side by side, and nothing of it
// without compensation.
func TestCompensationReport(t *testing.T) {
	r := profile.Rank{Rank: 0, AppNs: 900e6, MPINs: 800e6, Calls: 10}
	funcs := []profile.Func{{Name: "MPI_Recv", Class: "p2p", Calls: 10, TimeNs: 800e6, RankTime: profile.SpreadOf(0, 800e6)}}
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 1}, Ranks: []profile.Rank{r}, Funcs: funcs}
	plain := text(p, Options{})
	p.CompFuncs, p.CompRanks = profile.Compensate(r, funcs, map[string]int64{"MPI_Recv": 450e6}, profile.CompRank{CallNs: 40e6, InNs: 50, CollNs: 9000, Calls: 10, DelayNs: 400e6})
	txt := text(p, Options{})
	for _, want := range []string{"Overhead compensation", "Compensation: on.", "40000000.0 ns per call outside MPI",
		// rank 0: per call, calls, subtracted, app, app comp., MPI, MPI comp. (ms)
		"0     40000000.0     10     400.000  900.000    500.000  800.000    350.000",
		"MPI_Recv     10   800.000      350.000    -450.000"} {
		if !strings.Contains(txt, want) {
			t.Errorf("report.txt lacks %q:\n%s", want, txt)
		}
	}
	if strings.Contains(plain, "compensation") {
		t.Errorf("a report without compensation mentions it:\n%s", plain)
	}
	b, err := jsonBytes(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Compensation struct {
			Ranks []map[string]float64 `json:"ranks"`
			Funcs []struct {
				Func   string `json:"func"`
				TimeNs int64  `json:"time_ns"`
				CompNs int64  `json:"comp_ns"`
			} `json:"funcs"`
		} `json:"compensation"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if c := d.Compensation; len(c.Ranks) != 1 || c.Ranks[0]["app_ns"] != 900e6 || c.Ranks[0]["app_comp_ns"] != 500e6 ||
		c.Ranks[0]["subtracted_ns"] != 400e6 || c.Ranks[0]["mpi_comp_ns"] != 350e6 ||
		len(c.Funcs) != 1 || c.Funcs[0].TimeNs != 800e6 || c.Funcs[0].CompNs != 350e6 {
		t.Errorf("JSON compensation: %+v", c)
	}
	tables := map[string]*csvTable{}
	for _, tb := range csvTables(p, Options{}) {
		tables[tb.name] = tb
	}
	if tb := tables["comp_ranks"]; tb == nil || len(tb.rows) != 1 || strings.Join(tb.rows[0], ",") != "0,40000000,50,9000,10,400000000,900000000,500000000,800000000,350000000" {
		t.Errorf("CSV comp_ranks: %+v", tb)
	}
	if tb := tables["comp_funcs"]; tb == nil || len(tb.rows) != 1 || tb.rows[0][1] != "800000000" || tb.rows[0][2] != "350000000" {
		t.Errorf("CSV comp_funcs: %+v", tb)
	}
	p.CompRanks, p.CompFuncs = nil, nil
	for _, tb := range csvTables(p, Options{}) {
		if strings.HasPrefix(tb.name, "comp_") {
			t.Errorf("CSV table %s without compensation", tb.name)
		}
	}
}
