package mpitest_test

// End-to-end tests of the piggyback channel (MPISCOPE_PIGGYBACK=1):
// programs observe nothing of it, and the wait states it measures online
// are the ones the programs make by construction.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// sortedLines sorts the lines of out (the ranks print in any order),
// leaving out lines that are not the program's ("rN ...").
func sortedLines(out string) []string {
	var l []string
	for _, s := range strings.Split(out, "\n") {
		if strings.HasPrefix(s, "r") && strings.Contains(s, ":") {
			l = append(l, s)
		}
	}
	sort.Strings(l)
	return l
}

// rankOutputs is the sorted lines of the files prefix.0 and prefix.1: each
// rank of the piggyback programs writes its own file, as mpirun may forward
// two ranks' stdout in pieces that split their lines.
func rankOutputs(t *testing.T, prefix string) []string {
	t.Helper()
	var b strings.Builder
	for r := 0; r < 2; r++ {
		data, err := os.ReadFile(prefix + "." + strconv.Itoa(r))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return sortedLines(b.String())
}

// plainOutputs runs bin on 2 ranks without mpiscope, writing to
// dir/plain.<rank>, and returns its output's sorted lines, which must be
// n (0: any number).
func plainOutputs(t *testing.T, f mpitest.Family, bin, dir string, n int) []string {
	t.Helper()
	plainOut := filepath.Join(dir, "plain")
	if res := f.Exec(t, mpitest.Run{NP: 2, Args: []string{bin, plainOut}}); res.Err != nil {
		t.Fatalf("without mpiscope: %v\n%s", res.Err, res.Stderr)
	}
	want := rankOutputs(t, plainOut)
	if n > 0 && len(want) != n {
		t.Fatalf("without mpiscope: %d lines, want %d:\n%s", len(want), n, strings.Join(want, "\n"))
	}
	return want
}

// TestPiggybackTransparent runs transp.c (every kind of point-to-point
// call, status and edge case a program can observe) without mpiscope,
// with it, and with the channel on: the output must be the same, and the
// channel must have been on (its wait states are in the profile).
func TestPiggybackTransparent(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "piggyback/transp.c", dir)
		want := plainOutputs(t, f, bin, dir, 101)
		for _, on := range []string{"0", "1"} {
			out := filepath.Join(dir, "pb"+on)
			p, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_PIGGYBACK": on}, bin, out)
			got := rankOutputs(t, out)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("MPISCOPE_PIGGYBACK=%s: output differs\ngot:\n%s\nwant:\n%s", on, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if (len(p.Waits) > 0) != (on == "1") {
				t.Errorf("MPISCOPE_PIGGYBACK=%s: %d wait-state rows", on, len(p.Waits))
			}
			// Exact counts with the channel too: 16 bytes per
			// MPI_Sendrecv_replace but rank 1's to MPI_PROC_NULL;
			// the loop's 200 MPI_Sendrecv per rank, among the others.
			mpitest.Want(t, p, map[string][2]int64{"MPI_Sendrecv_replace": {6, 5 * 16}, "MPI_Bsend": {2, 48}})
			if s := mpitest.Func(p, "MPI_Sendrecv"); s.Calls != 2*(200+3) {
				t.Errorf("MPISCOPE_PIGGYBACK=%s: %d MPI_Sendrecv calls, want %d", on, s.Calls, 2*(200+3))
			}
		}
	})
}

// TestPiggybackWaits checks the wait states of waits.c: a late sender
// of 20 ms, none when the receiver is the late one, and at the staggered
// barrier rank k waiting (3 - k) x 10 ms for rank 3. On a node with more
// ranks than cores a rank may wake late, so the program prints when each
// rank made its call: the measured waits must match those within 10 %
// (1 ms at least), and those the construction within a factor of 2.
func TestPiggybackWaits(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "piggyback/waits.c", dir)
		// A loaded node may wake a rank so late that the run is not what
		// it was built for (checked against the program's clocks): up
		// to 3 runs; every run's measurements must match its clocks.
		for try := 1; ; try++ {
			if waitsRun(t, f, bin) || try == 3 {
				return
			}
			t.Logf("run %d: the ranks did not keep to the schedule (loaded node): again", try)
		}
	})
}

// waitsRun runs waits.c once and checks it; false: the run did not keep
// to its schedule (the measurements were still checked).
func waitsRun(t *testing.T, f mpitest.Family, bin string) bool {
	ok := true
	{
		p, job, res := f.Profile(t, 4, map[string]string{"MPISCOPE_PIGGYBACK": "1"}, bin)
		if txt, err := os.ReadFile(filepath.Join(job, "report.txt")); err != nil || !strings.Contains(string(txt), "Wait states (measured online") ||
			!strings.Contains(string(txt), "late-sender") || !strings.Contains(string(txt), "wait-at-nxn") {
			t.Errorf("report.txt: no wait states (%v):\n%s", err, txt)
		}
		at := map[string]float64{}
		for _, l := range strings.Split(res.Stdout, "\n") {
			var r int
			var what string
			var ns float64
			if n, _ := fmt.Sscanf(l, "r%d %s %f", &r, &what, &ns); n == 3 {
				at[fmt.Sprintf("%s %d", what, r)] = ns
			}
		}
		if len(at) != 6 {
			t.Fatalf("program output: %q", res.Stdout)
		}
		find := func(kind, fn, marker string) *profile.Wait {
			line := markerLine(t, "piggyback/waits.c", marker)
			for i := range p.Waits {
				w := &p.Waits[i]
				if w.Kind == kind && w.Func == fn && filepath.Base(w.Loc.File) == "waits.c" && w.Loc.Line == line {
					return w
				}
			}
			t.Fatalf("no %s wait for %s at waits.c:%d in %+v\nstderr:\n%s", kind, fn, line, p.Waits, res.Stderr)
			return nil
		}
		ms := float64(time.Millisecond)
		near := func(what string, got, truth, want float64) {
			if d := got - truth; d < -max(truth*0.10, ms) || d > max(truth*0.10, ms) {
				t.Errorf("%s: measured %v, the program's clocks say %v (within 10 %%)", what, time.Duration(got), time.Duration(truth))
			}
			if truth < want/2 || truth > 2*want {
				ok = false
			}
		}
		late := find(profile.WaitLateSender, "MPI_Recv", "late")
		if late.Calls != 1 || late.MaxRank != 1 || late.MaxPeer != 0 || late.Comm != "world" {
			t.Errorf("late sender: %+v", *late)
		}
		near("late sender", float64(late.WaitNs), at["late-send 0"]-at["late-recv 1"], 20*ms)
		early := find(profile.WaitLateSender, "MPI_Recv", "early")
		if early.Calls != 1 || early.WaitNs > int64(ms) {
			t.Errorf("receiver late: late-sender wait %v, want 0 (%+v)", time.Duration(early.WaitNs), *early)
		}
		bar := find(profile.WaitNxN, "MPI_Barrier", "stagger")
		last, lastT := 0, 0.0
		for k := 0; k < 4; k++ {
			if tk := at[fmt.Sprintf("barrier %d", k)]; tk > lastT {
				last, lastT = k, tk
			}
		}
		if bar.Calls != 4 || bar.MaxPeer != last || bar.RankWait.N != 4 {
			t.Errorf("barrier: %+v (last to arrive: rank %d)", *bar, last)
		}
		total := 0.0
		for k := 0; k < 4; k++ {
			total += lastT - at[fmt.Sprintf("barrier %d", k)]
		}
		near("barrier, all ranks", float64(bar.WaitNs), total, 60*ms)
		near("barrier, rank 0", float64(bar.MaxNs), lastT-at["barrier 0"], 30*ms)
		if !ok || last != 3 {
			return false
		}
	}
	return true
}

// TestPiggybackPointToPoint runs the point-to-point test's program and
// expectations (exact calls, bytes, peers and callsites) with the channel
// on.
func TestPiggybackPointToPoint(t *testing.T) {
	testPointToPoint(t, map[string]string{"MPISCOPE_PIGGYBACK": "1"})
}

// TestPiggybackCounts: the collectives and datatypes programs give the
// same calls and bytes per function, the same point-to-point matrix and
// the same output with the channel on as off.
func TestPiggybackCounts(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, c := range []struct {
			src string
			np  int
		}{{"coll.c", 4}, {"types.c", 2}} {
			prog := mpitest.Compile(t, f.MPICC, c.src, t.TempDir())
			off, _, ro := f.Profile(t, c.np, nil, prog)
			on, _, rn := f.Profile(t, c.np, map[string]string{"MPISCOPE_PIGGYBACK": "1"}, prog)
			if ro.Stdout != rn.Stdout {
				t.Errorf("%s: output differs with the channel on:\n%s\nwant:\n%s", c.src, rn.Stdout, ro.Stdout)
			}
			counts := func(p *profile.Profile) string {
				var b strings.Builder
				for _, fn := range p.Funcs {
					fmt.Fprintf(&b, "%s %d %d\n", fn.Name, fn.Calls, fn.Bytes)
				}
				for _, pr := range p.Peers {
					fmt.Fprintf(&b, "peer %d %d %d %d %d %d\n", pr.Rank, pr.Peer, pr.SentMsgs, pr.SentBytes, pr.RecvMsgs, pr.RecvBytes)
				}
				return b.String()
			}
			if a, b := counts(off), counts(on); a != b {
				t.Errorf("%s: counts differ with the channel on:\n%s\nwant:\n%s", c.src, b, a)
			}
			if len(on.Waits) == 0 && c.src == "coll.c" {
				t.Errorf("%s: no wait states with the channel on", c.src)
			}
		}
	})
}

// pbStats reads the channel's counters that each rank prints at
// MPI_Finalize under MPISCOPE_DEBUG_PIGGYBACK (piggyback.c, ms_pb_fini):
// rank -> counter name -> value.
func pbStats(t *testing.T, stderr string) map[int]map[string]int64 {
	t.Helper()
	out := map[int]map[string]int64{}
	for _, l := range strings.Split(stderr, "\n") {
		_, rest, ok := strings.Cut(l, "mpiscope: piggyback: rank ")
		if !ok {
			continue
		}
		var r int
		if _, err := fmt.Sscanf(rest, "%d:", &r); err != nil {
			t.Fatalf("stats line %q: %v", l, err)
		}
		f := strings.Fields(rest[strings.Index(rest, ":")+1:])
		m := map[string]int64{}
		for i := 0; i+1 < len(f); i += 2 {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				t.Fatalf("stats line %q: %v", l, err)
			}
			m[f[i]] = n
		}
		out[r] = m
	}
	return out
}

// TestPiggybackStage runs stage.c (sends the channel stages and sends it
// does not, received every way) without mpiscope, with it, with the
// channel on, and with the channel on but staging off
// (MPISCOPE_PIGGYBACK_STAGE=0): the output is the same, the counts exact,
// and the sends staged are the ones the program makes to be (1218 on rank
// 0, 10 on rank 1: stage.c's header), with no datatype or request of ours
// left at the end.
func TestPiggybackStage(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "piggyback/stage.c", dir)
		want := plainOutputs(t, f, bin, dir, 23)
		for _, c := range []struct {
			name             string
			env              map[string]string
			staged0, staged1 int64
		}{
			{"off", map[string]string{"MPISCOPE_PIGGYBACK": "0"}, -1, -1},
			{"staged", map[string]string{"MPISCOPE_PIGGYBACK": "1"}, 1218, 10},
			{"unstaged", map[string]string{"MPISCOPE_PIGGYBACK": "1", "MPISCOPE_PIGGYBACK_STAGE": "0"}, 0, 0},
		} {
			out := filepath.Join(dir, c.name)
			c.env["MPISCOPE_DEBUG_PIGGYBACK"] = "1"
			p, _, res := f.Profile(t, 2, c.env, bin, out)
			if got := rankOutputs(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s: output differs\ngot:\n%s\nwant:\n%s", c.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			mpitest.Want(t, p, map[string][2]int64{
				"MPI_Send": {1039, 26688}, "MPI_Isend": {140, 102560}, "MPI_Sendrecv": {20, 160},
				"MPI_Ssend": {10, 40}, "MPI_Issend": {70, 280},
			})
			st := pbStats(t, res.Stderr)
			if c.staged0 < 0 {
				if len(st) != 0 {
					t.Errorf("%s: channel statistics with the channel off: %v", c.name, st)
				}
				continue
			}
			if len(st) != 2 || st[0]["staged"] != c.staged0 || st[1]["staged"] != c.staged1 {
				t.Errorf("%s: staged sends %v, want %d on rank 0 and %d on rank 1\nstderr:\n%s", c.name, st, c.staged0, c.staged1, res.Stderr)
			}
			for r, m := range st {
				if m["datatypes"] != 0 || m["requests"] != 0 {
					t.Errorf("%s: rank %d: %d datatypes and %d requests of ours left at MPI_Finalize", c.name, r, m["datatypes"], m["requests"])
				}
			}
		}
	})
}

// TestPiggybackMPI4 runs mpi4.c (MPICH: the large-count forms,
// MPI_Isendrecv and MPI_Isendrecv_replace, each against a call of the
// other form) without mpiscope, with it and with the channel on: the same
// output and counts, and the header travels with them (a late sender
// measured at MPI_Recv_c).
func TestPiggybackMPI4(t *testing.T) {
	f := mpitest.Get(t, "mpich")
	dir := t.TempDir()
	bin := mpitest.Compile(t, f.MPICC, "piggyback/mpi4.c", dir)
	want := plainOutputs(t, f, bin, dir, 30)
	counts := func(p *profile.Profile) string {
		var b strings.Builder
		for _, fn := range p.Funcs {
			if fn.Name != "MPI_Improbe" { // polled: its count is the run's
				fmt.Fprintf(&b, "%s %d %d\n", fn.Name, fn.Calls, fn.Bytes)
			}
		}
		return b.String()
	}
	var base string
	for _, on := range []string{"0", "1"} {
		out := filepath.Join(dir, "pb"+on)
		p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_PIGGYBACK": on, "MPISCOPE_DEBUG_PIGGYBACK": "1"}, bin, out)
		if got := rankOutputs(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("MPISCOPE_PIGGYBACK=%s: output differs\ngot:\n%s\nwant:\n%s", on, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		mpitest.Want(t, p, map[string][2]int64{
			"MPI_Send_c": {3, 44}, "MPI_Send": {1, 12}, "MPI_Isend_c": {1, 8}, "MPI_Issend_c": {1, 8},
			"MPI_Ibsend_c": {1, 16}, "MPI_Irsend_c": {1, 8}, "MPI_Ssend_c": {1, 4}, "MPI_Rsend_c": {1, 4},
			"MPI_Bsend_c": {1, 16}, "MPI_Sendrecv_c": {1, 12}, "MPI_Sendrecv": {3, 24},
			"MPI_Sendrecv_replace_c": {1, 8}, "MPI_Sendrecv_replace": {2, 20}, "MPI_Isendrecv": {3, 36},
			"MPI_Isendrecv_c": {1, 8}, "MPI_Isendrecv_replace": {1, 12}, "MPI_Isendrecv_replace_c": {2, 16},
		})
		for fn, n := range map[string]int64{"MPI_Recv_c": 3, "MPI_Recv": 4, "MPI_Irecv_c": 4, "MPI_Send_init_c": 1,
			"MPI_Recv_init_c": 1, "MPI_Start": 6, "MPI_Mrecv_c": 1, "MPI_Imrecv_c": 1} {
			if c := mpitest.Func(p, fn).Calls; c != n {
				t.Errorf("MPISCOPE_PIGGYBACK=%s: %s %d calls, want %d", on, fn, c, n)
			}
		}
		if on == "0" {
			base = counts(p)
			continue
		}
		if got := counts(p); got != base {
			t.Errorf("counts differ with the channel on:\n%s\nwant:\n%s", got, base)
		}
		for r, m := range pbStats(t, res.Stderr) {
			if m["datatypes"] != 0 || m["requests"] != 0 {
				t.Errorf("rank %d: %d datatypes and %d requests of ours left at MPI_Finalize", r, m["datatypes"], m["requests"])
			}
		}
		line := markerLine(t, "piggyback/mpi4.c", "late")
		var late *profile.Wait
		for i := range p.Waits {
			w := &p.Waits[i]
			if w.Kind == profile.WaitLateSender && w.Func == "MPI_Recv_c" && filepath.Base(w.Loc.File) == "mpi4.c" && w.Loc.Line == line {
				late = w
			}
		}
		if late == nil || late.Calls != 1 || late.MaxPeer != 0 || late.WaitNs < int64(10*time.Millisecond) {
			t.Errorf("no late sender of about 20 ms at MPI_Recv_c (mpi4.c:%d): %+v\nall: %+v", line, late, p.Waits)
		}
	}
}

// execMPMD runs bin on len(ranks) ranks as an MPMD launch of one rank per
// application context, each with its own environment on top of env (the
// launcher's per-context options: Open MPI's -x, MPICH's -env), the
// library preloaded; MPISCOPE_OUT is set to job.
func execMPMD(t *testing.T, f mpitest.Family, job string, ranks []map[string]string, args ...string) mpitest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var cl []string
	if f.Name == "openmpi" {
		cl = append(cl, "--oversubscribe")
	}
	for i, env := range ranks {
		if i > 0 {
			cl = append(cl, ":")
		}
		cl = append(cl, "-n", "1")
		vars := map[string]string{"LD_PRELOAD": f.Lib()}
		for k, v := range env {
			vars[k] = v
		}
		keys := make([]string, 0, len(vars))
		for k := range vars {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f.Name == "openmpi" {
				cl = append(cl, "-x", k+"="+vars[k])
			} else {
				cl = append(cl, "-env", k, vars[k])
			}
		}
		cl = append(cl, args...)
	}
	cmd := exec.CommandContext(ctx, f.MPIRun, cl...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_vader_single_copy_mechanism=none", "OMPI_MCA_rmaps_base_oversubscribe=1",
		"MPISCOPE_OUT="+job, "MPISCOPE_SUMMARY=0")
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out: %w", err)
	}
	return mpitest.Result{Stdout: so.String(), Stderr: se.String(), Err: err}
}

// TestPiggybackDisagree launches stage.c MPMD with the channel or
// compensation asked for on one rank only (either rank) or the channel on
// both and compensation on one: all ranks agree at MPI_Init (off where
// not every rank asked), rank 0 warns once, on stderr and in the profile,
// and the program's output and counts are exact.
func TestPiggybackDisagree(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "piggyback/stage.c", dir)
		want := strings.Join(plainOutputs(t, f, bin, dir, 0), "\n")
		const pbWarn = "MPISCOPE_PIGGYBACK (or MPISCOPE_COMPENSATE): not every rank asked for it: off on all ranks"
		const compWarn = "MPISCOPE_COMPENSATE: not every rank asked for it: off on all ranks"
		pb := map[string]string{"MPISCOPE_PIGGYBACK": "1", "MPISCOPE_DEBUG_PIGGYBACK": "1"}
		comp := map[string]string{"MPISCOPE_COMPENSATE": "1", "MPISCOPE_DEBUG_PIGGYBACK": "1"}
		both := map[string]string{"MPISCOPE_PIGGYBACK": "1", "MPISCOPE_COMPENSATE": "1", "MPISCOPE_DEBUG_PIGGYBACK": "1"}
		for _, c := range []struct {
			name    string
			ranks   []map[string]string
			warning string
			channel bool // on (on both ranks) in the end
		}{
			{"channel on rank 0", []map[string]string{pb, nil}, pbWarn, false},
			{"channel on rank 1", []map[string]string{nil, pb}, pbWarn, false},
			{"compensation on rank 1", []map[string]string{nil, comp}, pbWarn, false},
			{"channel on both, compensation on rank 0", []map[string]string{both, pb}, compWarn, true},
		} {
			job := filepath.Join(dir, "job-"+strings.ReplaceAll(c.name, " ", "-"))
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-"))
			res := execMPMD(t, f, job, c.ranks, bin, out)
			if res.Err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", c.name, res.Err, res.Stdout, res.Stderr)
			}
			if got := strings.Join(rankOutputs(t, out), "\n"); got != want {
				t.Errorf("%s: output differs\ngot:\n%s\nwant:\n%s", c.name, got, want)
			}
			if n := strings.Count(res.Stderr, "mpiscope: warning: "+c.warning); n != 1 || strings.Count(res.Stderr, "not every rank") != 1 {
				t.Errorf("%s: the warning %q %d times on stderr, and %d warnings of that kind, want once:\n%s",
					c.name, c.warning, n, strings.Count(res.Stderr, "not every rank"), res.Stderr)
			}
			p, _, err := profile.Load(job)
			if err != nil {
				t.Fatalf("%s: %v\nstderr:\n%s", c.name, err, res.Stderr)
			}
			var warns []string
			comped := false
			for _, s := range p.Meta.Settings {
				if s.Name == "warning" && strings.Contains(s.Value, "not every rank") {
					warns = append(warns, s.Value)
				}
			}
			if len(warns) != 1 || warns[0] != c.warning {
				t.Errorf("%s: warnings in the profile %q, want %q once", c.name, warns, c.warning)
			}
			comped = len(p.CompRanks) > 0
			if comped {
				t.Errorf("%s: compensated figures in the profile, compensation should be off", c.name)
			}
			// The channel is on on both ranks or on neither: its
			// statistics (printed where it is on) and its wait states.
			if st := pbStats(t, res.Stderr); (len(st) == 2) != c.channel || (len(st) != 0 && len(st) != 2) {
				t.Errorf("%s: channel statistics of %d ranks, want the channel on both: %v", c.name, len(st), c.channel)
			}
			if (len(p.Waits) > 0) != c.channel {
				t.Errorf("%s: %d wait-state rows, want the channel on: %v", c.name, len(p.Waits), c.channel)
			}
			mpitest.Want(t, p, map[string][2]int64{
				"MPI_Send": {1039, 26688}, "MPI_Isend": {140, 102560}, "MPI_Sendrecv": {20, 160},
				"MPI_Ssend": {10, 40}, "MPI_Issend": {70, 280},
			})
		}
	})
}

// TestPiggybackStack stacks the count and bytes tools (in both orders),
// and the pass-through tool alone, below mpiscope with the channel on: the
// channel's handlers sit below the last tool, so each tool sees the
// program's calls as written (its counts and bytes are exact: with our
// datatype it would count 24 bytes more per message), the output is
// unchanged, and the wait states still name the program's callsites.
func TestPiggybackStack(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		app := mpitest.Compile(t, f.MPICC, "stack/app.c", dir)
		tools := map[string]string{"count": stackTool(t, f, "count", dir), "bytes": stackTool(t, f, "bytes", dir),
			"pass": stackTool(t, f, "pass", dir)}
		ref := f.Exec(t, mpitest.Run{NP: 2, Args: []string{app}})
		if ref.Err != nil {
			t.Fatalf("without mpiscope: %v\n%s", ref.Err, ref.Stderr)
		}
		for _, order := range [][]string{{"count", "bytes"}, {"bytes", "count"}, {"pass"}} {
			t.Run(strings.Join(order, "-"), func(t *testing.T) {
				out := t.TempDir()
				var libs []string
				for _, n := range order {
					libs = append(libs, tools[n])
				}
				p, _, res := f.Profile(t, 2, map[string]string{"MPISCOPE_STACK": strings.Join(libs, ":"), "STACK_OUT": out,
					"MPISCOPE_PIGGYBACK": "1"}, app)
				if order[0] == "pass" {
					mpitest.Want(t, p, map[string][2]int64{"MPI_Send": {200, 2400}, "MPI_Recv": {200, 2400}})
				} else {
					checkStack(t, p, out, order)
				}
				if sortedOutput(res.Stdout) != sortedOutput(ref.Stdout) {
					t.Errorf("output changed:\n%s\nwithout mpiscope:\n%s", res.Stdout, ref.Stdout)
				}
				if strings.Contains(res.Stderr, "warning") {
					t.Errorf("stderr:\n%s", res.Stderr)
				}
				late, coll := 0, 0
				for _, w := range p.Waits {
					if filepath.Base(w.Loc.File) != "app.c" {
						t.Errorf("wait state at %+v, want a callsite in app.c", w.Loc)
					}
					switch {
					case w.Kind == profile.WaitLateSender && w.Func == "MPI_Recv":
						late += int(w.Calls)
					case w.Kind == profile.WaitNxN:
						coll += int(w.Calls)
					}
				}
				// Every receive measured (200 over both ranks), and
				// the 10 barriers and 5 allreduces of each rank.
				if late != 200 || coll != 30 {
					t.Errorf("wait states: %d late-sender calls at MPI_Recv (want 200), %d at collectives (want 30): %+v", late, coll, p.Waits)
				}
			})
		}
	})
}
