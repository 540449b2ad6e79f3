package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

// changed is fixture() run again on 8 ranks, rebuilt (every address
// moved), with a larger -n: MPI_Send's line 77 makes 600 more calls of
// 1,024 bytes (+0.6 s), MPI_Allreduce takes 1 s less, MPI_Barrier is
// gone and MPI_Bcast is new (main.c:20, 16 calls of 64 bytes, 0.2 s), the
// split communicator is no longer made; the rest is unchanged.
func changed() *profile.Profile {
	p := fixture()
	p.Meta.Command = []string{"./solver", "-n", "256", "--out", "my file.dat"}
	p.Meta.NumRanks = 8
	p.Meta.MPILibrary = "Open MPI v4.1.6"
	// Rank 0 makes the changes below: 600 + 16 - 8 calls, 0.6 + 0.2 - 1 -
	// 0.5 s of MPI time.
	p.Ranks[0].Calls += 608
	p.Ranks[0].MPINs -= 700_000_000
	for r := 4; r < 8; r++ {
		p.Ranks = append(p.Ranks, profile.Rank{Rank: r, AppNs: 10 * sec, State: "final"})
	}
	for i := range p.Sites {
		p.Sites[i].Loc.Offset += 0x100
	}
	var funcs []profile.Func
	for _, f := range p.Funcs {
		switch f.Name {
		case "MPI_Allreduce":
			f.TimeNs -= sec
		case "MPI_Barrier":
			continue
		case "MPI_Send":
			f.Calls += 600
			f.Bytes += 600 * 1024
			f.TimeNs += 600_000_000
		}
		funcs = append(funcs, f)
	}
	p.Funcs = append([]profile.Func{{Name: "MPI_Bcast", Class: "coll", Calls: 16, TimeNs: 200_000_000, Bytes: 1024}}, funcs...)
	var sites []profile.Site
	for _, s := range p.Sites {
		switch {
		case s.Func == "MPI_Allreduce":
			s.TimeNs -= sec
		case s.Func == "MPI_Barrier":
			continue
		case s.Func == "MPI_Send" && s.Loc.Line == 77:
			s.Calls += 600
			s.Bytes += 600 * 1024
			s.TimeNs += 600_000_000
		}
		sites = append(sites, s)
	}
	p.Sites = append(sites, profile.Site{Func: "MPI_Bcast", Loc: profile.Loc{Module: "/home/user/solver/solver", Offset: 0x1300,
		Function: "main", File: "/home/user/solver/main.c", Line: 20}, Calls: 16, TimeNs: 200_000_000, Bytes: 1024})
	p.Hists[0].Bins[0].TimeNs -= sec
	p.Hists[2].Bins = append(p.Hists[2].Bins, profile.Bin{Log2: 11, Calls: 600, Bytes: 600 * 1024, TimeNs: 600_000_000})
	p.Hists = append([]profile.Hist{{Func: "MPI_Bcast", Bins: []profile.Bin{{Log2: 7, Calls: 16, Bytes: 1024, TimeNs: 200_000_000}}}}, p.Hists...)
	p.Comms = p.Comms[1:]
	p.Comms[1].Calls += 600
	p.Comms[1].Bytes += 600 * 1024
	p.Comms[1].TimeNs += 600_000_000
	return p
}

func renderDiff(t *testing.T, a, b *profile.Profile, f Format, o DiffOptions) string {
	t.Helper()
	var w bytes.Buffer
	if err := WriteDiff(&w, a, b, f, o); err != nil {
		t.Fatal(err)
	}
	return w.String()
}

func TestDiffGolden(t *testing.T) {
	o := DiffOptions{SourceA: "/tmp/a", SourceB: "/tmp/b"}
	per := o
	per.PerRank = true
	top := o
	top.Top = 2
	top.NotesB = []string{"partial profile: 7 of 8 ranks (missing: 3)"}
	for _, c := range []struct {
		file string
		f    Format
		o    DiffOptions
	}{
		{"diff.txt", Text, o},
		{"diff_per_rank.txt", Text, per},
		{"diff_top.txt", Text, top},
		{"diff.json", JSON, o},
	} {
		testutil.Golden(t, filepath.Join("testdata", c.file), []byte(renderDiff(t, fixture(), changed(), c.f, c.o)))
	}
}

// TestDiffKnown checks the golden's numbers by construction, in JSON.
func TestDiffKnown(t *testing.T) {
	var d struct {
		Differ  []string
		Summary map[string]jsonDiffVal
		Funcs   []jsonDiffRow
		Sites   []jsonDiffRow `json:"callsites"`
		Comms   []jsonDiffRow
		Sizes   []jsonDiffRow
	}
	if err := json.Unmarshal([]byte(renderDiff(t, fixture(), changed(), JSON, DiffOptions{})), &d); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Differ, ","); got != "rank count,command line,MPI library" {
		t.Errorf("differ %q", got)
	}
	key := func(r jsonDiffRow) string {
		k := r.Func + r.Comm
		if r.Line != nil {
			k += ":" + filepath.Base(*r.File) + ":" + itoa(int64(*r.Line))
		}
		if r.Module != nil {
			k += "@" + filepath.Base(*r.Module)
		}
		if r.Log2 != nil {
			k += "/" + itoa(int64(*r.Log2))
		}
		return k
	}
	type want struct{ dtime, dcalls, dbytes float64 }
	check := func(name string, rows []jsonDiffRow, w map[string]want, order []string) {
		var got []string
		for _, r := range rows {
			k := key(r)
			got = append(got, k)
			x, ok := w[k]
			if !ok {
				t.Errorf("%s: unexpected row %s", name, k)
				continue
			}
			if r.TimeNs.Change != x.dtime || r.Calls.Change != x.dcalls || r.Bytes.Change != x.dbytes {
				t.Errorf("%s %s: change %v ns, %v calls, %v bytes; want %v", name, k, r.TimeNs.Change, r.Calls.Change, r.Bytes.Change, x)
			}
		}
		if strings.Join(got, " ") != strings.Join(order, " ") {
			t.Errorf("%s: rows %v, want %v", name, got, order)
		}
	}
	check("funcs", d.Funcs, map[string]want{
		"MPI_Allreduce": {-1e9, 0, 0}, "MPI_Send": {6e8, 600, 614400}, "MPI_Barrier": {-5e8, -8, 0}, "MPI_Bcast": {2e8, 16, 1024},
	}, []string{"MPI_Allreduce", "MPI_Send", "MPI_Barrier", "MPI_Bcast"})
	check("callsites", d.Sites, map[string]want{
		"MPI_Allreduce:solve.c:42": {-1e9, 0, 0}, "MPI_Send:halo.c:77": {6e8, 600, 614400},
		"MPI_Barrier@libfoo.so.1": {-5e8, -8, 0}, "MPI_Bcast:main.c:20": {2e8, 16, 1024},
	}, []string{"MPI_Allreduce:solve.c:42", "MPI_Send:halo.c:77", "MPI_Barrier@libfoo.so.1", "MPI_Bcast:main.c:20"})
	check("comms", d.Comms, map[string]want{
		"MPI_Comm_split:4@0": {-4.5e9, -400, -3200}, "world": {6e8, 600, 614400},
	}, []string{"MPI_Comm_split:4@0", "world"})
	check("sizes", d.Sizes, map[string]want{
		"MPI_Allreduce/4": {-1e9, 0, 0}, "MPI_Send/11": {6e8, 600, 614400}, "MPI_Bcast/7": {2e8, 16, 1024},
	}, []string{"MPI_Allreduce/4", "MPI_Send/11", "MPI_Bcast/7"})
	if s := d.Summary["app_ns"]; s.A != 40e9 || s.B != 80e9 || *s.ChangePct != 100 {
		t.Errorf("app time %+v, want 40 s -> 80 s, +100%%", s)
	}
	if s := d.Funcs[3]; s.TimeNs.ChangePct != nil {
		t.Errorf("MPI_Bcast, new in B: change %% %v, want null", *s.TimeNs.ChangePct)
	}

	// -per-rank: A's values divided by 4, B's by 8; MPI_Recv, the same
	// total in both, halves per rank.
	d.Funcs = nil
	if err := json.Unmarshal([]byte(renderDiff(t, fixture(), changed(), JSON, DiffOptions{PerRank: true})), &d); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range d.Funcs {
		if r.Func == "MPI_Recv" {
			found = true
			if r.Calls.A != 250 || r.Calls.B != 125 || r.TimeNs.A != 0.5e9 || r.TimeNs.B != 0.25e9 || *r.Calls.ChangePct != -50 {
				t.Errorf("MPI_Recv per rank: calls %+v, time %+v", r.Calls, r.TimeNs)
			}
		}
	}
	if !found {
		t.Errorf("MPI_Recv not in the per-rank diff")
	}
}

// TestDiffSelf: a run against itself shows no change, in text and JSON.
func TestDiffSelf(t *testing.T) {
	for _, perRank := range []bool{false, true} {
		txt := renderDiff(t, fixture(), fixture(), Text, DiffOptions{PerRank: perRank})
		if n := strings.Count(txt, "(no change)\n"); n != 4 || strings.Contains(txt, "NOTE") || strings.Contains(txt, "+") {
			t.Errorf("per rank %v: %d tables without change, want 4:\n%s", perRank, n, txt)
		}
		js := renderDiff(t, fixture(), fixture(), JSON, DiffOptions{PerRank: perRank})
		for _, empty := range []string{`"differ": []`, `"funcs": []`, `"callsites": []`, `"comms": []`, `"sizes": []`} {
			if !strings.Contains(js, empty) {
				t.Errorf("per rank %v: JSON lacks %s:\n%s", perRank, empty, js)
			}
		}
	}
	// Empty profiles: nothing to compare, no error.
	txt := renderDiff(t, &profile.Profile{}, nil, Text, DiffOptions{})
	if n := strings.Count(txt, "(none in either run)"); n != 4 {
		t.Errorf("empty profiles: %d empty tables, want 4:\n%s", n, txt)
	}
	var w bytes.Buffer
	if err := WriteDiff(&w, fixture(), fixture(), CSV, DiffOptions{}); err == nil {
		t.Errorf("CSV diff: no error")
	}
}
