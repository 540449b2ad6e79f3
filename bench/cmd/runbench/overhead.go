package main

// The overhead section: the programs of bench/progs under every
// configuration, interleaved, round after round.

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"
)

type progRun struct {
	prog string
	np   int
	arg  string
}

// phaseFactor: a run this many times slower or faster than the lower
// quartile of its configuration's rounds ran in another phase of the VM,
// not with another overhead, and is dropped.
const phaseFactor = 1.5

var progs = []progRun{{"cheap", 1, "400000"}, {"pingpong", 2, "20000"}, {"allreduce", 2, "20000"}, {"bandwidth", 2, "20000"}}

// variant is an extra build of the library given with -variants.
type variant struct{ name, lib string }

// parseVariants reads -variants: name=lib.so,... ({family} in a path
// stands for the family's name, so that one flag serves -family all).
func parseVariants(s, fam string) ([]variant, error) {
	var vs []variant
	if s == "" {
		return nil, nil
	}
	for _, v := range strings.Split(s, ",") {
		name, lib, ok := strings.Cut(v, "=")
		if !ok || name == "" || lib == "" {
			return nil, fmt.Errorf("-variants: want name=lib.so, got %q", v)
		}
		vs = append(vs, variant{name, strings.ReplaceAll(lib, "{family}", fam)})
	}
	return vs, nil
}

func (b *bench) overhead() error {
	b.traceN = b.traceAvailable()
	cfgs := configs
	if b.traceN != "" {
		cfgs = cfgs[:nNoTrace]
	}
	nbase := len(cfgs) // the configurations run; variants follow
	vars, err := parseVariants(b.opt.variants, b.f.Name)
	if err != nil {
		return err
	}
	if len(vars) > 0 {
		cfgs = append([]config(nil), cfgs...)
		for _, v := range vars {
			lib := v.lib
			cfgs = append(cfgs, config{Name: v.name, Lib: func(*bench) string { return lib }, Env: map[string]string{"MPISCOPE_ENABLE": "1"}})
		}
	}
	// Table columns: every configuration (trace as n/a when missing), then variants.
	all := append(append([]config(nil), configs...), cfgs[nbase:]...)
	// ns[config][bench] per round; tsc/clk[config] per round (per run).
	ns := map[string]map[string][]float64{}
	calls := map[string]float64{}
	over := map[string]map[string][]float64{}   // per-call overhead vs none of the same round
	ratio := map[string]map[string][]float64{}  // overhead / (2 tsc reads of the same run)
	runTSC := map[string]map[string][]float64{} // the tsc read of each run, as ns
	var tsc, clk, loads []float64
	var benchOrder []string
	rowNP := map[string]int{} // ranks of the program that reports each row
	for _, c := range cfgs {
		ns[c.Name], over[c.Name], ratio[c.Name], runTSC[c.Name] = map[string][]float64{}, map[string][]float64{}, map[string][]float64{}, map[string][]float64{}
	}
	t0 := time.Now()
	for r := 0; r < b.opt.rounds; r++ {
		for _, p := range progs {
			for _, c := range cfgs {
				res, err := b.mpirun(p.np, c.Lib(b), c.env(b), c.prog(b, p.prog, r%len(b.bins)), p.arg)
				if err != nil {
					return err
				}
				os.RemoveAll(res.Job)
				if err := c.checkLevels(res.Stderr); err != nil {
					return fmt.Errorf("%s under %s: %v\n%s", p.prog, c.Name, err, res.Stderr)
				}
				bm, names, tm := parse(res.Stdout)
				if len(bm) == 0 || tm["tsc"] == 0 {
					return fmt.Errorf("%s under %s: no results in\n%s%s", p.prog, c.Name, res.Stdout, res.Stderr)
				}
				tsc = append(tsc, tm["tsc"])
				clk = append(clk, tm["clock"])
				for _, n := range names {
					v := bm[n]
					if r == 0 && c.Name == "none" {
						benchOrder = append(benchOrder, n)
					}
					calls[n] = v[1]
					rowNP[n] = p.np
					ns[c.Name][n] = append(ns[c.Name][n], v[0])
					runTSC[c.Name][n] = append(runTSC[c.Name][n], tm["tsc"])
				}
			}
		}
		loads = append(loads, loadavg())
		fmt.Fprintf(os.Stderr, "runbench: %s overhead round %d/%d (%.0f s, load %.2f)\n", b.f.Name, r+1, b.opt.rounds, time.Since(t0).Seconds(), loads[len(loads)-1])
	}
	// The VM has phases: for seconds to minutes every two-rank run,
	// whatever its configuration (none included), takes 2-4 x as long,
	// and now and then one runs 1.6 x faster. A run more than
	// phaseFactor x slower or faster than the lower quartile of its
	// configuration's rounds is one of them, not overhead (the largest
	// real overhead, profile or trace on the 0-byte ping-pong, is below
	// 1.4 x); a round's overhead is taken only when both its run and
	// that round's none run are kept.
	quartile := map[string]map[string]float64{} // [config][bench]
	for c, m := range ns {
		quartile[c] = map[string]float64{}
		for n, v := range m {
			q := append([]float64(nil), v...)
			sort.Float64s(q)
			quartile[c][n] = q[len(q)/4]
		}
	}
	kept := func(c, n string, r int) bool {
		ref := quartile[c][n]
		return ns[c][n][r] <= phaseFactor*ref && ns[c][n][r] >= ref/phaseFactor
	}
	dropped := map[string]int{}
	for _, n := range benchOrder {
		for _, c := range cfgs {
			for r := range ns[c.Name][n] {
				if !kept(c.Name, n, r) {
					dropped[n]++
				}
				if c.Name == "none" || !kept(c.Name, n, r) || !kept("none", n, r) {
					continue
				}
				o := (ns[c.Name][n][r] - ns["none"][n][r]) / calls[n]
				over[c.Name][n] = append(over[c.Name][n], o)
				ratio[c.Name][n] = append(ratio[c.Name][n], o/(2*runTSC[c.Name][n][r]))
			}
		}
	}
	T, C := summarize(tsc), summarize(clk)
	b.res.md("\n## Overhead per call (%s)\n\n", b.f.Name)
	b.res.md("%d rounds, configurations interleaved within each round (none, none2 = none again, passthrough = the pass-through build preloaded, "+
		"pt-linked = the same wrappers linked into the program from their static archive, profile, pcontrol0%s), "+
		"each run one mpirun. Values: median [min, max] over rounds.\n\n", b.opt.rounds, map[bool]string{true: ", trace", false: ""}[b.traceN == ""])
	b.res.md("1-minute load average after each round (2 = both CPUs busy with the benchmark; more = other work on the machine): %s.\n\n", summarize(loads))
	b.res.md("Timestamp reads measured in the same runs (%d runs): rdtsc %s ns, clock_gettime %s ns; "+
		"two rdtsc reads (the profile's timer here) = %.1f ns.\n\n", len(tsc), T, C, 2*T.Med)
	b.res.md("Time per iteration (ns):\n\n")
	b.res.mdHead(append([]string{"benchmark", "calls/iter"}, names(all)...))
	for _, n := range benchOrder {
		b.res.md("| %s | %g |", n, calls[n])
		for _, c := range all {
			if _, ok := ns[c.Name]; !ok {
				b.res.md(" n/a |")
				continue
			}
			b.res.md(" %s |", summarize(ns[c.Name][n]))
		}
		b.res.md("\n")
	}
	var dl []string
	for _, n := range benchOrder {
		if dropped[n] > 0 {
			dl = append(dl, fmt.Sprintf("%s %d", n, dropped[n]))
		}
	}
	if len(dl) == 0 {
		dl = []string{"none"}
	}
	b.res.md("\nRuns dropped as other phases of the VM (more than %.1f x slower or faster than the lower quartile of the same configuration's rounds), of %d per benchmark: %s.\n", phaseFactor, b.opt.rounds*len(cfgs), strings.Join(dl, ", "))
	b.res.md("\nOverhead per call: (time per iteration - same round's `none`) / calls on the critical path, in ns, and as a ratio to two timestamp reads of the same run; rounds where either run was dropped are left out (n = rounds kept):\n\n")
	cols := []string{"benchmark"}
	for _, c := range all[1:] {
		cols = append(cols, c.Name+" ns", c.Name+" ratio")
	}
	b.res.mdHead(cols)
	for _, n := range benchOrder {
		b.res.md("| %s |", n)
		for _, c := range all[1:] {
			if _, ok := over[c.Name]; !ok {
				b.res.md(" n/a | n/a |")
				continue
			}
			if len(over[c.Name][n]) == 0 {
				b.res.md(" all dropped | - |")
				continue
			}
			b.res.md(" %s n=%d | %s |", summarize(over[c.Name][n]), len(over[c.Name][n]), fmtRatio(summarize(ratio[c.Name][n])))
		}
		b.res.md("\n")
	}
	// On a shared machine a round's two-rank runs can lose their CPUs to
	// other work; the best round of each configuration estimates the cost
	// without such interference.
	b.res.md("\nOverhead per call from the best round of each configuration ((min config - min none) / calls, ns) and as a ratio to two median rdtsc reads (%.1f ns):\n\n", 2*T.Med)
	b.res.mdHead(append([]string{"benchmark"}, names(all[1:])...))
	best := map[string]map[string]float64{}
	for _, n := range benchOrder {
		b.res.md("| %s |", n)
		best[n] = map[string]float64{}
		for _, c := range all[1:] {
			if _, ok := ns[c.Name]; !ok {
				b.res.md(" n/a |")
				continue
			}
			o := (summarize(ns[c.Name][n]).Min - summarize(ns["none"][n]).Min) / calls[n]
			best[n][c.Name] = o
			b.res.md(" %.1f (%.2f) |", o, o/(2*T.Med))
		}
		b.res.md("\n")
	}
	// The single-rank loops against two reads in place: cheap.c's
	// <loop>_timer runs the loop's PMPI_ call between two rdtsc reads.
	inPlace := map[string]float64{}
	var ipRows []string
	for _, n := range benchOrder {
		tn := n + "_timer"
		if len(ns["none"][tn]) == 0 {
			continue
		}
		var d []float64
		for r := range ns["none"][n] {
			if r < len(ns["none"][tn]) {
				d = append(d, (ns["none"][tn][r]-ns["none"][n][r])/calls[n])
			}
		}
		inPlace[n] = summarize(d).Med
		ipRows = append(ipRows, n)
	}
	if len(ipRows) > 0 {
		b.res.md("\nSingle-rank loops against two timestamp reads in place: `<loop>_timer` is the loop with its PMPI_ call between two rdtsc reads " +
			"(a read after a call waits for that call's work, unlike a read in a loop of reads); in place = `<loop>_timer` - `<loop>` under `none`, " +
			"median over rounds; profile and trace = their median overhead per call above:\n\n")
		b.res.mdHead([]string{"loop", "two reads in place (ns)", "profile (ns)", "profile / in place", "trace (ns)", "trace / in place"})
		for _, n := range ipRows {
			p, t := summarize(over["profile"][n]).Med, summarize(over["trace"][n]).Med
			b.res.md("| %s | %.1f | %.1f | %.2f | %.1f | %.2f |\n", n, inPlace[n], p, p/inPlace[n], t, t/inPlace[n])
		}
	}
	// Pcontrol(0) over pass-through, per round.
	var pc0 = map[string][]float64{}
	for _, n := range benchOrder {
		for i := range ns["pcontrol0"][n] {
			if kept("pcontrol0", n, i) && kept("passthrough", n, i) {
				pc0[n] = append(pc0[n], (ns["pcontrol0"][n][i]-ns["passthrough"][n][i])/calls[n])
			}
		}
	}
	b.res.md("\nPcontrol(0) minus pass-through, ns per call, median [min, max]: ")
	var parts []string
	for _, n := range benchOrder {
		parts = append(parts, fmt.Sprintf("%s %s", n, summarize(pc0[n])))
	}
	b.res.md("%s.\n", strings.Join(parts, "; "))
	if b.traceN != "" {
		b.res.md("\nTrace mode: not available (%s).\n", b.traceN)
	}
	// Side by side: what each way of timing a call adds, and profile
	// mode's bookkeeping beyond its two reads.
	b.res.md("\nSide by side, ns per call added over no library (median over rounds) and / two rdtsc reads of the same run: "+
		"`refwrap` is a minimal PMPI wrapper doing two clock_gettime reads and one counter update per call (bench/progs/refwrap.c); "+
		"bookkeeping = profile - two rdtsc reads (%.1f ns):\n\n", 2*T.Med)
	b.res.mdHead([]string{"benchmark", "pcontrol0 (off)", "refwrap", "profile", "profile / 2 reads", "bookkeeping (ns)"})
	for _, n := range benchOrder {
		if strings.HasSuffix(n, "_timer") {
			continue
		}
		m := func(c string) float64 { return summarize(over[c][n]).Med }
		b.res.md("| %s | %.1f | %.1f (%.2f) | %.1f | %.2f | %.1f |\n", n, m("pcontrol0"), m("refwrap"), summarize(ratio["refwrap"][n]).Med,
			m("profile"), summarize(ratio["profile"][n]).Med, m("profile")-2*T.Med)
	}
	// Stacked levels (MPISCOPE_STACK, docs/stacking.md): each round's
	// difference between configurations run in the same round.
	diff := func(a, c, n string) []float64 {
		var d []float64
		for r := range ns[a][n] {
			if r < len(ns[c][n]) && kept(a, n, r) && kept(c, n, r) {
				d = append(d, (ns[a][n][r]-ns[c][n][r])/calls[n])
			}
		}
		return d
	}
	stack := map[string]map[string][]float64{}
	b.res.md("\nStacked levels below profile mode (MPISCOPE_STACK with the reference wrapper as the tool), ns per call, median [min, max] over rounds: " +
		"first level = stack1 - profile, second level = stack2 - stack1, a level that is off = stack1-off - profile (REFWRAP=off: the tool only calls PMPI_):\n\n")
	b.res.mdHead([]string{"benchmark", "first level", "second level", "level off"})
	for _, n := range benchOrder {
		if strings.HasSuffix(n, "_timer") {
			continue
		}
		stack[n] = map[string][]float64{"first": diff("stack1", "profile", n), "second": diff("stack2", "stack1", n), "off": diff("stack1-off", "profile", n)}
		b.res.md("| %s | %s | %s | %s |\n", n, summarize(stack[n]["first"]), summarize(stack[n]["second"]), summarize(stack[n]["off"]))
	}
	b.res.raw[b.f.Name+"/stack"] = stack
	// By layout: the medians above pool the layouts; this shows how far
	// each configuration's cost moves with the program's layout.
	byLayout := map[string]map[string][]*float64{} // [config][bench][layout], nil: every round dropped
	if nl := len(b.bins); nl > 1 {
		b.res.md("\nBy program layout (round r runs every configuration at layout r mod %d; the programs' code shifted by %s bytes, bench/progs/pad.c). "+
			"`none`: its median time per iteration at the layout minus that at the first, per call; the others: their overhead per call over the same round's `none` "+
			"(as above), median over the layout's rounds kept. One value per layout, ns:\n\n", nl, intList(layoutPads[:nl]))
		shown := []string{"none", "none2", "passthrough", "pt-linked", "pcontrol0", "profile"}
		b.res.mdHead(append([]string{"benchmark"}, shown...))
		for _, n := range benchOrder {
			if strings.HasSuffix(n, "_timer") {
				continue
			}
			b.res.md("| %s |", n)
			for _, c := range shown {
				if byLayout[c] == nil {
					byLayout[c] = map[string][]*float64{}
				}
				// none: its time per round; the others: their overhead
				// per call over the round's none (over's values, by round).
				v := ns[c][n]
				keep := func(r int) bool { return kept(c, n, r) }
				if c != "none" {
					v = make([]float64, len(ns[c][n]))
					for r := range v {
						v[r] = (ns[c][n][r] - ns["none"][n][r]) / calls[n]
					}
					keep = func(r int) bool { return kept(c, n, r) && kept("none", n, r) }
				}
				meds := layoutMedians(v, nl, keep)
				var cells []string
				for _, m := range meds {
					if c == "none" {
						m = (m - meds[0]) / calls[n]
					}
					if math.IsNaN(m) {
						byLayout[c][n] = append(byLayout[c][n], nil)
						cells = append(cells, "-")
					} else {
						byLayout[c][n] = append(byLayout[c][n], &m)
						cells = append(cells, fmt.Sprintf("%.1f", m))
					}
				}
				b.res.md(" %s |", strings.Join(cells, " / "))
			}
			b.res.md("\n")
		}
	}
	// Verdicts: the single-rank loops here; the two-rank rows come from the
	// modes alternating in one process (ab), which share the VM's phase.
	for _, n := range benchOrder {
		if rowNP[n] != 1 || strings.HasSuffix(n, "_timer") {
			continue
		}
		row := n + " (single-rank runs)"
		if n == "wtime" {
			// Not recorded: judged against the off path, not the reads.
			b.res.t.clock.add(b.f.Name, row, summarize(diff("profile", "pcontrol0", n)).Med, fmt.Sprintf("profile %.1f, off %.1f ns over none", summarize(over["profile"][n]).Med, summarize(over["pcontrol0"][n]).Med))
			continue
		}
		p := summarize(over["profile"][n]).Med
		b.res.t.profile.add(b.f.Name, row, summarize(ratio["profile"][n]).Med, fmt.Sprintf("%.1f ns", p))
		if b.traceN == "" {
			b.res.t.trace.add(b.f.Name, row, summarize(ratio["trace"][n]).Med, fmt.Sprintf("%.1f ns", summarize(over["trace"][n]).Med))
		} else {
			b.res.t.trace.skip(b.f.Name, row, b.traceN)
		}
		b.res.t.pcontrol.add(b.f.Name, row, summarize(pc0[n]).Med, "")
		// The pass-through build's cost counts only where the method
		// resolves it: no library measures within passNoise of itself.
		aa := summarize(over["none2"][n]).Med
		for _, t := range []struct {
			tg  *target
			cfg string
		}{{b.res.t.pass, "passthrough"}, {b.res.t.passLinked, "pt-linked"}} {
			if math.Abs(aa) <= passNoise {
				t.tg.Rows = append(t.tg.Rows, tRow{Family: b.f.Name, Row: row, Value: summarize(over[t.cfg][n]).Med, Limit: passNoise})
			} else {
				t.tg.skip(b.f.Name, row, fmt.Sprintf("no library measures %.1f ns against itself (none2 - none)", aa))
			}
		}
		b.res.t.book.add(b.f.Name, row, p-2*T.Med, fmt.Sprintf("%.1f - 2 x %.1f ns", p, T.Med))
		b.res.t.stackOff.Rows = append(b.res.t.stackOff.Rows, tRow{Family: b.f.Name, Row: row, Value: summarize(stack[n]["off"]).Med, Limit: passNoise, Abs: true})
		for _, l := range []string{"first", "second"} {
			b.res.t.stackLevel.add(b.f.Name, row+", "+l+" level", summarize(stack[n][l]).Med, "")
		}
		if ip := inPlace[n]; ip > 0 {
			b.res.t.inPlace.add(b.f.Name, row, p/ip, fmt.Sprintf("%.1f over %.1f ns", p, ip))
		}
	}
	b.res.raw[b.f.Name+"/overhead"] = map[string]any{"ns": ns, "run_tsc": runTSC, "phase_dropped": dropped, "overhead": over, "ratio": ratio, "tsc": tsc, "clock": clk, "calls": calls, "pcontrol0_minus_passthrough": pc0, "two_reads_in_place": inPlace, "trace": b.traceN, "load": loads, "best_overhead": best,
		"layout_pads": layoutPads[:len(b.bins)], "by_layout": byLayout}
	return nil
}
