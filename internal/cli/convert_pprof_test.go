package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// goPprof runs go tool pprof with args and returns its output.
func goPprof(t *testing.T, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		mpitest.Skip(t, "go not on PATH: %v", err)
	}
	cmd := exec.Command(gobin, append([]string{"tool", "pprof"}, args...)...)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir(), "PPROF_BINARY_PATH=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// topFlat parses go tool pprof -top: flat value per node, its unit suffix
// cut.
func topFlat(t *testing.T, out, unit string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	v, pc := `(\d+)(?:`+unit+`)?`, `\s+[0-9.e+-]+%\s+`
	re := regexp.MustCompile(`(?m)^\s*` + v + pc + `[0-9.e+-]+%\s+\d+(?:` + unit + `)?` + pc + `(\S+)\s*$`)
	for _, sm := range re.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseInt(sm[1], 10, 64)
		m[sm[2]] = v
	}
	return m
}

// TestConvertPprofSample: the bundled sample on 2 ranks, converted with
// --pprof; go tool pprof -top lists each of its MPI functions with the
// report's exact time (ns), calls and bytes, and nothing else but main
// (their caller, flat 0); -traces puts each MPI function above its source
// line in main (MPI_Allreduce above sample.c:45, 400 calls, in region
// solver).
func TestConvertPprofSample(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, mpitest.Testdata("../../examples/sample.c"), dir)
		p, job, _ := f.Profile(t, 2, nil, prog)
		so, se, code := run("convert", "--pprof", job)
		pb := filepath.Join(job, "profile.pb.gz")
		if code != 0 || so != "" || !strings.Contains(se, pb) {
			t.Fatalf("convert --pprof: exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
		}
		for _, c := range []struct{ index, unit string }{{"mpi_time", "ns"}, {"calls", ""}, {"bytes", "B"}} {
			args := []string{"-top", "-nodefraction=0", "-sample_index=" + c.index, pb}
			if c.unit != "" {
				args = append([]string{"-unit=" + c.unit}, args...)
			}
			out := goPprof(t, args...)
			got := topFlat(t, out, c.unit)
			want := map[string]int64{"main": 0}
			for _, fn := range p.Funcs {
				v := map[string]int64{"mpi_time": fn.TimeNs, "calls": fn.Calls, "bytes": fn.Bytes}[c.index]
				if v != 0 {
					want[fn.Name] = v
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d nodes, want %d:\n%s", c.index, len(got), len(want), out)
			}
			for k, v := range want {
				if g, ok := got[k]; !ok || g != v {
					t.Errorf("%s of %s: pprof shows %d (listed: %v), the report %d", c.index, k, g, ok, v)
				}
			}
			if c.index == "mpi_time" && len(want) < 8 {
				t.Errorf("only %d functions in the profile: %v", len(want), want)
			}
		}
		out := goPprof(t, "-traces", "-lines", "-sample_index=calls", pb)
		for _, want := range []string{
			`(?m)^\s+region:\s+solver\n\s+400\s+MPI_Allreduce\n\s+main \S*/sample\.c:45$`,
			`(?m)^\s+region:\s+solver\n\s+400\s+MPI_Waitall\n\s+main \S*/sample\.c:43$`,
			`(?m)^-+\+-+\n\s+2\s+MPI_Barrier\n\s+main \S*/sample\.c:52$`,
		} {
			if !regexp.MustCompile(want).MatchString(out) {
				t.Errorf("pprof -traces does not match %s:\n%s", want, out)
			}
		}
		// A .mps file and -o: the same profile.
		pb2 := filepath.Join(dir, "x.pb.gz")
		if _, se, code := run("convert", "--pprof", "-o", pb2, filepath.Join(job, profile.FinalFile)); code != 0 {
			t.Fatalf("convert --pprof -o: exit %d: %s", code, se)
		}
		a, _ := os.ReadFile(pb)
		b, _ := os.ReadFile(pb2)
		if len(a) == 0 || string(a) != string(b) {
			t.Errorf("the .mps file converts to %d bytes, its job directory to %d", len(b), len(a))
		}
	})
}

// TestConvertPprofErrors: a directory without a profile is an error that
// names it and writes nothing.
func TestConvertPprofErrors(t *testing.T) {
	dir := t.TempDir()
	_, se, code := run("convert", "--pprof", dir)
	if code != 1 || !strings.Contains(se, dir) {
		t.Errorf("empty directory: exit %d, stderr %q", code, se)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %d files in %s", len(ents), dir)
	}
	_, se, code = run("convert", "--pprof", "--otf2", dir)
	if code != 2 || !strings.Contains(se, "give one of --otf2, --perfetto and --pprof") {
		t.Errorf("two formats: exit %d, stderr %q", code, se)
	}
}

// TestConvertPprofRanks: a directory of rank files (a snapshot, or a job
// that did not finish) converts with each sample labelled by its rank,
// the samples of rank r holding its own calls; a final profile's samples
// carry no rank.
func TestConvertPprofRanks(t *testing.T) {
	dir := t.TempDir()
	for r := 0; r < 3; r++ {
		n := int64(10 * (r + 1))
		p := &profile.Profile{
			Meta:  profile.Meta{NumRanks: 3, Command: []string{"./app"}, Snapshot: 1},
			Ranks: []profile.Rank{{Rank: r, State: "snapshot", Calls: n}},
			Funcs: []profile.Func{{Name: "MPI_Send", Calls: n, TimeNs: 100 * n, Bytes: 8 * n}},
			Sites: []profile.Site{{Func: "MPI_Send", Loc: profile.Loc{Module: "/bin/app", Offset: 0x10, Function: "main", File: "/src/app.c", Line: 5},
				Calls: n, TimeNs: 100 * n, Bytes: 8 * n}},
		}
		if err := profile.WriteFile(profile.RankFile(dir, r), p); err != nil {
			t.Fatal(err)
		}
	}
	so, se, code := run("convert", "--pprof", "-o", "-", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se)
	}
	q, err := pprof.Parse(strings.NewReader(so))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][3]int64{}
	for _, s := range q.Sample {
		rk := s.Label["rank"]
		if len(rk) != 1 || s.Location[0].Line[0].Function.Name != "MPI_Send" || s.Location[1].Line[0].Line != 5 {
			t.Fatalf("sample %v: rank label %v, stack %v", s.Value, rk, s.Location)
		}
		v := got[rk[0]]
		got[rk[0]] = [3]int64{v[0] + s.Value[0], v[1] + s.Value[1], v[2] + s.Value[2]}
	}
	want := map[string][3]int64{"0": {10, 1000, 80}, "1": {20, 2000, 160}, "2": {30, 3000, 240}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("per rank %v, want %v", got, want)
	}
	if !slices.Contains(q.Comments, "3 ranks") || !slices.Contains(q.Comments, "snapshot 1 (taken while the job ran)") {
		t.Errorf("comments %q", q.Comments)
	}

	job := twoRanks(t)
	so, _, _ = run("convert", "--pprof", "-o", "-", job)
	if q, err = pprof.Parse(strings.NewReader(so)); err != nil {
		t.Fatal(err)
	}
	for _, s := range q.Sample {
		if len(s.Label) != 0 {
			t.Errorf("final profile: sample %v labelled %v", s.Value, s.Label)
		}
	}
	if len(q.Sample) != 1 || q.Sample[0].Value[0] != 2000 {
		t.Errorf("final profile: %d samples", len(q.Sample))
	}
}

// TestConvertPprofSnapshot: the flush snapshot of testdata/progs/pcontrol.c
// (2 ranks; per rank 10 barriers, 20 allreduces in region outer and 30 in
// outer/inner before MPI_Pcontrol(2)) converts with rank labels: go tool
// pprof -tagfocus selects one rank's calls, and one region's.
func TestConvertPprofSnapshot(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "pcontrol.c", t.TempDir())
		_, job, _ := f.Profile(t, 2, nil, prog)
		snap := profile.SnapshotDir(job, 1)
		if _, se, code := run("convert", "--pprof", snap); code != 0 || !strings.Contains(se, "labelled by rank, from 2 rank files") {
			t.Fatalf("convert --pprof %s: exit %d: %s", snap, code, se)
		}
		pb := filepath.Join(snap, "profile.pb.gz")
		for _, c := range []struct {
			focus string
			want  map[string]int64
		}{
			{"rank=^1$", map[string]int64{"MPI_Barrier": 10, "MPI_Allreduce": 50}},
			{"rank=^0$", map[string]int64{"MPI_Barrier": 10, "MPI_Allreduce": 50}},
			{"region=^outer/inner$", map[string]int64{"MPI_Allreduce": 60}},
		} {
			out := goPprof(t, "-top", "-nodefraction=0", "-sample_index=calls", "-tagfocus="+c.focus, pb)
			got := topFlat(t, out, "")
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("-tagfocus=%s: %s %d calls, want %d:\n%s", c.focus, k, got[k], v, out)
				}
			}
		}
	})
}
