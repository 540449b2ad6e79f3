package pprofconv

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	mps "github.com/mpiscope/mpiscope/profile"
)

// job is a 2-rank profile: MPI_Send at two callsites (one of them in a
// region, one unsymbolized), MPI_Barrier at one callsite that accounts for
// 3 of its 5 calls, MPI_Init without a callsite.
func job() *mps.Profile {
	return &mps.Profile{
		Meta:  mps.Meta{Command: []string{"./app", "-n", "3"}, NumRanks: 2, MPILibrary: "Lib\t1.0", Tool: "0.1.0", StartNs: 1e18, StopNs: 1e18 + 5e9},
		Ranks: []mps.Rank{{Rank: 0}, {Rank: 1}},
		Funcs: []mps.Func{
			{Name: "MPI_Barrier", Calls: 5, TimeNs: 500, Bytes: 0},
			{Name: "MPI_Init", Calls: 2, TimeNs: 7000},
			{Name: "MPI_Send", Calls: 30, TimeNs: 3000, Bytes: 240},
		},
		Sites: []mps.Site{
			{Func: "MPI_Barrier", Loc: mps.Loc{Module: "/bin/app", Offset: 0x1100, Function: "main", File: "/src/app.c", Line: 9}, Calls: 3, TimeNs: 300},
			{Func: "MPI_Send", Loc: mps.Loc{Module: "/bin/app", Offset: 0x1234, Function: "_ZN3foo3barEv", File: "/src/app.cc", Line: 12}, Region: "solver/halo", Calls: 20, TimeNs: 2500, Bytes: 160},
			{Func: "MPI_Send", Loc: mps.Loc{Module: "/lib/libx.so", Offset: 0x99}, Calls: 10, TimeNs: 500, Bytes: 80},
		},
	}
}

// roundTrip writes p and parses it as pprof does.
func roundTrip(t *testing.T, p *mps.Profile) *profile.Profile {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	if b.Len() < 2 || b.Bytes()[0] != 0x1f || b.Bytes()[1] != 0x8b {
		t.Fatalf("not gzip-compressed")
	}
	q, err := profile.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// traces renders each sample as "values: frame <- frame ... {labels}".
func traces(q *profile.Profile) []string {
	var out []string
	for _, s := range q.Sample {
		var fr []string
		for _, l := range s.Location {
			for _, ln := range l.Line {
				f := ln.Function
				x := f.Name
				if f.Filename != "" {
					x += fmt.Sprintf(" %s:%d", f.Filename, ln.Line)
				}
				if l.Mapping != nil {
					x += fmt.Sprintf(" [%s+%#x]", l.Mapping.File, l.Address)
				}
				fr = append(fr, x)
			}
		}
		line := fmt.Sprint(s.Value) + ": " + strings.Join(fr, " <- ")
		if len(s.Label) > 0 || len(s.NumLabel) > 0 {
			line += fmt.Sprintf(" %v%v", s.Label, s.NumLabel)
		}
		out = append(out, line)
	}
	slices.Sort(out)
	return out
}

func TestConvert(t *testing.T) {
	q := roundTrip(t, job())
	var types []string
	for _, st := range q.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "calls/count mpi_time/nanoseconds bytes/bytes" || q.DefaultSampleType != "mpi_time" {
		t.Errorf("sample types %q, default %q", got, q.DefaultSampleType)
	}
	want := []string{
		"[10 500 80]: MPI_Send <- libx.so+0x99 [/lib/libx.so+0x99]",
		"[2 200 0]: MPI_Barrier <- (unknown callsite)",
		"[2 7000 0]: MPI_Init <- (unknown callsite)",
		"[20 2500 160]: MPI_Send <- foo::bar() /src/app.cc:12 [/bin/app+0x1234] map[region:[solver/halo]]map[]",
		"[3 300 0]: MPI_Barrier <- main /src/app.c:9 [/bin/app+0x1100]",
	}
	if got := traces(q); !slices.Equal(got, want) {
		t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Per function the samples add up to the function's totals.
	sums := map[string][3]int64{}
	for _, s := range q.Sample {
		n := s.Location[0].Line[0].Function.Name
		v := sums[n]
		sums[n] = [3]int64{v[0] + s.Value[0], v[1] + s.Value[1], v[2] + s.Value[2]}
	}
	for _, f := range job().Funcs {
		if got := sums[f.Name]; got != [3]int64{f.Calls, f.TimeNs, f.Bytes} {
			t.Errorf("%s: samples sum to %v, want %d calls, %d ns, %d bytes", f.Name, got, f.Calls, f.TimeNs, f.Bytes)
		}
	}
	if q.TimeNanos != 1e18 || q.DurationNanos != 5e9 {
		t.Errorf("time %d, duration %d", q.TimeNanos, q.DurationNanos)
	}
	wantC := []string{"command: ./app -n 3", "2 ranks", "MPI library: Lib 1.0", "converted by mpiscope 0.1.0"}
	if !slices.Equal(q.Comments, wantC) {
		t.Errorf("comments %q, want %q", q.Comments, wantC)
	}
	// The C++ name keeps its symbol as the system name.
	for _, f := range q.Function {
		if f.Name == "foo::bar()" && f.SystemName != "_ZN3foo3barEv" {
			t.Errorf("foo::bar(): system name %q", f.SystemName)
		}
	}
}

// TestConvertRank: a profile of one rank (a rank file) labels its samples
// with the rank; the header says when the profile is partial.
func TestConvertRank(t *testing.T) {
	p := job()
	p.Ranks = []mps.Rank{{Rank: 7}}
	p.Sites[1].Region = "" // a sample with the rank label only
	p.Meta.NumRanks = 8
	p.Meta.Partial = true
	q := roundTrip(t, p)
	for _, s := range q.Sample {
		if !slices.Equal(s.Label["rank"], []string{"7"}) {
			t.Errorf("sample %v: rank label %v, want [7]", s.Value, s.Label["rank"])
		}
	}
	if !slices.Contains(q.Comments, "8 ranks (1 in this profile)") || !slices.Contains(q.Comments, "partial profile (some ranks wrote their data before MPI_Finalize)") {
		t.Errorf("comments %q", q.Comments)
	}
}

// TestConvertEmpty: an empty profile is a valid, empty pprof profile.
func TestConvertEmpty(t *testing.T) {
	q := roundTrip(t, &mps.Profile{})
	if len(q.Sample) != 0 || len(q.SampleType) != 3 {
		t.Errorf("%d samples, %d sample types", len(q.Sample), len(q.SampleType))
	}
}
