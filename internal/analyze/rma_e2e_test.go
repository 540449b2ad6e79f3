package analyze_test

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/cli"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// runRMA runs a case of testdata/progs/analyze/rma.c (runJob; Open MPI
// with the one-sided component the tests can use: the harness turns off
// the single-copy mechanism osc/rdma needs, as internal/trace's
// TestTraceRMA does).
func runRMA(t *testing.T, f mpitest.Family, np int, inJob bool, c string) (*analyze.Result, *profile.Analysis, entries) {
	t.Helper()
	return runJob(t, f, np, inJob, "analyze/rma.c", map[string]string{"OMPI_MCA_osc": "pt2pt"}, c)
}

// span is a call as the program saw it: entered, returned (ns).
type span [2]float64

func (e entries) span(t *testing.T, rank, i int, what string) span {
	return span{e.get(t, rank, i, what), e.get(t, rank, i, what+".end")}
}

// waitIn is the time spent in the calls before ready (each call's part
// before it), in seconds: the patterns' rule, on the program's times.
func waitIn(ready float64, calls ...span) float64 {
	w := 0.0
	for _, c := range calls {
		w += max(0, min(ready, c[1])-c[0])
	}
	return w / 1e9
}

// rmaWaits is what the program's times make for a case: the waits per
// pattern and rank (s), and the nominal ones (ms per iteration).
func rmaWaits(t *testing.T, c string, np int, e entries) (map[analyze.Pattern]map[int]float64, map[analyze.Pattern]map[int]float64) {
	w := map[analyze.Pattern]map[int]float64{}
	add := func(p analyze.Pattern, r int, v float64) {
		if w[p] == nil {
			w[p] = map[int]float64{}
		}
		w[p][r] += v
	}
	for i := 0; i < iter; i++ {
		switch c {
		case "fence", "efence":
			// Wait at fence until the last member entered; its part
			// early fence until the end of the last put to the rank
			// (fence: rank k puts to k+1; efence: rank 0 to rank 1),
			// between the two fences.
			put := map[int]float64{}
			for k := 0; k < np; k++ {
				if c == "fence" {
					put[(k+1)%np] = e.get(t, k, i, "put.end")
				} else if k == 0 {
					put[1] = e.get(t, 0, i, "put.end")
				}
			}
			for _, f := range []string{"fence", "fence2"} {
				last := 0.0
				for k := 0; k < np; k++ {
					last = max(last, e.get(t, k, i, f))
				}
				for k := 0; k < np; k++ {
					add(analyze.WaitFence, k, waitIn(last, e.span(t, k, i, f)))
					if p, ok := put[k]; ok && f == "fence2" {
						add(analyze.EarlyFence, k, waitIn(min(p, last), e.span(t, k, i, f)))
					} else {
						add(analyze.EarlyFence, k, 0)
					}
				}
			}
		case "post", "wait":
			post, wait := e.span(t, 1, i, "post"), e.span(t, 1, i, "wait")
			start, put, complete := e.span(t, 0, i, "start"), e.span(t, 0, i, "put"), e.span(t, 0, i, "complete")
			add(analyze.LatePost, 0, waitIn(post[0], start, put, complete))
			if ew := waitIn(complete[0], wait); ew > 0 {
				add(analyze.EarlyWait, 1, ew)
				add(analyze.LateComplete, 1, max(0, min(complete[0], wait[1])-max(put[1], wait[0]))/1e9)
			} else {
				add(analyze.EarlyWait, 1, 0)
				add(analyze.LateComplete, 1, 0)
			}
		case "lock", "lockall":
			// Which epoch held the lock first (rma.go's rule): the one
			// that entered its unlock before the other surely held the
			// lock (rank 1: its flush returned; rank 2: its unlock
			// returned); when both can, the one that entered its unlock
			// first. The other, if it had begun by the first's end,
			// waited in its calls until the first's unlock.
			a, b := []span{e.span(t, 1, i, "lock"), e.span(t, 1, i, "put"), e.span(t, 1, i, "flush"), e.span(t, 1, i, "unlock")},
				[]span{e.span(t, 2, i, "lock"), e.span(t, 2, i, "put"), e.span(t, 2, i, "unlock")}
			heldA, heldB := a[2][1], b[2][1]
			ua, ub := a[3], b[2]
			ab, ba := ua[0] <= heldB, ub[0] <= heldA
			first, second, rs, u := 1, b, 2, ua
			if !ab || ba && ub[0] < ua[0] {
				first, second, rs, u = 2, a, 1, ub
			}
			add(analyze.LockContention, first, 0)
			if (ab || ba) && u[1] > second[0][0] {
				add(analyze.LockContention, rs, waitIn(u[0], second...))
			} else {
				add(analyze.LockContention, rs, 0)
			}
		}
	}
	nominal := map[string]map[analyze.Pattern]map[int]float64{
		"fence":   {analyze.WaitFence: {0: 10 * float64(np-1), 1: 10 * float64(np-2), 2: 10 * float64(np-3)}},
		"post":    {analyze.LatePost: {0: 20}},
		"wait":    {analyze.EarlyWait: {1: 20}, analyze.LateComplete: {1: 20}},
		"lock":    {analyze.LockContention: {2: 20}},
		"lockall": {analyze.LockContention: {2: 20}},
		"efence":  {analyze.WaitFence: {1: 20, 2: 20}, analyze.EarlyFence: {1: 20}},
	}[c]
	return w, nominal
}

var rmaCases = []struct {
	np   int
	c    string
	main analyze.Pattern // the pattern the case is made of, on rank
	rank int
}{{4, "fence", analyze.WaitFence, 0}, {2, "post", analyze.LatePost, 0}, {2, "wait", analyze.EarlyWait, 1},
	{2, "wait", analyze.LateComplete, 1}, {3, "lock", analyze.LockContention, 2}, {3, "lockall", analyze.LockContention, 2},
	{3, "efence", analyze.EarlyFence, 1}, {3, "efence", analyze.WaitFence, 2}}

// TestAnalyzeRMA: each case of rma.c on both families, traced and
// analyzed offline: each one-sided pattern's time per rank within 10 % of
// the waits the program's own times make, every other pattern exactly 0;
// and the pattern the case is made of is there (not a case that cannot
// fail).
func TestAnalyzeRMA(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		done := map[string]bool{}
		for _, c := range rmaCases {
			if done[c.c] {
				continue
			}
			done[c.c] = true
			t.Run(c.c, func(t *testing.T) {
				a, _, e := runRMA(t, f, c.np, false, c.c)
				w, nominal := rmaWaits(t, c.c, c.np, e)
				wantWaits(t, a, w, nominal)
				// The synchronizations, by construction: two fences an
				// iteration, one pair of epochs, one lock epoch on rank 0
				// per locking rank (rank 1's lock_all one on each of the
				// 3 ranks), none unmatched.
				if want := map[string]analyze.RMAStats{"fence": {Fences: 2 * iter}, "efence": {Fences: 2 * iter}, "post": {Epochs: iter},
					"wait": {Epochs: iter}, "lock": {Locks: 2 * iter}, "lockall": {Locks: (3 + 1) * iter}}[c.c]; a.RMA != want {
					t.Errorf("one-sided synchronizations %+v, want %+v", a.RMA, want)
				}
				for _, m := range rmaCases {
					if m.c == c.c && a.Patterns[m.main].ByRank[m.rank] < 0.1*nominal[m.main][m.rank]*iter/1e3 {
						t.Errorf("%s on rank %d: %.6f s, want at least a tenth of the nominal %.3f s", m.main, m.rank,
							a.Patterns[m.main].ByRank[m.rank], nominal[m.main][m.rank]*iter/1e3)
					}
				}
			})
		}
	})
}

// TestRMAInJobE2E: each case of rma.c with MPISCOPE_ANALYZE=1 on both
// families: the profile's analysis section (`mpiscope report` shows it)
// agrees with `mpiscope analyze` on the job's trace within 1 % per
// pattern and rank (they run the same code on the same events: in fact
// exactly, the warnings aside).
func TestRMAInJobE2E(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		done := map[string]bool{}
		for _, c := range rmaCases {
			if done[c.c] {
				continue
			}
			done[c.c] = true
			t.Run(c.c, func(t *testing.T) {
				off, in, _ := runRMA(t, f, c.np, true, c.c)
				want := off.Profile()
				for p, pt := range in.Patterns {
					for r, got := range pt.ByRank {
						if w := want.Patterns[p].ByRank[r]; math.Abs(got-w) > 0.01*w {
							t.Errorf("%s on rank %d: %.6f s in the job, %.6f s offline", pt.Pattern, r, got, w)
						}
					}
				}
				x, y := *in, *want
				x.Warnings, y.Warnings = nil, nil
				if !reflect.DeepEqual(x, y) {
					a, _ := json.MarshalIndent(x, "", " ")
					b, _ := json.MarshalIndent(y, "", " ")
					t.Errorf("in the job:\n%s\nmpiscope analyze:\n%s", a, b)
				}
				var n int64
				for _, pt := range in.Patterns {
					n += pt.Instances
				}
				if n == 0 {
					t.Errorf("no wait state in the job's analysis")
				}
			})
		}
	})
}

// TestRMAMemoryE2E: rma.c's many case (2 ranks, 5,001 fences, a put
// between every other two: 7,501 one-sided records a rank, 420 KB) with
// MPISCOPE_ANALYZE_MEM=1M, a share of 256 KiB for them, on both
// families: each rank spills its records and the job matches them in
// rounds (its timing phases say so); the result is `mpiscope analyze`'s
// (in memory) exactly, and `mpiscope analyze -mem 1M` (spilled, in
// rounds) gives it too; every fence matched.
func TestRMAMemoryE2E(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "analyze/rma.c", dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_ANALYZE": "1",
			"MPISCOPE_ANALYZE_MEM": "1M", "MPISCOPE_DEBUG_TIMING": "1", "OMPI_MCA_osc": "pt2pt"}, Preload: f.Lib(), Args: []string{prog, "many"}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
		}
		p, _, err := profile.Load(job)
		if err != nil || p.Analysis == nil {
			t.Fatalf("no analysis (%v)\n%s", err, res.Stderr)
		}
		spilled := regexp.MustCompile(`rma\[rounds=(\d+),spilled=(\d+)\]`).FindAllStringSubmatch(res.Stderr, -1)
		if len(spilled) != 2 {
			t.Errorf("%d ranks printed their one-sided rounds, want 2:\n%s", len(spilled), res.Stderr)
		}
		for _, m := range spilled {
			if r, _ := strconv.Atoi(m[1]); r < 2 || m[2] == "0" {
				t.Errorf("%s: want several rounds and records spilled", m[0])
			}
		}
		var out, errs bytes.Buffer
		off := map[string]*analyze.Result{}
		for _, mem := range []string{"1G", "1M"} {
			out.Reset()
			if rc := cli.Run([]string{"analyze", "-format", "json", "-mem", mem, job}, &out, &errs); rc != 0 {
				t.Fatalf("mpiscope analyze -mem %s: exit %d\n%s", mem, rc, errs.String())
			}
			off[mem] = &analyze.Result{}
			if err := json.Unmarshal(out.Bytes(), off[mem]); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(off["1G"], off["1M"]) {
			t.Errorf("mpiscope analyze -mem 1M: %+v\nin memory: %+v", off["1M"], off["1G"])
		}
		x, y := *p.Analysis, *off["1G"].Profile()
		x.Warnings, y.Warnings = nil, nil
		if !reflect.DeepEqual(x, y) {
			a, _ := json.MarshalIndent(x, "", " ")
			b, _ := json.MarshalIndent(y, "", " ")
			t.Errorf("in the job:\n%s\nmpiscope analyze:\n%s", a, b)
		}
		if w := (analyze.RMAStats{Fences: 5001}); off["1G"].RMA != w || len(p.Analysis.Warnings) != 0 {
			t.Errorf("one-sided synchronizations %+v, warnings %q; want %+v, none", off["1G"].RMA, p.Analysis.Warnings, w)
		}
	})
}
