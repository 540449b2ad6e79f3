package report

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// unrolled is a profile whose MPI_Barrier at known.c:61 was called from
// three addresses (a loop unrolled three times), once more from the same
// line in another region, and twice from a library without line
// information (two addresses that must stay two rows).
func unrolled() *profile.Profile {
	exe := "/tmp/known"
	loc := func(off uint64) profile.Loc {
		return profile.Loc{Module: exe, Offset: off, Function: "main", File: "/src/known.c", Line: 61}
	}
	site := func(l profile.Loc, region string, calls, timeNs, minNs, maxNs int64) profile.Site {
		return profile.Site{Func: "MPI_Barrier", Loc: l, Region: region, Calls: calls, TimeNs: timeNs, MinNs: minNs,
			MaxNs: maxNs, RankTime: spreadOf(float64(timeNs)/2, float64(timeNs)/2)}
	}
	return &profile.Profile{
		Meta:  profile.Meta{NumRanks: 2},
		Ranks: []profile.Rank{{Rank: 0, AppNs: sec, MPINs: 100_000_000}, {Rank: 1, AppNs: sec, MPINs: 100_000_000}},
		Funcs: []profile.Func{{Name: "MPI_Barrier", Calls: 3000 + 10 + 40, TimeNs: 200_000_000}},
		Sites: []profile.Site{
			site(loc(0x1180), "", 1000, 30_000_000, 2_000, 900_000),
			site(profile.Loc{Module: "/usr/lib/libx.so", Offset: 0x10}, "", 20, 1_000_000, 1_000, 100_000),
			site(loc(0x11a0), "", 1000, 50_000_000, 1_500, 700_000),
			site(loc(0x11c0), "", 1000, 40_000_000, 3_000, 950_000),
			site(profile.Loc{Module: "/usr/lib/libx.so", Offset: 0x40}, "", 20, 2_000_000, 1_000, 100_000),
			site(loc(0x11c0), "r", 10, 77_000_000, 10_000, 9_000_000),
		},
	}
}

// TestCallsiteMerge: the three addresses of known.c:61 outside any region
// are one row of 3000 calls, 120 ms, min 1.5 us and max 950 us; the same
// line in region r and the two unsymbolized addresses stay rows of their
// own. JSON keeps every address in sites, each naming its row.
func TestCallsiteMerge(t *testing.T) {
	out := render(t, unrolled(), Text, Options{})
	if n := strings.Count(out, "main at known.c:61"); n != 2 {
		t.Errorf("%d rows at known.c:61, want 2 (one outside regions, one in r):\n%s", n, out)
	}
	got := strings.Join(fields(t, out, " 1  MPI_Barrier"), " ")
	if want := "1 MPI_Barrier main at known.c:61 - 3000 120.000 60.00 0 1.500 40.000 950.000"; got != want {
		t.Errorf("merged row = %q, want %q", got, want)
	}
	for _, s := range []string{"libx.so+0x10", "libx.so+0x40"} {
		if !strings.Contains(out, s) {
			t.Errorf("unsymbolized site %s merged away:\n%s", s, out)
		}
	}

	var d jsonDoc
	if err := json.Unmarshal([]byte(render(t, unrolled(), JSON, Options{})), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Sites) != 6 || len(d.Calls) != 4 {
		t.Fatalf("%d sites, %d callsites; want 6 and 4", len(d.Sites), len(d.Calls))
	}
	c := d.Calls[0]
	if c.Calls != 3000 || c.TimeNs != 120_000_000 || c.MinNs != 1_500 || c.MaxNs != 950_000 ||
		fmt.Sprint(c.Sites) != "[1 3 4]" {
		t.Errorf("callsite 1 = %+v", c)
	}
	for i, want := range []int{1, 2, 1, 1, 3, 4} {
		if d.Sites[i].Callsite != want {
			t.Errorf("site %d in callsite %d, want %d", i+1, d.Sites[i].Callsite, want)
		}
	}
	if d.Sites[2].Loc.Offset != 0x11a0 {
		t.Errorf("site 3 address %#x, want 0x11a0", d.Sites[2].Loc.Offset)
	}
}

// TestDemangledNames: names from the symbol table of a C++ or gfortran
// program without debug information are shown demangled, in every format.
func TestDemangledNames(t *testing.T) {
	p := unrolled()
	p.Sites = p.Sites[:2]
	p.Sites[0].Loc = profile.Loc{Module: "/opt/lmp", Offset: 0x99, Function: "_ZN9LAMMPS_NS9CommBrick12reverse_commEv"}
	p.Sites[1].Loc = profile.Loc{Module: "/opt/f", Offset: 0x42, Function: "__solver_MOD_step"}
	for _, f := range []Format{Text, JSON, CSV} {
		out := render(t, p, f, Options{})
		for _, want := range []string{"LAMMPS_NS::CommBrick::reverse_comm()", "solver::step"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", f, want, out)
			}
		}
		if strings.Contains(out, "_ZN9") || strings.Contains(out, "_MOD_") {
			t.Errorf("%v shows a mangled name:\n%s", f, out)
		}
	}
}

// TestHeaderLabels: MPICH's library version line has a tab, shown as a
// space; region times say they are summed over ranks, with the mean per
// rank beside them (solve: 20 s over 4 ranks is 5 s per rank).
func TestHeaderLabels(t *testing.T) {
	p := fixture()
	p.Meta.MPILibrary = "MPICH Version:\t4.0.2"
	out := render(t, p, Text, Options{})
	if !strings.Contains(out, "MPI library  : MPICH Version: 4.0.2\n") {
		t.Errorf("MPI library line:\n%s", out)
	}
	if strings.Contains(out, `\t`) {
		t.Errorf("literal \\t in the report:\n%s", out)
	}
	if !strings.Contains(out, "sums over ranks, /rank means") {
		t.Errorf("regions heading does not say times are summed over ranks:\n%s", out)
	}
	if got := strings.Join(fields(t, out, "solve   "), " "); got != "solve 40 4 20.000 5.000 7.500 1.875 37.50 0.278" {
		t.Errorf("solve row = %q", got)
	}
}

// TestCSVPandas: every CSV file loads with pandas.read_csv, with as many
// rows as the profile has: the per-table files and the one long table.
func TestCSVPandas(t *testing.T) {
	// Debian's python3-pandas lives beside Debian's /usr/bin/python3; a
	// python3 earlier on PATH (pyenv, a virtualenv) may not see it.
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		python = "python3"
	}
	if err := exec.Command(python, "-c", "import pandas").Run(); err != nil {
		mpitest.Skip(t, "python3 with pandas (Debian python3-pandas) not installed: %v", err)
	}
	dir := t.TempDir()
	want := map[string]int{}
	for _, c := range []struct {
		name string
		p    *profile.Profile
	}{{"fixture", fixture()}, {"large", large()}, {"empty", &profile.Profile{}}, {"unrolled", unrolled()}, {"busy", busyFixture()}} {
		paths, err := WriteCSVDir(filepath.Join(dir, c.name), c.p, Options{Source: "/tmp/job", Notes: []string{"a, \"note\""}})
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			want[path] = -1 // checked below for a few
		}
		want[filepath.Join(dir, c.name, "funcs.csv")] = len(c.p.Funcs)
		want[filepath.Join(dir, c.name, "ranks.csv")] = len(c.p.Ranks)
		want[filepath.Join(dir, c.name, "sites.csv")] = len(c.p.Sites)
		want[filepath.Join(dir, c.name, "meta.csv")] = 1
		long := filepath.Join(dir, c.name+".csv")
		if err := os.WriteFile(long, []byte(render(t, c.p, CSV, Options{})), 0o666); err != nil {
			t.Fatal(err)
		}
		want[long] = -1
	}
	want[filepath.Join(dir, "unrolled", "callsites.csv")] = 4
	want[filepath.Join(dir, "busy", "in_progress.csv")] = 2
	want[filepath.Join(dir, "busy", "recording_off.csv")] = 1
	want[filepath.Join(dir, "fixture", "in_progress.csv")] = 0
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	script := `import sys, pandas
for p in sys.argv[1:]:
    print(p, len(pandas.read_csv(p, keep_default_na=False)))
`
	out, err := exec.Command(python, append([]string{"-c", script}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pandas.read_csv: %v\n%s", err, out)
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		n, _ := strconv.Atoi(f[len(f)-1])
		got[f[0]] = n
	}
	for p, n := range want {
		g, ok := got[p]
		if !ok || n >= 0 && g != n {
			t.Errorf("%s: pandas read %d rows (found %v), want %d", p, g, ok, n)
		}
	}
	if len(got) != len(want) || len(want) < 5*(16+1) {
		t.Errorf("pandas read %d files of %d", len(got), len(want))
	}
}
