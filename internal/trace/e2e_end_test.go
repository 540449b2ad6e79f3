package trace_test

// End-to-end tests of how a trace ends and how big it grows: runs that end
// without MPI_Finalize (MPI_Abort, SIGTERM, exit), the per-rank size bound
// (MPISCOPE_TRACE_MAX), functions left out (MPISCOPE_TRACE_EXCLUDE), the
// clock samples over a tree, and the sessions model.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// mpirunCmd is f's mpirun of prog on np ranks with the library preloaded.
func mpirunCmd(ctx context.Context, f mpitest.Family, np int, env map[string]string, args ...string) *exec.Cmd {
	a := []string{"-np", strconv.Itoa(np)}
	e := append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_rmaps_base_oversubscribe=1")
	for k, v := range env {
		e = append(e, k+"="+v)
	}
	if f.Name == "openmpi" {
		a = append(a, "--oversubscribe", "-x", "LD_PRELOAD="+f.Lib())
	} else {
		a = append(a, "-genv", "LD_PRELOAD", f.Lib())
	}
	cmd := exec.CommandContext(ctx, f.MPIRun, append(a, args...)...)
	cmd.Env = e
	return cmd
}

// walkAny walks a job's trace whatever its warnings (a run that did not
// finalize has some) and returns the calls per (rank, function).
func walkAny(t *testing.T, job string) (*collector, *trace.Job) {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	c := newCollector()
	if err := trace.NewWalker(j, trace.WalkOptions{}).Walk(c); err != nil {
		t.Fatal(err)
	}
	for _, b := range c.backwards {
		t.Errorf("out of time order: %s", b)
	}
	return c, j
}

// TestTraceEnds: a rank that ends without MPI_Finalize writes its trace
// buffers with its rank file: MPI_Abort (the aborting rank; with Open MPI
// the others too, on the SIGTERM it sends them), SIGTERM to mpirun (every
// rank), exit without MPI_Finalize (every rank that writes its rank file).
// Each rank of ends.c made 3 MPI_Barrier and 2 MPI_Allreduce before; the
// trace converts.
func TestTraceEnds(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, mode := range []string{"abort", "term", "exit"} {
			t.Run(mode, func(t *testing.T) {
				dir := t.TempDir()
				bin := mpitest.Compile(t, f.MPICC, "safety/ends.c", dir)
				job := filepath.Join(dir, "job")
				const np = 3
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				env := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_TRACE": "1"}
				arg := mode
				if mode == "term" {
					arg = "wait"
				}
				cmd := mpirunCmd(ctx, f, np, env, bin, arg, dir)
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				if mode == "term" {
					// Every rank has made its calls once its pid file is there.
					for r := 0; r < np; r++ {
						for {
							if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("pid.%d", r))); err == nil {
								break
							}
							if ctx.Err() != nil {
								t.Fatalf("no pid file of rank %d\n%s", r, out.String())
							}
							time.Sleep(10 * time.Millisecond)
						}
					}
					cmd.Process.Signal(syscall.SIGTERM)
				}
				cmd.Wait()
				// Which ranks must have written: those with a rank file
				// (MPICH kills the others with SIGKILL on MPI_Abort and
				// exit); on MPI_Abort at least the aborting rank.
				var wrote []int
				for r := 0; r < np; r++ {
					if _, err := os.Stat(profile.RankFile(job, r)); err == nil {
						wrote = append(wrote, r)
					}
				}
				if len(wrote) == 0 || (mode == "abort" && wrote[len(wrote)-1] != np-1) ||
					((mode == "term" || f.Name == "openmpi") && len(wrote) != np) {
					t.Fatalf("rank files of ranks %v\n%s", wrote, out.String())
				}
				c, j := walkAny(t, job)
				for _, r := range wrote {
					if b, a := c.calls[[2]any{r, "MPI_Barrier"}], c.calls[[2]any{r, "MPI_Allreduce"}]; b != 3 || a != 2 {
						t.Errorf("rank %d: %d MPI_Barrier and %d MPI_Allreduce traced, want 3 and 2", r, b, a)
					}
				}
				for _, r := range j.Ranks {
					if r.Complete {
						t.Errorf("rank %d: a final block, but the rank did not finalize", r.Header.Rank)
					}
				}
				if t.Failed() {
					t.Logf("%s", out.String())
				}
			})
		}
	})
}

// TestTraceMax: MPISCOPE_TRACE_MAX bounds a rank's trace file; beyond it
// tracing stops with a warning (stderr and the profile) and profiling goes
// on: 300,000 MPI_Comm_rank calls (3.6 MB of 12-byte records) with a 1M
// bound leave a file under 1 MiB, fewer traced calls, and every call in
// the profile.
func TestTraceMax(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		const n = 300000
		job, res := run(t, f, "poll.c", 1, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_MAX": "1M",
			"MPISCOPE_TRACE_BUFFER": "64K", "MPISCOPE_TRACE_COMPRESS": "off"}, strconv.Itoa(n), "0")
		st, err := os.Stat(trace.RankPath(job, 0))
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("trace file of %d bytes, over MPISCOPE_TRACE_MAX=1M", st.Size())
		}
		c, j := walkAny(t, job)
		if k := c.calls[[2]any{0, "MPI_Comm_rank"}]; k == 0 || k >= n {
			t.Errorf("%d MPI_Comm_rank traced, want some and fewer than %d", k, n)
		}
		if c.calls[[2]any{0, "MPI_Barrier"}] != 0 {
			t.Errorf("MPI_Barrier traced after the bound")
		}
		if !j.Ranks[0].Complete {
			t.Errorf("no final block")
		}
		if !strings.Contains(res.Stderr, "trace stopped at MPISCOPE_TRACE_MAX=1M") {
			t.Errorf("no warning on stderr:\n%s", res.Stderr)
		}
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		mpitest.Want(t, p, map[string][2]int64{"MPI_Comm_rank": {n, 0}, "MPI_Barrier": {1, 0}})
		found := false
		for _, s := range p.Meta.Settings {
			found = found || (s.Name == "warning" && strings.Contains(s.Value, "trace stopped at MPISCOPE_TRACE_MAX=1M"))
		}
		if !found {
			t.Errorf("no warning in the profile: %v", p.Meta.Settings)
		}
	})
}

// TestTraceExclude: MPI_Query_thread is left out of the trace by default and
// still profiled; MPISCOPE_TRACE_EXCLUDE=none traces it, a list of names
// replaces the default one.
func TestTraceExclude(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, tc := range []struct {
			exclude       string
			rank, local   int
			warnedUnknown bool
		}{
			{"", 100, 0, false},
			{"none", 100, 50, false},
			{"MPI_Comm_rank,MPI_No_such_function", 0, 50, true},
			{"default,MPI_Comm_rank", 0, 0, false},
		} {
			// Raw blocks: what is tested is what the wrappers record.
			env := map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_TRACE_COMPRESS": "off"}
			if tc.exclude != "" {
				env["MPISCOPE_TRACE_EXCLUDE"] = tc.exclude
			}
			job, res := run(t, f, "poll.c", 2, env, "100", "50")
			c, _ := walkAny(t, job)
			for r := 0; r < 2; r++ {
				if k, w, b := c.calls[[2]any{r, "MPI_Comm_rank"}], c.calls[[2]any{r, "MPI_Query_thread"}], c.calls[[2]any{r, "MPI_Barrier"}]; k != tc.rank || w != tc.local || b != 1 {
					t.Errorf("MPISCOPE_TRACE_EXCLUDE=%s: rank %d: %d MPI_Comm_rank, %d MPI_Query_thread, %d MPI_Barrier traced; want %d, %d, 1",
						tc.exclude, r, k, w, b, tc.rank, tc.local)
				}
			}
			if w := strings.Contains(res.Stderr, "MPI_No_such_function: not a function of this MPI library"); w != tc.warnedUnknown {
				t.Errorf("MPISCOPE_TRACE_EXCLUDE=%s: warning about an unknown name %v\n%s", tc.exclude, w, res.Stderr)
			}
			p, _, err := profile.Load(job)
			if err != nil {
				t.Fatal(err)
			}
			mpitest.Want(t, p, map[string][2]int64{"MPI_Query_thread": {100, 0}, "MPI_Comm_rank": {200, 0}})
		}
	})
}

// syncLine is what rank 0 prints of the clock samples with
// MPISCOPE_DEBUG_TIMING=1.
var syncLine = regexp.MustCompile(`mpiscope: trace clock sync: ranks=(\d+) syncs=([0-9.]+)ms,([0-9.]+)ms pings=(\d+)`)

// TestTraceSync: the clock samples are taken over a tree, all pairs of a
// step at once, with a few rounds each: on 8 ranks (4 per core here) rank
// 0 answers the pings of 3 ranks (1, 2, 4), at most 24 each, and each
// sample takes well under a second (one after the other, 10 to 200 pings
// per rank, they took 1.4-1.7 s at 4 ranks on 2 cores, up to 12 s with
// MPICH, whose waits do not yield). Each rank's offset, composed along its
// path to rank 0, is right to within its stated uncertainty: with
// MPISCOPE_TRACE_SKEW_NS=1000000 rank r's clock is exactly r ms ahead.
func TestTraceSync(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		const np, skew = 8, 1000000
		job, res := run(t, f, "poll.c", np, map[string]string{"MPISCOPE_TRACE": "1", "MPISCOPE_DEBUG_TIMING": "1",
			"MPISCOPE_TRACE_SKEW_NS": strconv.Itoa(skew)})
		m := syncLine.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no clock-sync timing on stderr:\n%s", res.Stderr)
		}
		if m[1] != strconv.Itoa(np) {
			t.Errorf("ranks=%s", m[1])
		}
		for _, s := range m[2:4] {
			if ms, _ := strconv.ParseFloat(s, 64); ms > 500 {
				t.Errorf("a clock sample took %s ms on %d ranks", s, np)
			}
		}
		if p, _ := strconv.Atoi(m[4]); p > 2*3*24 || p < 2*3 {
			t.Errorf("rank 0 answered %d pings in two samples, want 6 to 144", p)
		}
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Ranks) != np {
			t.Fatalf("%d rank files", len(j.Ranks))
		}
		for _, r := range j.Ranks {
			rk := r.Header.Rank
			if len(r.Syncs) != 2 {
				t.Errorf("rank %d: %d clock samples, want 2", rk, len(r.Syncs))
				continue
			}
			for _, s := range r.Syncs {
				err := s.OffsetNs + int64(rk)*skew
				if err < 0 {
					err = -err
				}
				if rk == 0 && (s.OffsetNs != 0 || s.RTTNs != 0) || float64(err) > float64(s.RTTNs)/2+1000 {
					t.Errorf("rank %d: offset %d ns (uncertainty %d ns), want %d", rk, s.OffsetNs, s.RTTNs/2, -int64(rk)*skew)
				}
			}
		}
		t.Logf("%s", m[0])
	})
}

// TestTraceSession: a program of the sessions model (MPICH; MPI_Init is
// never called) is traced with MPISCOPE_TRACE=1, each rank ending its own
// trace at MPI_Session_finalize, with a warning that its clocks are not
// synchronized; its 40 messages convert.
func TestTraceSession(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	dir := t.TempDir()
	prog := mpitest.Compile(t, f.MPICC, "session.c", dir)
	job := filepath.Join(dir, "job")
	res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_TRACE": "1"},
		Preload: f.Lib(), Args: []string{prog}, Dir: dir})
	if res.Err != nil || !strings.Contains(res.Stdout, "session got 2.5") {
		t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "sessions model: trace clocks are not synchronized") {
		t.Errorf("no warning about the clocks:\n%s", res.Stderr)
	}
	c, j := walkAny(t, job)
	if len(j.Ranks) != 2 {
		t.Fatalf("%d rank files", len(j.Ranks))
	}
	for _, r := range j.Ranks {
		if !r.Complete {
			t.Errorf("rank %d: no final block", r.Header.Rank)
		}
	}
	if s, r := c.calls[[2]any{0, "MPI_Send"}], c.calls[[2]any{1, "MPI_Recv"}]; s != 40 || r != 40 {
		t.Errorf("%d MPI_Send on rank 0, %d MPI_Recv on rank 1; want 40 each", s, r)
	}
	if len(c.sends) != 40 || len(c.recvs) != 40 {
		t.Errorf("%d sends, %d receives matched; want 40", len(c.sends), len(c.recvs))
	}
	for id, s := range c.sends {
		if r, ok := c.recvs[id]; !ok || s.Rank != 0 || r.Rank != 1 {
			t.Errorf("message %d: send %+v receive %+v", id, s, r)
		}
	}
}

// TestTraceSessionSnapshot: in the sessions model the snapshot signal
// works as after MPI_Init (SIGUSR1 to each rank while it waits outside
// MPI: snapshot-1 with both ranks' files; the signal was left to MPICH's
// own handler before), and the run then ends normally with a complete
// trace.
func TestTraceSessionSnapshot(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	dir := t.TempDir()
	prog := mpitest.Compile(t, f.MPICC, "trace/session_wait.c", dir)
	job := filepath.Join(dir, "job")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := mpirunCmd(ctx, f, 2, map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_TRACE": "1"}, prog, dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(filepath.Join(dir, "go"), nil, 0o666) // never leave the ranks waiting
	waitFile := func(p string) {
		t.Helper()
		for {
			if _, err := os.Stat(p); err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s did not appear\n%s", p, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for r := 0; r < 2; r++ {
		p := filepath.Join(dir, fmt.Sprintf("pid.%d", r))
		waitFile(p)
		b, _ := os.ReadFile(p)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		syscall.Kill(pid, syscall.SIGUSR1)
	}
	snap := profile.SnapshotDir(job, 1)
	waitFile(profile.RankFile(snap, 0))
	waitFile(profile.RankFile(snap, 1))
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o666)
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "session_wait done") {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	c, _ := walkAny(t, job)
	for r := 0; r < 2; r++ {
		if n := c.calls[[2]any{r, "MPI_Barrier"}]; n != 4 {
			t.Errorf("rank %d: %d MPI_Barrier traced, want 4", r, n)
		}
	}
}
