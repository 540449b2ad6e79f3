package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The ab section runs bench/progs/ab.c: the two-rank benchmarks with every
// mode inside one process, alternating repetition by repetition (none =
// PMPI_ called directly, timer = PMPI_ between two rdtsc reads, off =
// Pcontrol(0), profile, trace), so that the modes share the VM's phase.
// Each round runs the program under three libraries: none preloaded and the
// pass-through build (controls: their modes differ only by noise and by the
// floor of interposition) and libmpiscope.

// abModes are the modes ab.c reports, in order.
var abModes = []string{"none", "timer", "off", "profile", "trace", "clock2"}

// abRun is one run's result: diff[bench][mode] = median over cycles of
// (mode - none) per iteration, ns.
type abRun struct {
	diff  map[string]map[string]float64
	calls map[string]float64
	order []string
	tsc   float64
}

func parseAB(s string) (abRun, map[string]int64) {
	r := abRun{diff: map[string]map[string]float64{}, calls: map[string]float64{}}
	expect := map[string]int64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 6 && f[0] == "AB":
			d, _ := strconv.ParseFloat(f[4], 64)
			c, _ := strconv.ParseFloat(f[5], 64)
			if r.diff[f[1]] == nil {
				r.diff[f[1]] = map[string]float64{}
				r.order = append(r.order, f[1])
			}
			r.diff[f[1]][f[2]] = d
			r.calls[f[1]] = c
		case len(f) == 3 && f[0] == "EXPECT":
			expect[f[1]], _ = strconv.ParseInt(f[2], 10, 64)
		}
	}
	_, _, timers := parse(s)
	r.tsc = timers["tsc"]
	return r, expect
}

// checkAB checks from the job's profile that the modes did what they say:
// exactly the calls made under profile and trace are recorded, and the
// trace was written.
func checkAB(job string, expect map[string]int64) error {
	if len(expect) == 0 {
		return fmt.Errorf("ab: no EXPECT lines")
	}
	p, _, err := profile.Load(job)
	if err != nil {
		return fmt.Errorf("ab: %v", err)
	}
	for fn, want := range expect {
		var got int64
		for _, f := range p.Funcs {
			if f.Name == fn {
				got = f.Calls
			}
		}
		if got != want {
			return fmt.Errorf("ab: the profile of %s has %d %s calls, want %d (the modes did not switch as they should)", job, got, fn, want)
		}
	}
	if ents, err := os.ReadDir(filepath.Join(job, "trace")); err != nil || len(ents) == 0 {
		return fmt.Errorf("ab: no trace in %s (MPI_Pcontrol(6) did not start tracing)", job)
	}
	return nil
}

// abNoise is how far (ns per call) a control of ab.c may be from zero
// before its row is reported as not measuring the wrapper: the in-process
// controls on MPICH stay within about 2.5 ns.
const abNoise = 3.0

// abControls is a row's verdict from its controls (medians, ns per call):
// the method resolves the row when modes that run the same code measure
// the same (no library: profile against none; the pass-through build's
// profile against its off), and the time adds up when libmpiscope's off,
// which does a load and a branch more than the pass-through build's, is not
// below it. What the pass-through build costs over no library is the floor
// of interposition, judged by its own target, not a failed control: on the
// AMD EPYC (Zen 1) VM measured on 2026-11-25 it is 4 to 9 ns on some
// loops, in every round.
func abControls(noLibProfile, ptProfile, ptOff, offMS float64) string {
	var bad []string
	if math.Abs(noLibProfile) > abNoise {
		bad = append(bad, fmt.Sprintf("no library: profile %.1f", noLibProfile))
	}
	if d := ptProfile - ptOff; math.Abs(d) > abNoise {
		bad = append(bad, fmt.Sprintf("pass-through: profile - off %.1f", d))
	}
	if d := offMS - ptOff; d < -abNoise {
		bad = append(bad, fmt.Sprintf("off %.1f below pass-through", -d))
	}
	if len(bad) == 0 {
		return "ok"
	}
	return "fail (" + strings.Join(bad, "; ") + ")"
}

func (b *bench) ab() error {
	// name, library preloaded, program; "pass-through linked" is the
	// pass-through wrappers linked into the program (pt-linked).
	type abLib struct {
		name, lib string
		linked    bool
	}
	libs := []abLib{{"no library", "", false}, {"pass-through", b.ptLib, false}, {"pass-through linked", "", true}, {"mpiscope", b.lib, false}}
	vars, err := parseVariants(b.opt.variants, b.f.Name)
	if err != nil {
		return err
	}
	for _, v := range vars {
		libs = append(libs, abLib{v.name, v.lib, false})
	}
	// diffs[lib][bench][mode] per round, per call; tscs per run.
	diffs := map[string]map[string]map[string][]float64{}
	var tscs []float64
	var order []string
	calls := map[string]float64{}
	for _, l := range libs {
		diffs[l.name] = map[string]map[string][]float64{}
	}
	for r := 0; r < b.opt.abRounds; r++ {
		for _, l := range libs {
			res, err := b.mpirun(2, l.lib, map[string]string{"MPISCOPE_ENABLE": "1"}, config{Linked: l.linked}.prog(b, "ab", r%len(b.bins)), "10000", strconv.Itoa(b.opt.abCycles))
			if err != nil {
				return err
			}
			run, expect := parseAB(res.Stdout)
			if len(run.order) == 0 || run.tsc == 0 {
				return fmt.Errorf("ab under %s: no results in\n%s%s", l.name, res.Stdout, res.Stderr)
			}
			if l.lib == b.lib {
				if err := checkAB(res.Job, expect); err != nil {
					return err
				}
			}
			os.RemoveAll(res.Job)
			tscs = append(tscs, run.tsc)
			order = run.order
			for _, n := range run.order {
				calls[n] = run.calls[n]
				m := diffs[l.name][n]
				if m == nil {
					m = map[string][]float64{}
					diffs[l.name][n] = m
				}
				for mode, d := range run.diff[n] {
					m[mode] = append(m[mode], d/run.calls[n])
				}
			}
		}
		fmt.Fprintf(os.Stderr, "runbench: %s ab round %d/%d\n", b.f.Name, r+1, b.opt.abRounds)
	}
	T := summarize(tscs)
	b.res.md("\n## Overhead per call, modes alternating in one process (%s)\n\n", b.f.Name)
	b.res.md("bench/progs/ab.c, 2 ranks: each benchmark runs cycles of six modes, one repetition of 10,000 iterations each (bw_8: 1,250 windows of 64 MPI_Isend/MPI_Irecv, MPI_Waitall and an acknowledgement, 66 calls per rank), "+
		"in an order rotated per cycle (%d cycles after one warm-up): `none` calls PMPI_ directly, `timer` calls PMPI_ between two inline rdtsc reads "+
		"(the least a timing profiler can add, measured where the wrapper's work is: on the critical path), `off` = MPI_Pcontrol(0), "+
		"`profile` = MPI_Pcontrol(1) (callsites on), `trace` = MPI_Pcontrol(1) and (6), `clock2` calls PMPI_ between two clock_gettime reads and adds to a counter record (the reference wrapper, bench/progs/refwrap.c, in place). A run's value for a mode is the median over cycles of "+
		"(mode - none of the same cycle) per call on the critical path; all modes of a run share the VM's phase. "+
		"%d rounds, each running the program with no library, with the pass-through build preloaded, with it linked into the program (its static archive) and with libmpiscope; "+
		"the profile of each libmpiscope run is checked to hold exactly the calls made under profile and trace. "+
		"Values: median [min, max] over rounds, ns per call. Isolated rdtsc loop of the same runs: %s ns per read.\n\n", b.opt.abCycles, b.opt.abRounds, T)
	b.res.md("libmpiscope:\n\n")
	b.res.mdHead([]string{"benchmark", "timer (2 reads)", "clock2 (refwrap in place)", "off", "profile", "trace", "profile / timer", "trace / timer", "profile / 2 isolated reads", "profile - 2 isolated reads (ns)", "controls"})
	med := func(lib, n, mode string) stats { return summarize(diffs[lib][n][mode]) }
	res := map[string]any{}
	verdicts := map[string]string{}
	for _, n := range order {
		tm, pr, tr := med("mpiscope", n, "timer"), med("mpiscope", n, "profile"), med("mpiscope", n, "trace")
		v := abControls(med("no library", n, "profile").Med, med("pass-through", n, "profile").Med,
			med("pass-through", n, "off").Med, med("mpiscope", n, "off").Med)
		verdicts[n] = v
		b.res.md("| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %.2f | %.1f | %s |\n", n, tm, med("mpiscope", n, "clock2"), med("mpiscope", n, "off"), pr, tr, pr.Med/tm.Med, tr.Med/tm.Med, pr.Med/(2*T.Med), pr.Med-2*T.Med, v)
		b.res.t.abRow(b.f.Name, n+" (in-process)", v, T.Med, tm.Med, pr.Med, tr.Med, med("mpiscope", n, "off").Med,
			med("no library", n, "profile").Med, med("pass-through", n, "profile").Med, med("pass-through", n, "off").Med,
			med("pass-through linked", n, "profile").Med, med("pass-through linked", n, "off").Med)
	}
	b.res.md("\n`controls`: ok when modes that run the same code measure within %.0f ns of each other (no library: profile against none; pass-through: profile against its off) "+
		"and libmpiscope's `off` is not more than %.0f ns below the pass-through build's (recording off does one load and a branch more than it, so less would mean the time does not add up on that path). "+
		"Rows whose controls fail do not measure the wrapper's cost. The pass-through build's cost over none is the floor of interposition (its own target).\n", abNoise, abNoise)
	res["controls"] = verdicts
	b.res.md("\nControls, (mode - none) per call, median over rounds: with no library every mode but timer calls the same MPI_ functions of the MPI library (noise of the method); with the pass-through build they run its wrappers, which only call PMPI_ (the floor of interposition). `off` of libmpiscope minus `off` of the pass-through build is Pcontrol(0)'s cost over the pass-through build.\n\n")
	b.res.mdHead([]string{"benchmark", "no library: timer", "no library: profile", "pass-through: profile", "pass-through: off", "libmpiscope off - pass-through off",
		"pass-through linked: profile", "pass-through linked: off"})
	for _, n := range order {
		b.res.md("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, med("no library", n, "timer").Med, med("no library", n, "profile").Med,
			med("pass-through", n, "profile").Med, med("pass-through", n, "off").Med, med("mpiscope", n, "off").Med-med("pass-through", n, "off").Med,
			med("pass-through linked", n, "profile").Med, med("pass-through linked", n, "off").Med)
	}
	if nl := len(b.bins); nl > 1 {
		b.res.md("\nBy program layout (round r at layout r mod %d; the program's code shifted by %s bytes, bench/progs/pad.c): (mode - none) per call, median over the layout's rounds, one value per layout, ns:\n\n",
			nl, intList(layoutPads[:nl]))
		shown := [][2]string{{"no library", "profile"}, {"pass-through", "profile"}, {"pass-through linked", "profile"}, {"mpiscope", "off"}, {"mpiscope", "profile"}}
		head := []string{"benchmark"}
		for _, c := range shown {
			head = append(head, c[0]+": "+c[1])
		}
		b.res.mdHead(head)
		for _, n := range order {
			b.res.md("| %s |", n)
			for _, c := range shown {
				b.res.md(" %s |", layoutCells(diffs[c[0]][n][c[1]], nl))
			}
			b.res.md("\n")
		}
	}
	if len(vars) > 0 {
		b.res.md("\nVariants (-variants), run in the same rounds, ns per call, median over rounds: off minus none (for a pass-through build, the floor of interposition), profile and trace minus the same run's timer; the pass-through build and libmpiscope first.\n\n")
		head := []string{"benchmark", "pass-through off", "libmpiscope off", "libmpiscope profile", "libmpiscope trace"}
		for _, v := range vars {
			head = append(head, v.name+" off", v.name+" profile", v.name+" trace")
		}
		b.res.mdHead(head)
		over := func(lib, n, mode string) float64 {
			return summarize(diffs[lib][n][mode]).Med - summarize(diffs[lib][n]["timer"]).Med
		}
		for _, n := range order {
			b.res.md("| %s | %.1f | %.1f | %.1f | %.1f |", n, med("pass-through", n, "off").Med, med("mpiscope", n, "off").Med, over("mpiscope", n, "profile"), over("mpiscope", n, "trace"))
			for _, v := range vars {
				b.res.md(" %.1f | %.1f | %.1f |", med(v.name, n, "off").Med, over(v.name, n, "profile"), over(v.name, n, "trace"))
			}
			b.res.md("\n")
		}
	}
	for _, l := range libs {
		res[l.name] = diffs[l.name]
	}
	res["tsc"] = tscs
	res["calls"] = calls
	b.res.raw[b.f.Name+"/ab"] = res
	return nil
}

// abRow records one in-process row against the targets (medians over
// rounds, ns per call; tsc is one isolated read). A row whose controls
// fail measures no cost; its pass-through rows count only when the method
// itself resolves the row (no library within abNoise).
func (ts *targets) abRow(fam, row, controls string, tsc, timer, prof, trace, off, noLib, ptProfile, ptOff, linkedProfile, linkedOff float64) {
	for _, t := range []struct {
		tg           *target
		build        string
		profile, off float64
	}{{ts.pass, "pass-through", ptProfile, ptOff}, {ts.passLinked, "linked", linkedProfile, linkedOff}} {
		if math.Abs(noLib) > abNoise {
			t.tg.skip(fam, row, fmt.Sprintf("no library measures %.1f ns against itself", noLib))
			continue
		}
		t.tg.Rows = append(t.tg.Rows, tRow{Family: fam, Row: row + ", " + t.build + " profile", Value: t.profile, Limit: abNoise, Abs: true},
			tRow{Family: fam, Row: row + ", " + t.build + " off", Value: t.off, Limit: abNoise, Abs: true})
	}
	if controls != "ok" {
		for _, t := range []*target{ts.profile, ts.trace, ts.pcontrol, ts.inPlace} {
			t.skip(fam, row, "controls "+controls)
		}
		return
	}
	ts.profile.add(fam, row, prof/(2*tsc), fmt.Sprintf("%.1f ns", prof))
	ts.trace.add(fam, row, trace/(2*tsc), fmt.Sprintf("%.1f ns", trace))
	ts.pcontrol.add(fam, row, off-ptOff, "")
	ts.inPlace.add(fam, row, prof/timer, fmt.Sprintf("%.1f over %.1f ns", prof, timer))
}
