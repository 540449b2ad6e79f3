package mpitest_test

// End-to-end tests of crash safety and transparency (docs/safety.md): real
// MPI programs (testdata/progs/safety) under mpirun, ended by MPI_Abort, a
// signal, exit without MPI_Finalize; snapshots on a signal while a rank is
// blocked in MPI; exact counts with 8 threads under MPI_THREAD_MULTIPLE;
// identical results, error codes and output with and without mpiscope.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// run is an mpirun started in the background.
type run struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	done     chan struct{}
	waitErr  error
	cancel   context.CancelFunc
}

// start starts prog under f's mpirun with np ranks; preload says whether
// libmpiscope is preloaded. env adds variables (MPISCOPE_*), passed to the
// ranks. The run is killed after 90 s at the latest.
func start(t *testing.T, f mpitest.Family, np int, preload bool, env map[string]string, args ...string) *run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	a := []string{"-np", strconv.Itoa(np)}
	e := append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_rmaps_base_oversubscribe=1")
	for k, v := range env {
		e = append(e, k+"="+v)
	}
	switch f.Name {
	case "openmpi":
		a = append(a, "--oversubscribe")
		if preload {
			a = append(a, "-x", "LD_PRELOAD="+f.Lib())
		}
	case "mpich":
		if preload {
			a = append(a, "-genv", "LD_PRELOAD", f.Lib())
		}
	}
	r := &run{done: make(chan struct{}), cancel: cancel}
	r.cmd = exec.CommandContext(ctx, f.MPIRun, append(a, args...)...)
	r.cmd.Env = e
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", f.MPIRun, err)
	}
	go func() {
		r.waitErr = r.cmd.Wait()
		cancel()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait waits for the run to end and returns mpirun's exit code (-1 if it
// did not exit normally).
func (r *run) wait(t *testing.T) int {
	t.Helper()
	<-r.done
	var ee *exec.ExitError
	if r.waitErr != nil && !errors.As(r.waitErr, &ee) {
		t.Fatalf("mpirun: %v\nstdout:\n%s\nstderr:\n%s", r.waitErr, r.out.String(), r.err.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

// waitFor waits up to 30 s for every path to exist, failing the test with
// the run's output otherwise.
func waitFor(t *testing.T, r *run, paths ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range paths {
		for {
			if _, err := os.Stat(p); err == nil {
				break
			}
			select {
			case <-r.done:
				if _, err := os.Stat(p); err == nil {
					break
				}
				t.Fatalf("run ended before %s appeared (%v)\nstdout:\n%s\nstderr:\n%s", p, r.waitErr, r.out.String(), r.err.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not appear within 30 s\nstdout:\n%s\nstderr:\n%s", p, r.out.String(), r.err.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// pids reads the pid.<rank> files the program writes.
func pids(t *testing.T, r *run, dir string, np int) []int {
	t.Helper()
	var out []int
	for i := 0; i < np; i++ {
		p := filepath.Join(dir, "pid."+strconv.Itoa(i))
		waitFor(t, r, p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, n)
	}
	return out
}

func signal(t *testing.T, pids []int, sig syscall.Signal) {
	t.Helper()
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil {
			t.Fatalf("kill -%d %d: %v", sig, p, err)
		}
	}
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
}

// rankFile loads one rank's file and checks that it holds that rank alone
// in the given state.
func rankFile(t *testing.T, dir string, rank int, states ...string) *profile.Profile {
	t.Helper()
	path := profile.RankFile(dir, rank)
	p, _, err := profile.Load(path)
	if err != nil {
		t.Fatalf("rank %d: %v", rank, err)
	}
	if len(p.Ranks) != 1 || p.Ranks[0].Rank != rank {
		t.Fatalf("%s: ranks %+v", path, p.Ranks)
	}
	ok := false
	for _, s := range states {
		ok = ok || p.Ranks[0].State == s
	}
	if !ok {
		t.Errorf("%s: state %q, want one of %q", path, p.Ranks[0].State, states)
	}
	return p
}

// wantEnds checks the calls every mode of ends.c makes before it waits, on
// the given number of ranks: 3 MPI_Barrier and 2 MPI_Allreduce of 4 bytes
// each per rank, and no MPI_Recv or MPI_Send but those extra names. A
// receive in progress when the data was written counts as one call of 0
// bytes (profile.Busy; inFlight).
func wantEnds(t *testing.T, p *profile.Profile, ranks int64, extra map[string][2]int64) {
	t.Helper()
	want := map[string][2]int64{
		"MPI_Barrier":   {3 * ranks, 0},
		"MPI_Allreduce": {2 * ranks, 8 * ranks},
		"MPI_Recv":      {0, 0},
		"MPI_Send":      {0, 0},
	}
	for k, v := range extra {
		want[k] = v
	}
	mpitest.Want(t, p, want)
}

// inFlight is wantEnds' extra for n ranks blocked in MPI_Recv: n calls
// counted up to the time of writing, no bytes yet.
func inFlight(n int) map[string][2]int64 { return map[string][2]int64{"MPI_Recv": {int64(n), 0}} }

func setup(t *testing.T, f mpitest.Family, prog string) (bin, dir, job string) {
	dir = t.TempDir()
	bin = mpitest.Compile(t, f.MPICC, "safety/"+prog, dir)
	return bin, dir, filepath.Join(dir, "job")
}

func jobEnv(job string, more ...string) map[string]string {
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	for i := 0; i+1 < len(more); i += 2 {
		e[more[i]] = more[i+1]
	}
	return e
}

// TestSafetyAbort: one rank calls MPI_Abort while the others wait in
// MPI_Recv. The aborting rank writes its file in the wrapper; Open MPI
// then stops the others with SIGTERM, and they write theirs; MPICH kills
// them with SIGKILL, which leaves nothing to do. mpirun's exit code is the
// same as without mpiscope.
func TestSafetyAbort(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 3
		r := start(t, f, np, true, jobEnv(job), bin, "abort", dir)
		code := r.wait(t)
		plain := start(t, f, np, false, nil, bin, "abort", t.TempDir())
		if want := plain.wait(t); code != want {
			t.Errorf("mpirun exit code %d with mpiscope, %d without", code, want)
		}
		wantEnds(t, rankFile(t, job, np-1, "abort"), 1, nil)
		for rank := 0; rank < np-1; rank++ {
			_, err := os.Stat(profile.RankFile(job, rank))
			if f.Name == "mpich" && err != nil {
				continue // SIGKILL: no time given
			}
			wantEnds(t, rankFile(t, job, rank, "signal"), 1, inFlight(1))
		}
		p, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Partial || info.Source != "partial" || info.NumRanks != np {
			t.Errorf("load: %+v", info)
		}
		if f.Name == "openmpi" && len(info.Missing) != 0 {
			t.Errorf("missing ranks %v", info.Missing)
		}
		wantEnds(t, p, int64(info.Ranks), inFlight(info.Ranks-1))
	})
}

// TestSafetyTermJob: SIGTERM or SIGINT to mpirun while every rank waits
// (rank 0 in MPI_Recv). mpirun forwards a signal to the ranks; each writes
// its file, then dies of it. With Open MPI, mpirun's exit code is the same
// as without mpiscope. MPICH's exit code after a signal varies from run to
// run even without mpiscope (SIGTERM: 15 or 0; SIGINT: 2 or 255, and the
// ranks do not always get the SIGINT), so only the files are checked, and
// only for SIGTERM.
func TestSafetyTermJob(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}
		if f.Name == "mpich" {
			sigs = sigs[:1]
		}
		for _, sig := range sigs {
			t.Run(sig.String(), func(t *testing.T) {
				bin, dir, job := setup(t, f, "ends.c")
				const np = 3
				codes := map[bool]int{}
				for _, lib := range []bool{true, false} {
					d := filepath.Join(dir, fmt.Sprint(lib))
					os.Mkdir(d, 0o777)
					r := start(t, f, np, lib, jobEnv(job), bin, "wait", d)
					pids(t, r, d, np)
					r.cmd.Process.Signal(sig)
					codes[lib] = r.wait(t)
				}
				if codes[true] != codes[false] && f.Name == "openmpi" {
					t.Errorf("mpirun exit code %d with mpiscope, %d without", codes[true], codes[false])
				}
				for rank := 0; rank < np; rank++ {
					p := rankFile(t, job, rank, "signal")
					wantEnds(t, p, 1, inFlight(map[bool]int{true: 1}[rank == 0]))
					if !p.Meta.Partial {
						t.Errorf("rank %d: not marked partial", rank)
					}
				}
				p, info, err := profile.Load(job)
				if err != nil {
					t.Fatal(err)
				}
				if !info.Partial || len(info.Missing) != 0 || info.Ranks != np {
					t.Errorf("load: %+v", info)
				}
				wantEnds(t, p, np, inFlight(1))
			})
		}
	})
}

// TestSafetyTermRank: SIGTERM straight to one rank (rank 1, outside MPI).
// It writes its file and dies of SIGTERM: mpirun reports the same signal as
// without mpiscope.
func TestSafetyTermRank(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 2
		msgs := map[bool]string{}
		for _, lib := range []bool{true, false} {
			d := filepath.Join(dir, fmt.Sprint(lib))
			os.Mkdir(d, 0o777)
			r := start(t, f, np, lib, jobEnv(job), bin, "wait", d)
			pid := pids(t, r, d, np)[1]
			signal(t, []int{pid}, syscall.SIGTERM)
			code := r.wait(t)
			all := r.out.String() + r.err.String()
			switch {
			case strings.Contains(all, "signal 15"):
				msgs[lib] = fmt.Sprintf("exit %d, signal 15", code)
			case strings.Contains(all, "EXIT CODE: 15") || strings.Contains(all, "Terminated (signal 15)"):
				msgs[lib] = fmt.Sprintf("exit %d, signal 15", code)
			default:
				msgs[lib] = fmt.Sprintf("exit %d: %s", code, all)
			}
		}
		if msgs[true] != msgs[false] || !strings.Contains(msgs[false], "signal 15") {
			t.Errorf("with mpiscope: %s\nwithout: %s", msgs[true], msgs[false])
		}
		wantEnds(t, rankFile(t, job, 1, "signal"), 1, nil)
	})
}

// TestSafetyTermChained: the application's own SIGTERM handler (installed
// before MPI_Init) runs and the run goes on to MPI_Finalize, with the same
// output as without mpiscope and a complete final profile.
func TestSafetyTermChained(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 2
		outs := map[bool]string{}
		for _, lib := range []bool{true, false} {
			d := filepath.Join(dir, fmt.Sprint(lib))
			os.Mkdir(d, 0o777)
			r := start(t, f, np, lib, jobEnv(job), bin, "chain", d)
			signal(t, pids(t, r, d, np), syscall.SIGTERM)
			if code := r.wait(t); code != 0 {
				t.Fatalf("exit code %d\n%s%s", code, r.out.String(), r.err.String())
			}
			outs[lib] = r.out.String()
		}
		if outs[true] != outs[false] || outs[false] != "ends chain: 2 ranks, sum 2, got 42, usr1 0\n" {
			t.Errorf("output with mpiscope %q, without %q", outs[true], outs[false])
		}
		p, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if info.Source != "final" || info.Partial {
			t.Errorf("load: %+v", info)
		}
		wantEnds(t, p, np, map[string][2]int64{"MPI_Barrier": {4 * np, 0}, "MPI_Recv": {1, 4}, "MPI_Send": {1, 4}})
	})
}

// TestSafetyExit: every rank calls exit(0) without MPI_Finalize; each
// writes its file at exit (or on the SIGTERM Open MPI sends when it sees a
// rank gone). MPICH kills the other ranks with SIGKILL as soon as one has
// exited, so only ranks that finished writing by then have a file.
func TestSafetyExit(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 3
		r := start(t, f, np, true, jobEnv(job), bin, "exit", dir)
		r.wait(t)
		found := 0
		for rank := 0; rank < np; rank++ {
			if _, err := os.Stat(profile.RankFile(job, rank)); err != nil && f.Name == "mpich" {
				continue
			}
			wantEnds(t, rankFile(t, job, rank, "exit", "signal"), 1, nil)
			found++
		}
		if found == 0 {
			t.Fatalf("no rank file\n%s", r.err.String())
		}
		_, info, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !info.Partial || info.Ranks != found {
			t.Errorf("load: %+v", info)
		}
	})
}

// TestSafetySnapshotSignal: SIGUSR1 to every rank while rank 0 waits in
// MPI_Recv and the others wait outside MPI: each writes snapshot-1 without
// stopping; the run then completes with the usual output and profile.
func TestSafetySnapshotSignal(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 3
		r := start(t, f, np, true, jobEnv(job), bin, "wait", dir)
		signal(t, pids(t, r, dir, np), syscall.SIGUSR1)
		snap := profile.SnapshotDir(job, 1)
		for rank := 0; rank < np; rank++ {
			waitFor(t, r, profile.RankFile(snap, rank))
		}
		touch(t, filepath.Join(dir, "go"))
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit code %d\n%s", code, r.err.String())
		}
		if got := r.out.String(); got != "ends wait: 3 ranks, sum 3, got 42, usr1 0\n" {
			t.Errorf("output %q", got)
		}
		s, info, err := profile.Load(snap)
		if err != nil {
			t.Fatal(err)
		}
		if info.Snapshot != 1 || info.Ranks != np {
			t.Errorf("snapshot load: %+v", info)
		}
		for _, rk := range s.Ranks {
			if rk.State != "snapshot" {
				t.Errorf("rank %d state %q", rk.Rank, rk.State)
			}
		}
		wantEnds(t, s, np, inFlight(1))
		p, info, err := profile.Load(job)
		if err != nil || info.Source != "final" {
			t.Fatalf("final: %v %+v", err, info)
		}
		wantEnds(t, p, np, map[string][2]int64{"MPI_Barrier": {4 * np, 0}, "MPI_Recv": {1, 4}, "MPI_Send": {1, 4}})
	})
}

// TestSafetySnapshotEvery: MPISCOPE_SNAPSHOT_EVERY=1s writes snapshots
// while the ranks wait.
func TestSafetySnapshotEvery(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	bin, dir, job := setup(t, f, "ends.c")
	const np = 2
	r := start(t, f, np, true, jobEnv(job, "MPISCOPE_SNAPSHOT_EVERY", "1s"), bin, "wait", dir)
	pids(t, r, dir, np)
	snap := profile.SnapshotDir(job, 2)
	for rank := 0; rank < np; rank++ {
		waitFor(t, r, profile.RankFile(snap, rank))
	}
	touch(t, filepath.Join(dir, "go"))
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, r.err.String())
	}
	s, _, err := profile.Load(snap)
	if err != nil {
		t.Fatal(err)
	}
	wantEnds(t, s, np, inFlight(1)) // by snapshot 2 (>= 2 s), the pid files were long written
}

// TestSafetySnapshotSignalApp: an application that handles SIGUSR1 itself
// keeps it: its handler runs, no snapshot is written, and the profile says
// why.
func TestSafetySnapshotSignalApp(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		bin, dir, job := setup(t, f, "ends.c")
		const np = 2
		r := start(t, f, np, true, jobEnv(job), bin, "usr1", dir)
		signal(t, pids(t, r, dir, np), syscall.SIGUSR1)
		time.Sleep(500 * time.Millisecond)
		touch(t, filepath.Join(dir, "go"))
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit code %d\n%s", code, r.err.String())
		}
		if got := r.out.String(); got != "ends usr1: 2 ranks, sum 2, got 42, usr1 1\n" {
			t.Errorf("output %q", got)
		}
		if _, err := os.Stat(profile.SnapshotDir(job, 1)); err == nil {
			t.Errorf("snapshot written on the application's signal")
		}
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range p.Meta.Settings {
			found = found || s.Name == "warning" && strings.Contains(s.Value, "handles SIGUSR1 itself")
		}
		if !found {
			t.Errorf("no warning in %+v", p.Meta.Settings)
		}
	})
}

// TestSafetyInternalError: an internal error (injected with MPISCOPE_FAULT
// in the snapshot of rank 1) turns recording off on that rank, warns once,
// and changes nothing else: same output, rank 0 fully recorded.
func TestSafetyInternalError(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	bin, dir, job := setup(t, f, "ends.c")
	const np = 2
	r := start(t, f, np, true, jobEnv(job, "MPISCOPE_FAULT", "snapshot"), bin, "wait", dir)
	pid := pids(t, r, dir, np)[1]
	signal(t, []int{pid}, syscall.SIGUSR1)
	signal(t, []int{pid}, syscall.SIGUSR1)
	time.Sleep(500 * time.Millisecond)
	touch(t, filepath.Join(dir, "go"))
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit code %d\n%s", code, r.err.String())
	}
	if got := r.out.String(); got != "ends wait: 2 ranks, sum 2, got 42, usr1 0\n" {
		t.Errorf("output %q", got)
	}
	if n := strings.Count(r.err.String(), "internal error"); n != 1 {
		t.Errorf("%d internal error messages:\n%s", n, r.err.String())
	}
	p, _, err := profile.Load(job)
	if err != nil {
		t.Fatal(err)
	}
	// Rank 1 stopped recording before its MPI_Send and last MPI_Barrier.
	wantEnds(t, p, np, map[string][2]int64{"MPI_Barrier": {4 + 3, 0}, "MPI_Recv": {1, 4}, "MPI_Send": {0, 0}})
}

// TestSafetyThreads: 8 threads per rank each make 10^6 MPI_Comm_rank and
// 100 MPI_Sendrecv under MPI_THREAD_MULTIPLE; every call is counted.
func TestSafetyThreads(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "safety/threads.c", dir, "-lpthread")
		const np, nt, calls = 2, 8, 1000000
		p, _, res := f.Profile(t, np, nil, bin)
		if strings.Contains(res.Stdout, "no MPI_THREAD_MULTIPLE") {
			t.Skipf("%s does not provide MPI_THREAD_MULTIPLE", f.Name)
		}
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Comm_rank": {np*nt*calls + np, 0},
			"MPI_Sendrecv":  {np * nt * 100, np * nt * 100 * 8},
			"MPI_Barrier":   {np, 0},
		})
		for _, rk := range p.Ranks {
			if rk.Threads != nt+1 {
				t.Errorf("rank %d: %d threads, want %d", rk.Rank, rk.Threads, nt+1)
			}
		}
	})
}

// TestSafetyTransparentOutput: with MPISCOPE_QUIET=1 the output (stdout
// and stderr) of each program is byte for byte that of the program without
// mpiscope, error classes under MPI_ERRORS_RETURN included; with default
// settings the only difference is the summary on stderr.
func TestSafetyTransparentOutput(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		errs := mpitest.Compile(t, f.MPICC, "safety/errors.c", dir)
		threads := mpitest.Compile(t, f.MPICC, "safety/threads.c", dir, "-lpthread")
		ends := mpitest.Compile(t, f.MPICC, "safety/ends.c", dir)
		touch(t, filepath.Join(dir, "go"))
		progs := [][]string{{errs}, {threads, "4", "1000"}, {ends, "wait", dir}}
		for _, args := range progs {
			name := filepath.Base(args[0])
			plain := start(t, f, 2, false, nil, args...)
			pcode := plain.wait(t)
			quiet := start(t, f, 2, true, jobEnv(filepath.Join(dir, name+"-q"), "MPISCOPE_QUIET", "1", "MPISCOPE_SUMMARY", "1"), args...)
			qcode := quiet.wait(t)
			if pcode != 0 || qcode != 0 {
				t.Errorf("%s: exit codes %d without, %d with mpiscope", name, pcode, qcode)
			}
			if plain.out.String() != quiet.out.String() || plain.err.String() != quiet.err.String() {
				t.Errorf("%s: output differs with MPISCOPE_QUIET=1\nwithout:\n%s%s\nwith:\n%s%s", name,
					plain.out.String(), plain.err.String(), quiet.out.String(), quiet.err.String())
			}
			job := filepath.Join(dir, name+"-d")
			def := start(t, f, 2, true, map[string]string{"MPISCOPE_OUT": job}, args...)
			def.wait(t)
			if plain.out.String() != def.out.String() {
				t.Errorf("%s: stdout differs with default settings\nwithout:\n%s\nwith:\n%s", name, plain.out.String(), def.out.String())
			}
			var rest []string
			for _, l := range strings.SplitAfter(def.err.String(), "\n") {
				if !strings.HasPrefix(l, "mpiscope: ") {
					rest = append(rest, l)
				}
			}
			if got := strings.Join(rest, ""); got != plain.err.String() {
				t.Errorf("%s: stderr differs beyond the summary\nwithout:\n%s\nwith:\n%s", name, plain.err.String(), def.err.String())
			}
			if !strings.Contains(def.err.String(), "mpiscope: report: ") {
				t.Errorf("%s: no summary on stderr:\n%s", name, def.err.String())
			}
		}
	})
}
