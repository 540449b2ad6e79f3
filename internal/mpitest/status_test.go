package mpitest_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// reportHeader runs `mpiscope report DIR` and returns its Status line and
// the whole output.
func reportHeader(t *testing.T, job string) (string, string) {
	t.Helper()
	bin := filepath.Join(mpitest.BuildDir(t), "bin", "mpiscope")
	out, err := exec.Command(bin, "report", job).CombinedOutput()
	if err != nil {
		t.Fatalf("mpiscope report %s: %v\n%s", job, err, out)
	}
	m := regexp.MustCompile(`(?m)^Status       : (.*)$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no Status line:\n%s", out)
	}
	return m[1], string(out)
}

// TestStatusSessions: a sessions-model run (MPI_Session_init, no
// MPI_Init: MPICH 4.0.2; Open MPI 4.1.4 has no sessions, as TestSessions)
// whose ranks each wrote their file at MPI_Session_finalize is final, not
// partial; one that ended in MPI_Abort is partial, never final.
func TestStatusSessions(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	prog := mpitest.Compile(t, f.MPICC, "session.c", t.TempDir())

	t.Run("finalize", func(t *testing.T) {
		p, job, res := f.Profile(t, 2, nil, prog)
		if !strings.Contains(res.Stdout, "session got 2.5") {
			t.Errorf("output %q", res.Stdout)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {40, 320}, "MPI_Recv": {40, 320}})
		_, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if info.Partial || p.Meta.Partial || info.Source != "ranks" || info.Ranks != 2 || info.Files != 2 {
			t.Errorf("load: %+v, meta partial %v", info, p.Meta.Partial)
		}
		st, out := reportHeader(t, job)
		if st != "final" {
			t.Errorf("Status %q, want final", st)
		}
		if strings.Contains(out, "NOTE: partial") || strings.Contains(out, "Rank states") {
			t.Errorf("a whole sessions run reported as partial:\n%s", out)
		}
	})

	t.Run("abort", func(t *testing.T) {
		job := filepath.Join(t.TempDir(), "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"},
			Preload: f.Lib(), Args: []string{prog, "abort"}})
		if res.Err == nil {
			t.Fatalf("MPI_Abort: mpirun succeeded\n%s", res.Stderr)
		}
		p, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Partial || !p.Meta.Partial || info.Source != "partial" {
			t.Errorf("load: %+v, meta partial %v", info, p.Meta.Partial)
		}
		st, _ := reportHeader(t, job)
		if !strings.HasPrefix(st, "partial: a rank called MPI_Abort") || strings.Contains(st, "final") {
			t.Errorf("Status %q, want partial: a rank called MPI_Abort...", st)
		}
	})
}

// TestStatusAbort: an MPI_Init program whose last rank calls MPI_Abort
// (ends.c) is reported partial, with why, on both families; the Status
// line never says final (it said "final; partial (...)").
func TestStatusAbort(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "safety/ends.c", dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"},
			Preload: f.Lib(), Args: []string{prog, "abort", dir}})
		if res.Err == nil {
			t.Fatalf("MPI_Abort: mpirun succeeded\n%s", res.Stderr)
		}
		p, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Partial || !p.Meta.Partial || info.Source != "partial" {
			t.Errorf("load: %+v", info)
		}
		st, _ := reportHeader(t, job)
		if !strings.HasPrefix(st, "partial: a rank called MPI_Abort") || strings.Contains(st, "final") {
			t.Errorf("Status %q, want partial: a rank called MPI_Abort...", st)
		}
		// The other rank, stopped in MPI_Recv, wrote its file too where the
		// launcher gives it time (Open MPI's SIGTERM; MPICH kills at once).
		if len(p.Ranks) == 2 && !strings.Contains(st, "1 rank stopped by a signal before MPI_Finalize") {
			t.Errorf("Status %q lacks the signalled rank", st)
		}
		if len(p.Ranks) == 1 && !strings.Contains(st, "1 of 2 ranks have no data") {
			t.Errorf("Status %q lacks the rank without data", st)
		}
	})
}
