package mpitest_test

// End-to-end tests of the piggyback channel (MPISCOPE_PIGGYBACK=1):
// programs observe nothing of it, and the wait states it measures online
// are the ones the programs make by construction.

import (
	"fmt"
	"os"
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

// TestPiggybackTransparent runs transp.c (every kind of point-to-point
// call, status and edge case a program can observe) without mpiscope,
// with it, and with the channel on: the output must be the same, and the
// channel must have been on (its wait states are in the profile).
func TestPiggybackTransparent(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		bin := mpitest.Compile(t, f.MPICC, "piggyback/transp.c", dir)
		// Each rank writes its own file (out.<rank>): mpirun may forward
		// two ranks' stdout in pieces that split their lines.
		outs := func(prefix string) string {
			var b strings.Builder
			for r := 0; r < 2; r++ {
				data, err := os.ReadFile(prefix + "." + strconv.Itoa(r))
				if err != nil {
					t.Fatal(err)
				}
				b.Write(data)
			}
			return b.String()
		}
		plainOut := filepath.Join(dir, "plain")
		plain := f.Exec(t, mpitest.Run{NP: 2, Args: []string{bin, plainOut}})
		if plain.Err != nil {
			t.Fatalf("without mpiscope: %v\n%s", plain.Err, plain.Stderr)
		}
		want := sortedLines(outs(plainOut))
		if len(want) != 101 {
			t.Fatalf("without mpiscope: %d lines, want 101:\n%s", len(want), strings.Join(want, "\n"))
		}
		for _, on := range []string{"0", "1"} {
			out := filepath.Join(dir, "pb"+on)
			p, _, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_PIGGYBACK": on}, bin, out)
			got := sortedLines(outs(out))
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
