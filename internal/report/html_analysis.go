package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The HTML report's sections of the profile's later parts, with the text
// report's rows and numbers: overhead compensation (profile.CompRanks and
// CompFuncs), the wait states measured online (profile.Waits), the trace
// analysis made in the job (profile.Analysis: wait states per pattern,
// rank, function, callsite and communicator, the critical path with each
// rank's, function's and callsite's share, delay costs) and the call paths
// (profile.Paths: the top paths as indented frames, and each function's
// calls by caller). Each is present only when the profile has its data.
// Large jobs: per-rank tables keep the HTMLRows ranks with the most time
// (a note says how many more), and the patterns show their spread over
// ranks (least, mean and most, with the ranks) rather than one row each.

// hsec is a cell of seconds (six decimals, as the text report), sorted by
// its exact value.
func hsec(s float64) hcell { return hn(secs(s), finite(s)) }

// hpct is a cell of v as a percentage of of.
func hpct(v, of float64) hcell {
	if of <= 0 {
		return hn("-", 0)
	}
	return hn(fracPct(v, of), finite(100*v/of))
}

// byRankSpread is the least, mean and most of a per-rank slice, with the
// world ranks that hold the extremes (ranks maps an index to its rank).
func byRankSpread(v []float64, ranks []int) (mn float64, mnR int, mean float64, mx float64, mxR int) {
	rank := func(i int) int {
		if i < len(ranks) {
			return ranks[i]
		}
		return i
	}
	var sum float64
	for i, x := range v {
		if i == 0 || x < mn {
			mn, mnR = x, rank(i)
		}
		if i == 0 || x > mx {
			mx, mxR = x, rank(i)
		}
		sum += x
	}
	if len(v) > 0 {
		mean = sum / float64(len(v))
	}
	return
}

func htmlComp(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.CompRanks) == 0 {
		return
	}
	measured := map[int]profile.Rank{}
	var maxNs int64
	for _, r := range p.Ranks {
		measured[r.Rank] = r
		maxNs = max(maxNs, r.AppNs)
	}
	u := pickUnit(float64(maxNs))
	hsection(b, "comp", "Overhead compensation (MPISCOPE_COMPENSATE=1; times in "+u.name+")")
	var call, in, coll, delay float64
	for _, c := range p.CompRanks {
		call += c.CallNs
		in += c.InNs
		coll += c.CollNs
		delay += float64(c.DelayNs)
	}
	n := float64(len(p.CompRanks))
	b.WriteString("<p>Calibrated at MPI_Init, mean over ranks: " + ns1(call/n) + " ns per call outside MPI, " + ns1(in/n) +
		" ns per message side inside, " + ns1(coll/n) + " ns per blocking collective. Subtracted from the application time, mean over ranks: " +
		esc(human(int64(delay/n))) + ".</p>\n")
	t := newHTable("t-comp-ranks", R("Rank"), R("Per call (ns)"), R("Calls"), R("Subtracted"), R("App"), R("App comp."), R("MPI"), R("MPI comp."))
	idx := sortedIdx(len(p.CompRanks), func(i, j int) int {
		a, c := p.CompRanks[i], p.CompRanks[j]
		return cmp.Or(cmp.Compare(c.DelayNs, a.DelayNs), cmp.Compare(a.Rank, c.Rank))
	})
	if k := htmlLimit(o, len(idx)); o.All || k == len(idx) {
		idx = sortedIdx(len(p.CompRanks), func(i, j int) int { return cmp.Compare(p.CompRanks[i].Rank, p.CompRanks[j].Rank) })
	} else {
		t.notes = append(t.notes, fmt.Sprintf("the %d ranks with the most time subtracted", k))
	}
	shown := htmlLimit(o, len(idx))
	for _, i := range idx[:shown] {
		c := p.CompRanks[i]
		m := measured[c.Rank]
		t.addAttr(`data-rank="`+strconv.Itoa(c.Rank)+`"`, hi(int64(c.Rank)), hn(ns1(c.CallNs), c.CallNs), hi(c.Calls), hn(u.i(c.DelayNs), float64(c.DelayNs)),
			hn(u.i(m.AppNs), float64(m.AppNs)), hn(u.i(c.AppNs), float64(c.AppNs)), hn(u.i(m.MPINs), float64(m.MPINs)), hn(u.i(c.MPINs), float64(c.MPINs)))
	}
	t.more(shown, len(idx))
	t.render(b)
	if len(p.CompFuncs) > 0 {
		byName := map[string]profile.Func{}
		for _, f := range p.Funcs {
			byName[f.Name] = f
		}
		ft := newHTable("t-comp-funcs", L("Function"), R("Calls"), R("MPI time"), R("Compensated"), R("Difference"))
		fidx := sortedIdx(len(p.CompFuncs), func(i, j int) int {
			a, c := p.CompFuncs[i], p.CompFuncs[j]
			return cmp.Or(cmp.Compare(byName[c.Name].TimeNs, byName[a.Name].TimeNs), strings.Compare(a.Name, c.Name))
		})
		shown = htmlLimit(o, len(fidx))
		for _, i := range fidx[:shown] {
			c := p.CompFuncs[i]
			m := byName[c.Name]
			ft.addAttr(`data-func="`+esc(c.Name)+`"`, hs(c.Name), hi(m.Calls), hn(u.i(m.TimeNs), float64(m.TimeNs)), hn(u.i(c.TimeNs), float64(c.TimeNs)),
				hn(u.i(c.TimeNs-m.TimeNs), float64(c.TimeNs-m.TimeNs)))
		}
		ft.more(shown, len(fidx))
		ft.render(b)
	}
	b.WriteString("</section>\n")
}

func htmlWaits(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Waits) == 0 {
		return
	}
	u := unitOf(p.Waits, func(w profile.Wait) int64 { return w.WaitNs })
	hsection(b, "waits", "Wait states measured online (MPISCOPE_PIGGYBACK=1; times in "+u.name+")")
	t := newHTable("t-waits", L("Kind"), L("Function"), L("Callsite"), L("Comm"), R("Calls"), R("Wait"), R("Max"), R("Rank"), R("Waited for"), R("Mean/rank"))
	idx := sortedIdx(len(p.Waits), func(i, j int) int { return cmp.Compare(p.Waits[j].WaitNs, p.Waits[i].WaitNs) })
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		w := p.Waits[i]
		mean := int64(0)
		if w.RankWait.N > 0 {
			mean = int64(w.RankWait.Sum / float64(w.RankWait.N))
		}
		t.addAttr(`data-func="`+esc(w.Func)+`"`, hs(w.Kind), hs(w.Func), hs(location(w.Loc, true)), hs(orDash(w.Comm)), hi(w.Calls),
			hn(u.i(w.WaitNs), float64(w.WaitNs)), hn(u.i(w.MaxNs), float64(w.MaxNs)), hi(int64(w.MaxRank)), hi(int64(w.MaxPeer)), hn(u.i(mean), float64(mean)))
	}
	t.more(n, len(idx))
	t.notes = append(t.notes, "Rank: the rank that waited longest in one call; Waited for: the rank it waited for then (the sender, the last to arrive, or the root)")
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlAnalysis(b *strings.Builder, p *profile.Profile, o Options) {
	a := p.Analysis
	if a == nil {
		return
	}
	hsection(b, "analysis", "Trace analysis (in the job, MPISCOPE_ANALYZE=1; times in s)")
	fmt.Fprintf(b, "<p>%d ranks, %d events, %d calls, %s s traced; %d messages and %d collectives matched", len(a.Ranks), a.Events,
		a.Calls, secs(a.Seconds), a.Messages, a.Colls)
	if a.Unmatched > 0 {
		fmt.Fprintf(b, ", %d message ends unmatched", a.Unmatched)
	}
	b.WriteString(esc(rmaSummary(a.RMA)))
	b.WriteString(".</p>\n")
	for _, w := range a.Warnings {
		b.WriteString(`<p class="warn">warning: ` + esc(w) + "</p>\n")
	}

	fmt.Fprintf(b, "<h3>Wait states (Scalasca's patterns; %% of the analyzed ranks' MPI time, %s s)</h3>\n", secs(a.MPISeconds))
	t := newHTable("t-an-patterns", L("Wait state"), R("Seconds"), R("% MPI"), R("Instances"), R("Rank min"), R("(rank)"), R("Rank mean"),
		R("Rank max"), R("(rank)"))
	for _, pt := range a.Patterns {
		mn, mnR, mean, mx, mxR := byRankSpread(pt.ByRank, a.Ranks)
		t.addAttr(`data-pattern="`+esc(pt.Pattern)+`"`, hs(orDash(analysisTitles[pt.Pattern])), hsec(pt.Seconds), hpct(pt.Seconds, a.MPISeconds),
			hi(pt.Instances), hsec(mn), hn("("+strconv.Itoa(mnR)+")", float64(mnR)), hsec(mean), hsec(mx), hn("("+strconv.Itoa(mxR)+")", float64(mxR)))
	}
	t.render(b)

	if len(a.Rows) > 0 {
		b.WriteString("<h3>Wait states per rank, function, callsite and communicator</h3>\n")
		t = newHTable("t-an-rows", L("Wait state"), R("Rank"), L("Function"), L("Callsite"), L("Caller"), L("Comm"), R("Seconds"), R("Instances"))
		n := htmlLimit(o, len(a.Rows))
		for _, r := range a.Rows[:n] {
			t.addAttr(`data-pattern="`+esc(r.Pattern)+`" data-rank="`+strconv.Itoa(r.Rank)+`"`, hs(orDash(analysisTitles[r.Pattern])), hi(int64(r.Rank)),
				hs(r.Func), hs(orDash(r.Callsite)), hs(orDash(r.Caller)), hs(orDash(r.Comm)), hsec(r.Seconds), hi(r.Instances))
		}
		t.more(n, len(a.Rows))
		t.render(b)
	}

	cp := &a.Path
	fmt.Fprintf(b, "<h3>Critical path</h3>\n<p id=\"critical-path\">%s s, from rank %d to rank %d, %d moves between ranks; computation %s s (%s %%), MPI %s s.</p>\n",
		secs(cp.Seconds), cp.StartRank, cp.EndRank, cp.Jumps, secs(cp.Computation), fracPct(cp.Computation, cp.Seconds), secs(cp.MPI))
	if len(cp.ByRank) > 0 {
		t = newHTable("t-an-path-ranks", R("Rank"), R("Seconds"), R("% path"))
		idx := sortedIdx(len(cp.ByRank), func(i, j int) int { return cmp.Compare(cp.ByRank[j], cp.ByRank[i]) })
		on := 0
		for _, i := range idx {
			if cp.ByRank[i] > 0 {
				on++
			}
		}
		n := htmlLimit(o, on)
		for _, i := range idx[:n] {
			rank := i
			if i < len(a.Ranks) {
				rank = a.Ranks[i]
			}
			t.addAttr(`data-rank="`+strconv.Itoa(rank)+`"`, hi(int64(rank)), hsec(cp.ByRank[i]), hpct(cp.ByRank[i], cp.Seconds))
		}
		t.more(n, on)
		b.WriteString("<p>Ranks on the path (each rank's share; ranks never on it are left out):</p>\n")
		t.render(b)
	}
	if len(cp.Funcs) > 0 {
		t = newHTable("t-an-path-funcs", L("Function"), R("Seconds"), R("% path"))
		n := htmlLimit(o, len(cp.Funcs))
		for _, s := range cp.Funcs[:n] {
			t.addAttr(`data-func="`+esc(s.Func)+`"`, hs(s.Func), hsec(s.Seconds), hpct(s.Seconds, cp.Seconds))
		}
		t.more(n, len(cp.Funcs))
		b.WriteString("<p>MPI functions on the path (the rest is computation):</p>\n")
		t.render(b)
	}
	if len(cp.Callsites) > 0 {
		t = newHTable("t-an-path-sites", L("Function"), L("Callsite"), L("Caller"), R("Seconds"), R("% path"))
		n := htmlLimit(o, len(cp.Callsites))
		for _, s := range cp.Callsites[:n] {
			t.addAttr(`data-func="`+esc(s.Func)+`"`, hs(s.Func), hs(orDash(s.Callsite)), hs(orDash(s.Caller)), hsec(s.Seconds), hpct(s.Seconds, cp.Seconds))
		}
		t.more(n, len(cp.Callsites))
		b.WriteString("<p>MPI calls on the path, by callsite:</p>\n")
		t.render(b)
	}
	if len(a.Delays) > 0 {
		b.WriteString("<h3>Delay costs</h3>\n<p>The waiting a rank's activity before a call caused (short term: the waits it caused; long term: those they caused in turn).</p>\n")
		t = newHTable("t-an-delays", R("Rank"), L("Before"), L("Callsite"), L("Caller"), R("Seconds"), R("Short term"), R("Long term"), R("Waits"))
		n := htmlLimit(o, len(a.Delays))
		for _, d := range a.Delays[:n] {
			t.addAttr(`data-rank="`+strconv.Itoa(d.Rank)+`"`, hi(int64(d.Rank)), hs(d.Func), hs(orDash(d.Callsite)), hs(orDash(d.Caller)),
				hsec(d.Seconds), hsec(d.Short), hsec(d.Long), hi(d.Instances))
		}
		t.more(n, len(a.Delays))
		t.render(b)
	}
	b.WriteString("</section>\n")
}

// pathLines is a path's frames, one per line, each caller indented one
// step more than the frame it called (the table cell keeps the layout).
func pathLines(q profile.Path) []string {
	var l []string
	for d, f := range q.Frames {
		l = append(l, strings.Repeat("  ", d)+frameText(f))
	}
	if q.Other {
		l = append(l, "(other paths: a thread's path table was full; callsite only)")
	}
	return l
}

func htmlPaths(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Paths) == 0 {
		return
	}
	u := unitOf(p.Paths, func(q profile.Path) int64 { return q.TimeNs })
	hsection(b, "paths", "Top call paths (by time; times in "+u.name+"; the callsite first, then each caller, indented)")
	idx := pathOrder(p)
	t := newHTable("t-paths", R("#"), L("Function"), L("Call path"), R("Frames"), L("Region"), R("Calls"), R("Time"), R("%MPI"), R("Bytes"))
	n := htmlLimit(o, len(idx))
	for k, i := range idx[:n] {
		q := p.Paths[i]
		pm := pct(q.TimeNs, tot.mpiNs)
		t.addAttr(`data-func="`+esc(q.Func)+`"`, hi(int64(k+1)), hs(q.Func), hlines(pathLines(q)...), hi(int64(len(q.Frames))), hs(orDash(q.Region)),
			hi(q.Calls), hn(u.i(q.TimeNs), float64(q.TimeNs)), hn(pctStr(pm), pm), hi(q.Bytes))
	}
	t.more(n, len(idx))
	t.render(b)
	l, ctot := callers(p)
	if len(l) > 0 {
		b.WriteString("<h3>Callers (each MPI function in each function that calls it, by caller)</h3>\n")
		cidx := sortedIdx(len(l), func(i, j int) int {
			a, c := l[i], l[j]
			ta, tc := ctot[[2]string{a.fn, a.site}], ctot[[2]string{c.fn, c.site}]
			return cmp.Or(cmp.Compare(tc, ta), strings.Compare(a.fn, c.fn), strings.Compare(a.site, c.site),
				cmp.Compare(c.timeNs, a.timeNs), strings.Compare(a.from, c.from))
		})
		ct := newHTable("t-callers", L("Function"), L("In"), L("Called from"), R("Calls"), R("Time"), R("%"))
		n := htmlLimit(o, len(cidx))
		for _, i := range cidx[:n] {
			c := l[i]
			pc := pct(c.timeNs, ctot[[2]string{c.fn, c.site}])
			ct.addAttr(`data-func="`+esc(c.fn)+`"`, hs(c.fn), hs(c.site), hs(c.from), hi(c.calls), hn(u.i(c.timeNs), float64(c.timeNs)), hn(pctStr(pc), pc))
		}
		ct.more(n, len(cidx))
		ct.notes = append(ct.notes, `%: share of the time of that MPI function in the function in "In"`)
		ct.render(b)
	}
	b.WriteString("</section>\n")
}
