package main

import (
	"strings"
	"testing"
)

func TestTargetVerdict(t *testing.T) {
	tg := &target{Name: "profile", Unit: "x", Limit: 1.3}
	tg.add("openmpi", "comm_rank", 0.86, "")
	tg.add("openmpi", "pingpong_1024", 1.45, "")
	tg.add("mpich", "comm_rank", 1.3, "")
	tg.skip("mpich", "allreduce_8", "controls fail")
	tg.Rows = append(tg.Rows, tRow{Family: "mpich", Row: "pass", Value: -2.5, Limit: 3, Abs: true})
	for _, c := range []struct {
		fam, want, worst string
		n, met           int
	}{
		{"openmpi", "missed", "pingpong_1024", 2, 1},
		{"mpich", "met", "comm_rank", 2, 2},
		{"none", "not measured", "", 0, 0},
	} {
		v, w, n, met := tg.verdict(c.fam)
		ws := ""
		if w != nil {
			ws = w.Row
		}
		if v != c.want || ws != c.worst || n != c.n || met != c.met {
			t.Errorf("verdict(%q) = %s, %s, %d of %d; want %s, %s, %d of %d", c.fam, v, ws, met, n, c.want, c.worst, c.met, c.n)
		}
	}
	// |value| against the limit: -3.5 misses a limit of 3.
	if (tRow{Value: -3.5, Limit: 3, Abs: true}).met() || !(tRow{Value: -3.5, Limit: 3}).met() {
		t.Error("tRow.met: Abs not honoured")
	}
}

// The finalize merge measured on 2026-11-24 (Open MPI, 2-32 ranks) is a
// tree; a linear gather (P-1 receives on rank 0) or a merge whose cost per
// receive grows with P is not.
func TestMergeRows(t *testing.T) {
	nps := []int{2, 4, 8, 16, 32}
	met := func(rows []tRow) (n int) {
		for _, r := range rows {
			if r.met() {
				n++
			}
		}
		return n
	}
	tree := mergeRows("openmpi", nps, []float64{1, 2, 3, 4, 5}, []float64{0.18, 0.21, 0.31, 0.35, 0.46})
	if len(tree) != 6 || met(tree) != 6 {
		t.Errorf("tree: %d rows, %d met; want 6, 6: %+v", len(tree), met(tree), tree)
	}
	linear := mergeRows("openmpi", nps, []float64{1, 3, 7, 15, 31}, []float64{0.18, 0.5, 1.2, 2.6, 5.4})
	if met(linear) != 2 { // P=2 (1 receive either way) and the cost per receive
		t.Errorf("linear gather: %d rows met, want 2: %+v", met(linear), linear)
	}
	slow := mergeRows("mpich", []int{2, 8}, []float64{1, 3}, []float64{0.1, 0.75})
	if len(slow) != 3 || slow[2].met() || !near(slow[2].Value, 2.5) {
		t.Errorf("merge per receive 0.25 over 0.1 ms: %+v", slow)
	}
}

// abRow: a row whose controls fail is recorded as not measured, and
// the pass-through rows need a method that resolves the row.
func TestABTargets(t *testing.T) {
	res := newResults()
	ts := res.t
	ts.abRow("openmpi", "pingpong_0 (in-process)", "ok", 9.5, 9.4, 17.5, 26.6, 1.3, -0.6, -1.3, -1.8, 0.4, 3.5)
	ts.abRow("openmpi", "allreduce_8 (in-process)", "fail (off 17.2 below pass-through)", 9.5, 12, 14.5, 29.8, -0.4, -3.2, -1.2, -2.0, 0, 0)
	if r := ts.profile.Rows; len(r) != 2 || !near(r[0].Value, 17.5/19) || r[1].Skip == "" {
		t.Errorf("profile rows: %+v", r)
	}
	if r := ts.trace.Rows[0]; !near(r.Value, 26.6/19) || !r.met() {
		t.Errorf("trace row: %+v (1.40 x is within 2 x)", r)
	}
	if r := ts.pcontrol.Rows[0]; !near(r.Value, 3.1) {
		t.Errorf("pcontrol row: %+v", r)
	}
	if r := ts.pass.Rows; len(r) != 3 || r[2].Skip == "" || !r[0].met() || !r[1].met() {
		t.Errorf("pass-through rows: %+v", r)
	}
	// Linked: profile 0.4 ns is within abNoise, off 3.5 is not.
	if r := ts.passLinked.Rows; len(r) != 3 || r[2].Skip == "" || !r[0].met() || r[1].met() || r[1].Row != "pingpong_0 (in-process), linked off" {
		t.Errorf("pass-through linked rows: %+v", r)
	}
	res.writeTargets()
	s := res.out.String()
	for _, want := range []string{
		"| profile mode, callsites on, per-call overhead <= 1.3 x two timestamp reads | openmpi | met | 1 of 1 | openmpi pingpong_0 (in-process): 0.92 x (17.5 ns) |",
		"- not measured (profile, trace, Pcontrol(0), reads in place): openmpi allreduce_8 (in-process): controls fail (off 17.2 below pass-through)",
		"| pass-through build linked into the program (static archive) indistinguishable from no library | openmpi | missed | 1 of 2 | openmpi pingpong_0 (in-process), linked off: 3.5 ns |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("writeTargets output lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "finalize merge") {
		t.Errorf("a target without rows is listed:\n%s", s)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
