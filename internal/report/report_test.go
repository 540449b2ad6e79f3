package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

func render(t *testing.T, p *profile.Profile, f Format, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p, f, o); err != nil {
		t.Fatalf("Write(%v): %v", f, err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	notes := []string{"partial profile: 3 of 4 ranks (missing: 2)"}
	cases := []struct {
		file string
		p    *profile.Profile
		f    Format
		o    Options
	}{
		{"text.txt", fixture(), Text, Options{Source: "/tmp/job"}},
		{"text_notes.txt", fixture(), Text, Options{Source: "/tmp/job", Notes: notes, Top: 2}},
		{"fixture.json", fixture(), JSON, Options{Source: "/tmp/job", Notes: notes}},
		{"fixture.csv", fixture(), CSV, Options{Source: "/tmp/job", Notes: notes}},
		{"large.txt", large(), Text, Options{}},
		{"large_all.txt", large(), Text, Options{All: true}},
		{"empty.txt", &profile.Profile{}, Text, Options{}},
		{"empty.json", &profile.Profile{}, JSON, Options{}},
		{"empty.csv", &profile.Profile{}, CSV, Options{}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", c.file), []byte(render(t, c.p, c.f, c.o)))
		})
	}
}

func TestFormat(t *testing.T) {
	for _, f := range []Format{Text, JSON, CSV} {
		g, err := ParseFormat(strings.ToUpper(f.String()))
		if err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), g, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) succeeded")
	}
	if s := Format(9).String(); s != "Format(9)" {
		t.Errorf("Format(9).String() = %q", s)
	}
	if err := Write(&bytes.Buffer{}, fixture(), Format(9), Options{}); err == nil {
		t.Error("Write with a bad format succeeded")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestDerived(t *testing.T) {
	p := fixture()
	tot := computeTotals(p)
	if tot.appNs != 40*sec || tot.mpiNs != 8_001_000_000 || tot.calls != 4*603 {
		t.Fatalf("totals = %+v", tot)
	}
	if want := 20.0025; !near(tot.mpiPctMean, want) || !near(pct(tot.mpiNs, tot.appNs), want) {
		t.Errorf("MPI%% = %v (mean), %v (of sums), want %v", tot.mpiPctMean, pct(tot.mpiNs, tot.appNs), want)
	}
	send := p.Funcs[4]
	if got, want := spreadCOV(send.RankTime), math.Sqrt(0.0125)/0.25; !near(got, want) {
		t.Errorf("COV(MPI_Send) = %v, want %v", got, want)
	}
	if got := spreadMean(send.RankTime); !near(got, 0.25e9) {
		t.Errorf("mean(MPI_Send) = %v", got)
	}
	if got := spreadCOV(p.Funcs[3].RankTime); got != 0 {
		t.Errorf("COV of equal values = %v, want 0", got)
	}
	if got := spreadCOV(profile.Spread{}); got != 0 {
		t.Errorf("COV of empty spread = %v", got)
	}
	for log2, want := range map[int]string{0: "0", 1: "[1, 1]", 2: "[2, 3]", 11: "[1024, 2047]", 64: "[9223372036854775808, 18446744073709551615]"} {
		if got := sizeLabel(log2); got != want {
			t.Errorf("sizeLabel(%d) = %q, want %q", log2, got, want)
		}
	}
}

// fields finds the table line starting with prefix and returns its fields.
func fields(t *testing.T, text, prefix string) []string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return strings.Fields(l)
		}
	}
	t.Fatalf("no line starting with %q in\n%s", prefix, text)
	return nil
}

func TestTextNumbers(t *testing.T) {
	out := render(t, fixture(), Text, Options{})
	// Functions: MPI_Send 1000 calls, 1.000 s = 1000 ms, %App 2.50,
	// %MPI 12.50 (of 8.001 s), 8000 bytes, 1 ms per call, rank min 100 ms on
	// rank 0, mean 250, max 400 on rank 3, COV 0.447.
	got := fields(t, out, "MPI_Send ")
	want := []string{"MPI_Send", "p2p", "1000", "1000.000", "2.50", "12.50", "8000", "1000.000",
		"100.000", "(0)", "250.000", "400.000", "(3)", "0.447"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("MPI_Send row = %q, want %q", got, want)
	}
	if !strings.Contains(out, "Functions (by time; times in ms, per call in us)") {
		t.Error("functions heading does not name its units")
	}
	// The aggregate line: sums and MPI% of the sums.
	if got := fields(t, out, "   *"); strings.Join(got, " ") != "* 40.000 8.001 20.00 2412" {
		t.Errorf("aggregate row = %q", got)
	}
	// Functions are sorted by time.
	if a, s := strings.Index(out, "\nMPI_Allreduce "), strings.Index(out, "\nMPI_Send "); a < 0 || s < a {
		t.Error("MPI_Allreduce (4.5 s) not listed before MPI_Send (1 s)")
	}
	// Unsymbolized site shows module+offset; symbolized shows function at file:line.
	for _, s := range []string{"libfoo.so.1+0x1a2b", "solve at solve.c:42", "Start (UTC)  : 2024-05-01T12:00:00Z", "Duration     : 10.500 s", `"my file.dat"`} {
		if !strings.Contains(out, s) {
			t.Errorf("text report lacks %q", s)
		}
	}
	// Point-to-point sorted by bytes, ties by (rank, peer).
	i01, i12, i23 := strings.Index(out, "   0  ->     1"), strings.Index(out, "   1  ->     2"), strings.Index(out, "   2  ->     3")
	if !(i01 >= 0 && i01 < i12 && i12 < i23) {
		t.Errorf("peer order wrong: %d %d %d\n%s", i01, i12, i23, out)
	}
	if strings.Contains(out, "more; use --all") {
		t.Error("small report was truncated")
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("trailing space in %q", l)
		}
		for _, r := range l {
			if r > 0x7e || r < 0x20 {
				t.Errorf("non-ASCII in %q", l)
			}
		}
	}
}

func TestTruncation(t *testing.T) {
	out := render(t, fixture(), Text, Options{Top: 2})
	for _, s := range []string{
		"(3 more; use --all)",           // functions: 5 rows, 2 shown
		"(4 more; use --all)",           // callsites: 6 rows
		"(1 more functions; use --all)", // message sizes
		"(1 more; use --all)",           // communicators, regions, events
	} {
		if !strings.Contains(out, s) {
			t.Errorf("Top=2 report lacks %q", s)
		}
	}
	// 4 ranks <= 2*Top: all ranks are listed.
	if strings.Contains(out, "ranks elided") {
		t.Error("ranks elided with ranks <= 2*Top")
	}

	out = render(t, large(), Text, Options{Top: 3})
	if !strings.Contains(out, "... (44 ranks elided; showing the 3 highest and 3 lowest MPI%; use --all)") {
		t.Errorf("rank elision missing:\n%s", out)
	}
	// 1+(r*37)%50 seconds: highest is 50 s (rank 27), lowest 1 s (rank 0).
	if got := fields(t, out, "  27 "); got[4] != "50.00" {
		t.Errorf("highest rank row = %q", got)
	}
	if got := fields(t, out, "   0  cn000"); got[4] != "1.00" {
		t.Errorf("lowest rank row = %q", got)
	}
	if !strings.Contains(out, "(27 more; use --all)") {
		t.Error("functions not truncated to 3")
	}
	all := render(t, large(), Text, Options{All: true, Top: 3})
	if strings.Contains(all, "use --all") {
		t.Error("All report truncated")
	}
	if n := strings.Count(all, "\nMPI_Func"); n != 30+30 { // functions and message sizes
		t.Errorf("All report lists %d function rows, want 60", n)
	}
	for _, s := range []string{"Hosts        : 10 (cn000, cn001, cn002, cn003, cn004, cn005, cn006, cn007, ... 2 more)",
		"snapshot 2", "partial", "Rank states  : signal 1, snapshot 49", "Dropped      : 25 records"} {
		if !strings.Contains(all, s) {
			t.Errorf("large header lacks %q", s)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, p := range []*profile.Profile{fixture(), large(), {}} {
		out := render(t, p, JSON, Options{Top: 1})
		var d jsonDoc
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			t.Fatal(err)
		}
		again, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if string(again)+"\n" != out {
			t.Errorf("JSON does not round-trip:\n%s", testutil.Diff("first", "second", out, string(again)+"\n"))
		}
		if len(d.Funcs) != len(p.Funcs) || len(d.Sites) != len(p.Sites) {
			t.Errorf("JSON truncated: %d funcs, %d sites", len(d.Funcs), len(d.Sites))
		}
		// Arrays are [] rather than null.
		var generic map[string]any
		if err := json.Unmarshal([]byte(out), &generic); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"notes", "ranks", "funcs", "sites", "hists", "comms", "peers", "regions", "events"} {
			if _, ok := generic[k].([]any); !ok {
				t.Errorf("%q is %T, want an array", k, generic[k])
			}
		}
	}
	var d jsonDoc
	if err := json.Unmarshal([]byte(render(t, fixture(), JSON, Options{})), &d); err != nil {
		t.Fatal(err)
	}
	send := d.Funcs[4]
	if send.Name != "MPI_Send" || send.PctApp != 2.5 || send.MeanNs != 1e6 || send.COV != 0.447214 ||
		!near(send.PctMPI, 12.498438) {
		t.Errorf("MPI_Send = %+v", send)
	}
	if d.Ranks[1].MPIPct != 28.2525 || d.Totals.MPIPctMean != 20.0025 {
		t.Errorf("rank 1 mpi_pct %v, mean %v", d.Ranks[1].MPIPct, d.Totals.MPIPctMean)
	}
	if d.Sites[1].Location != "/usr/lib/libfoo.so.1+0x1a2b" || d.Hists[1].Bins[2].Hi != 2047 {
		t.Errorf("site/bin = %+v %+v", d.Sites[1], d.Hists[1].Bins[2])
	}
	if got := d.Regions[2].Funcs; len(got) != 2 || got[0].Func != "MPI_Recv" || got[1].TimeNs != sec {
		t.Errorf("solve/halo funcs = %+v", got)
	}
}

// TestCSV: the one-table form is a long table (table,row,column,value) that
// a strict reader reads with 4 fields per record, and the per-table files
// are rectangular tables, every table present, nothing truncated.
func TestCSV(t *testing.T) {
	out := render(t, large(), CSV, Options{Top: 1})
	r := csv.NewReader(strings.NewReader(out))
	recs, err := r.ReadAll() // FieldsPerRecord 0: every record as wide as the first
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "table,row,column,value" {
		t.Errorf("header = %q", recs[0])
	}
	// Untruncated: 50 ranks, 30 functions, regardless of Top.
	rows := map[string]map[string]bool{}
	for _, rec := range recs[1:] {
		if rows[rec[0]] == nil {
			rows[rec[0]] = map[string]bool{}
		}
		rows[rec[0]][rec[1]] = true
	}
	if len(rows["ranks"]) != 50 || len(rows["funcs"]) != 30 || len(rows["meta"]) != 1 {
		t.Errorf("long table: %d ranks, %d funcs, %d meta rows; want 50, 30, 1", len(rows["ranks"]), len(rows["funcs"]), len(rows["meta"]))
	}

	dir := t.TempDir()
	paths, err := WriteCSVDir(dir, large(), Options{Top: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(path), ".csv"))
	}
	want := "meta settings notes totals ranks funcs callsites sites message_sizes comms peers regions region_funcs events in_progress recording_off"
	if strings.Join(names, " ") != want {
		t.Errorf("tables = %q, want %q", names, want)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if filepath.Base(path) == "funcs.csv" && len(recs) != 1+30 {
			t.Errorf("funcs.csv has %d records, want 31", len(recs))
		}
	}

	// Fields that need it are quoted.
	p := fixture()
	p.Events[0].Text = "#1, \"odd\""
	recs, err = csv.NewReader(strings.NewReader(render(t, p, CSV, Options{}))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, rec := range recs {
		found = found || rec[0] == "events" && rec[3] == p.Events[0].Text
	}
	if !found {
		t.Error("event text with a comma and quotes lost")
	}
}

// TestCSVGoldenDir keeps the per-table files of the fixture.
func TestCSVGoldenDir(t *testing.T) {
	for _, tb := range csvTables(fixture(), Options{Source: "/tmp/job", Notes: []string{"partial profile: 3 of 4 ranks (missing: 2)"}}) {
		testutil.Golden(t, filepath.Join("testdata", "fixture_csv", tb.name+".csv"), tb.bytes())
	}
}

func TestEmpty(t *testing.T) {
	for _, f := range []Format{Text, JSON, CSV} {
		render(t, &profile.Profile{}, f, Options{})
		render(t, nil, f, Options{})
	}
	out := render(t, &profile.Profile{}, Text, Options{})
	for _, s := range []string{"MPI time per rank", "(no rank data)", "Functions", "(no MPI calls recorded)"} {
		if !strings.Contains(out, s) {
			t.Errorf("empty report lacks %q", s)
		}
	}
	if strings.Contains(out, "Top callsites") {
		t.Error("empty report shows callsites")
	}
	if s := Summary(&profile.Profile{}, "r.txt"); !strings.Contains(s, "no MPI calls recorded") {
		t.Errorf("empty Summary = %q", s)
	}
}

func TestSummary(t *testing.T) {
	s := Summary(fixture(), "/tmp/job/solver.mpiscope.txt")
	want := `mpiscope: solver on 4 ranks: MPI 20.0% of app time (mean over ranks)
mpiscope:   MPI_Allreduce   56.24% of MPI     4.500 s  400 calls
mpiscope:   MPI_Recv        25.00% of MPI     2.000 s  1000 calls
mpiscope:   MPI_Send        12.50% of MPI     1.000 s  1000 calls
mpiscope:   MPI_Barrier      6.25% of MPI  500.000 ms  8 calls
mpiscope:   MPI_Comm_split   0.01% of MPI    1.000 ms  4 calls
mpiscope: report: /tmp/job/solver.mpiscope.txt
`
	if s != want {
		t.Errorf("Summary:\n%s", testutil.Diff("want", "got", want, s))
	}
	l := Summary(large(), "x")
	if n := strings.Count(l, "\n"); n > 15 {
		t.Errorf("Summary has %d lines", n)
	}
	if !strings.Contains(l, "partial") || !strings.Contains(l, "records dropped") {
		t.Errorf("large Summary = %s", l)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteError(t *testing.T) {
	for _, f := range []Format{Text, JSON, CSV} {
		if err := Write(failWriter{}, fixture(), f, Options{}); err == nil || err.Error() != "disk full" {
			t.Errorf("Write(%v) to a failing writer = %v", f, err)
		}
	}
}
