package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mpiscope/mpiscope/profile"
)

const ruleWidth = 79

// section writes a section rule with its title.
func section(b *strings.Builder, title string) {
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	head := "@--- " + title + " "
	b.WriteString(head)
	if n := ruleWidth - len(head); n > 0 {
		b.WriteString(strings.Repeat("-", n))
	}
	b.WriteByte('\n')
}

// more writes the truncation line when shown < total.
func more(t *table, shown, total int) {
	if shown < total {
		t.note(fmt.Sprintf("(%d more; use --all)", total-shown))
	}
}

func text(p *profile.Profile, o Options) string {
	var b strings.Builder
	tot := computeTotals(p)
	textHeader(&b, p, o, tot)
	textComp(&b, p, o) // compensate.go
	textOff(&b, p)
	textBusy(&b, p, o)
	textRanks(&b, p, o, tot)
	textFuncs(&b, p, o, tot)
	textSites(&b, p, o, tot)
	textPaths(&b, p, o, tot) // paths.go
	textHists(&b, p, o)
	textComms(&b, p, o, tot)
	textPeers(&b, p, o)
	textRegions(&b, p, o)
	textEvents(&b, p, o)
	textWaits(&b, p, o)    // wait.go
	textAnalysis(&b, p, o) // analysis.go
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func utc(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// status says whether the profile is the job's final one, a snapshot or
// partial, and why it is partial: from the writers' flag (Meta.Partial),
// the ranks' states and the ranks without data. A partial profile is never
// called final; a job whose ranks each wrote their own file at the end of
// their run (the sessions model ends at MPI_Session_finalize) is final.
func status(p *profile.Profile) string {
	m := p.Meta
	states := map[string]int{}
	for _, r := range p.Ranks {
		states[r.State]++
	}
	ranks := func(n int) string {
		if n == 1 {
			return "1 rank"
		}
		return strconv.Itoa(n) + " ranks"
	}
	var why []string
	if states["abort"] > 0 {
		why = append(why, "a rank called MPI_Abort")
	}
	if n := states["signal"]; n > 0 {
		why = append(why, ranks(n)+" stopped by a signal before MPI_Finalize")
	}
	if n := states["exit"]; n > 0 {
		why = append(why, ranks(n)+" exited without MPI_Finalize")
	}
	if miss := m.NumRanks - len(p.Ranks); miss > 0 {
		why = append(why, fmt.Sprintf("%d of %d ranks have no data", miss, m.NumRanks))
	}
	var s string
	if m.Snapshot > 0 {
		// A snapshot is partial by nature: only what else is missing.
		s = "snapshot " + strconv.Itoa(m.Snapshot) + " (taken while the job ran)"
		if len(why) == 0 {
			return s
		}
		s += "; "
	} else if !m.Partial && len(why) == 0 {
		return "final"
	}
	if len(why) == 0 {
		why = append(why, "some ranks wrote their data before MPI_Finalize")
	}
	return s + "partial: " + strings.Join(why, "; ")
}

// field is a row of the report's header.
type field struct{ k, v string }

// metaFields are the header's rows from the command to the timer, the
// same in every format.
func metaFields(p *profile.Profile, o Options) []field {
	m := p.Meta
	f := []field{{"Command", orDash(commandLine(m.Command))}}
	if o.Source != "" {
		f = append(f, field{"Source", o.Source})
	}
	ranks := strconv.Itoa(m.NumRanks)
	if len(p.Ranks) != m.NumRanks {
		ranks += fmt.Sprintf(" (%d in this profile)", len(p.Ranks))
	}
	hosts := strconv.Itoa(len(m.Hosts))
	if len(m.Hosts) > 0 {
		names := m.Hosts[:min(len(m.Hosts), 8)]
		hosts += " (" + strings.Join(names, ", ")
		if len(m.Hosts) > len(names) {
			hosts += fmt.Sprintf(", ... %d more", len(m.Hosts)-len(names))
		}
		hosts += ")"
	}
	dur := "-"
	if m.StartNs != 0 && m.StopNs >= m.StartNs {
		dur = human(m.StopNs - m.StartNs)
	}
	return append(f,
		field{"Ranks", ranks},
		field{"Hosts", hosts},
		field{"MPI library", orDash(oneLine(m.MPILibrary))},
		field{"MPI version", orDash(m.MPIVersion)},
		field{"Family", orDash(m.Family)},
		field{"Start (UTC)", utc(m.StartNs)},
		field{"Stop (UTC)", utc(m.StopNs)},
		field{"Duration", dur},
		field{"mpiscope", orDash(m.Tool)},
		field{"Timer", orDash(m.Timer)})
}

// rankStates counts the ranks by the state they ended in ("final 3,
// partial 1"); "" when every rank is final.
func rankStates(p *profile.Profile) string {
	states := map[string]int{}
	for _, r := range p.Ranks {
		states[orDash(r.State)]++
	}
	if len(states) == 0 || (len(states) == 1 && states["final"] > 0) {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(states)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, states[k]))
	}
	return strings.Join(parts, ", ")
}

func textHeader(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	m := p.Meta
	section(b, "mpiscope report")
	for _, n := range o.Notes {
		b.WriteString("NOTE: " + ascii(n) + "\n")
	}
	kv := func(k, v string) { fmt.Fprintf(b, "%-13s: %s\n", k, ascii(v)) }
	for _, f := range metaFields(p, o) {
		kv(f.k, f.v)
	}
	if len(m.Settings) == 0 {
		kv("Settings", "-")
	}
	for i, s := range m.Settings {
		if i == 0 {
			kv("Settings", s.Name+"="+s.Value)
		} else {
			b.WriteString(strings.Repeat(" ", 15) + ascii(s.Name+"="+s.Value) + "\n")
		}
	}
	kv("Status", status(p))
	if st := rankStates(p); st != "" {
		kv("Rank states", st)
	}
	if tot.dropped > 0 {
		kv("Dropped", fmt.Sprintf("%d records lost because a fixed table was full; totals are lower bounds", tot.dropped))
	}
}

func textRanks(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	var maxNs int64
	for _, r := range p.Ranks {
		maxNs = max(maxNs, r.AppNs, r.MPINs)
	}
	maxNs = max(maxNs, tot.appNs, tot.mpiNs)
	u := pickUnit(float64(maxNs))
	section(b, "MPI time per rank (times in "+u.name+")")
	if len(p.Ranks) == 0 {
		b.WriteString("(no rank data)\n")
		return
	}
	t := newTable(R("Rank"), L("Host"), R("App time"), R("MPI time"), R("MPI%"), R("Calls"))
	addRank := func(r profile.Rank) {
		t.add(strconv.Itoa(r.Rank), orDash(r.Host), u.i(r.AppNs), u.i(r.MPINs), pctStr(pct(r.MPINs, r.AppNs)), itoa(r.Calls))
	}
	top := o.top()
	if o.All || len(p.Ranks) <= 2*top {
		for _, r := range p.Ranks {
			addRank(r)
		}
	} else {
		idx := sortedIdx(len(p.Ranks), func(i, j int) int {
			a, c := p.Ranks[i], p.Ranks[j]
			return cmp.Or(cmp.Compare(pct(c.MPINs, c.AppNs), pct(a.MPINs, a.AppNs)), cmp.Compare(a.Rank, c.Rank))
		})
		for _, i := range idx[:top] {
			addRank(p.Ranks[i])
		}
		t.note(fmt.Sprintf("... (%d ranks elided; showing the %d highest and %d lowest MPI%%; use --all)", len(idx)-2*top, top, top))
		for _, i := range idx[len(idx)-top:] {
			addRank(p.Ranks[i])
		}
	}
	t.add("*", "", u.i(tot.appNs), u.i(tot.mpiNs), pctStr(pct(tot.mpiNs, tot.appNs)), itoa(tot.calls))
	t.render(b, "")
}

func textFuncs(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	var maxNs int64
	var maxCall float64
	for _, f := range p.Funcs {
		maxNs = max(maxNs, f.TimeNs)
		maxCall = max(maxCall, perCall(f.TimeNs, f.Calls))
	}
	u, uc := pickUnit(float64(maxNs)), pickCallUnit(maxCall)
	section(b, fmt.Sprintf("Functions (by time; times in %s, per call in %s)", u.name, uc.name))
	if len(p.Funcs) == 0 {
		b.WriteString("(no MPI calls recorded)\n")
		return
	}
	idx := sortedIdx(len(p.Funcs), func(i, j int) int {
		a, c := p.Funcs[i], p.Funcs[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Name, c.Name))
	})
	t := newTable(L("Function"), L("Class"), R("Calls"), R("Time"), R("%App"), R("%MPI"), R("Bytes"),
		R("Mean/call"), R("Rank min"), R("(rank)"), R("Rank mean"), R("Rank max"), R("(rank)"), R("COV"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		f := p.Funcs[i]
		rt := f.RankTime
		t.add(f.Name, orDash(f.Class), itoa(f.Calls), u.i(f.TimeNs), pctStr(pct(f.TimeNs, tot.appNs)),
			pctStr(pct(f.TimeNs, tot.mpiNs)), itoa(f.Bytes), uc.f(perCall(f.TimeNs, f.Calls)),
			u.f(rt.Min), "("+strconv.Itoa(rt.MinRank)+")", u.f(spreadMean(rt)),
			u.f(rt.Max), "("+strconv.Itoa(rt.MaxRank)+")", covStr(spreadCOV(rt)))
	}
	more(t, n, len(idx))
	t.render(b, "")
}

func textSites(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Sites) == 0 {
		return
	}
	var maxNs int64
	var maxCall float64
	for _, s := range p.Sites {
		maxNs = max(maxNs, s.TimeNs)
		maxCall = max(maxCall, float64(s.MaxNs), perCall(s.TimeNs, s.Calls))
	}
	u, uc := pickUnit(float64(maxNs)), pickCallUnit(maxCall)
	section(b, fmt.Sprintf("Top callsites (by time; times in %s, per call in %s)", u.name, uc.name))
	// Addresses of one source line (an unrolled loop) are one row.
	sites, _ := callsites(p)
	idx := sortedIdx(len(sites), func(i, j int) int {
		return cmp.Compare(sites[j].TimeNs, sites[i].TimeNs) // stable: ties keep ID order
	})
	t := newTable(R("ID"), L("Function"), L("Location"), L("Region"), R("Calls"), R("Time"), R("%MPI"),
		R("Bytes"), R("Min/call"), R("Mean/call"), R("Max/call"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		s := sites[i]
		t.add(strconv.Itoa(i+1), s.Func, location(s.Loc, true), orDash(s.Region), itoa(s.Calls), u.i(s.TimeNs),
			pctStr(pct(s.TimeNs, tot.mpiNs)), itoa(s.Bytes), uc.i(s.MinNs), uc.f(perCall(s.TimeNs, s.Calls)), uc.i(s.MaxNs))
	}
	more(t, n, len(idx))
	t.render(b, "")
}

// histOrder orders the message-size histograms by the bytes they moved
// (then by function) and picks the unit of their largest bin's time.
func histOrder(p *profile.Profile) (unit, []int) {
	var maxNs int64
	bytesOf := make([]int64, len(p.Hists))
	for i, h := range p.Hists {
		for _, bin := range h.Bins {
			maxNs = max(maxNs, bin.TimeNs)
			bytesOf[i] += bin.Bytes
		}
	}
	u := pickUnit(float64(maxNs))
	idx := sortedIdx(len(p.Hists), func(i, j int) int {
		return cmp.Or(cmp.Compare(bytesOf[j], bytesOf[i]), strings.Compare(p.Hists[i].Func, p.Hists[j].Func))
	})
	return u, idx
}

func textHists(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Hists) == 0 {
		return
	}
	u, idx := histOrder(p)
	section(b, "Message sizes (functions by bytes; times in "+u.name+")")
	t := newTable(L("Function"), R("Size (bytes)"), R("Calls"), R("Bytes"), R("Time"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		h := p.Hists[i]
		for k, bin := range h.Bins {
			name := ""
			if k == 0 {
				name = h.Func
			}
			t.add(name, sizeLabel(bin.Log2), itoa(bin.Calls), itoa(bin.Bytes), u.i(bin.TimeNs))
		}
	}
	if n < len(idx) {
		t.note(fmt.Sprintf("(%d more functions; use --all)", len(idx)-n))
	}
	t.render(b, "")
}

func textComms(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Comms) == 0 {
		return
	}
	u := unitOf(p.Comms, func(c profile.Comm) int64 { return c.TimeNs })
	section(b, "Communicators (by time; times in "+u.name+")")
	idx := sortedIdx(len(p.Comms), func(i, j int) int {
		a, c := p.Comms[i], p.Comms[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Key, c.Key))
	})
	t := newTable(L("Communicator"), R("Size"), L("Creator"), R("Members"), R("Calls"), R("Time"), R("%MPI"), R("Bytes"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		c := p.Comms[i]
		name := c.Key
		if c.Name != "" && c.Name != c.Key {
			name += " (" + c.Name + ")"
		}
		t.add(name, strconv.Itoa(c.Size), orDash(c.Creator), itoa(c.Members), itoa(c.Calls), u.i(c.TimeNs),
			pctStr(pct(c.TimeNs, tot.mpiNs)), itoa(c.Bytes))
	}
	more(t, n, len(idx))
	t.render(b, "")
}

// cmpSent orders peers by bytes sent (descending), then messages
// (descending), then (Rank, Peer).
func cmpSent(a, c *profile.Peer) int {
	return cmp.Or(cmp.Compare(c.SentBytes, a.SentBytes), cmp.Compare(c.SentMsgs, a.SentMsgs),
		cmp.Compare(a.Rank, c.Rank), cmp.Compare(a.Peer, c.Peer))
}

// senders returns the number of peers that sent something, the bytes they
// sent, and the indices of the first limit of them in cmpSent order (ties by
// index, as a stable sort gives), or of all of them if limit < 0.
func senders(p *profile.Profile, limit int) (count int, total int64, idx []int) {
	for i := range p.Peers {
		if pr := &p.Peers[i]; pr.SentMsgs > 0 || pr.SentBytes > 0 {
			count++
			total += pr.SentBytes
		}
	}
	if limit < 0 || limit > count {
		limit = count
	}
	sel := newTopK(limit, func(i, j int) int {
		return cmp.Or(cmpSent(&p.Peers[i], &p.Peers[j]), cmp.Compare(i, j))
	})
	for i := range p.Peers {
		if pr := &p.Peers[i]; pr.SentMsgs > 0 || pr.SentBytes > 0 {
			sel.add(i)
		}
	}
	return count, total, sel.sorted()
}

func textPeers(b *strings.Builder, p *profile.Profile, o Options) {
	limit := -1
	if !o.All {
		limit = o.top()
	}
	count, total, idx := senders(p, limit)
	if count == 0 {
		return
	}
	section(b, "Point-to-point (top sender pairs by bytes sent)")
	t := newTable(R("Rank"), L("->"), R("Peer"), R("Msgs"), R("Bytes"), R("%Bytes"))
	n := o.limit(count)
	for _, i := range idx[:n] {
		pr := p.Peers[i]
		t.add(strconv.Itoa(pr.Rank), "->", strconv.Itoa(pr.Peer), itoa(pr.SentMsgs), itoa(pr.SentBytes), pctStr(pct(pr.SentBytes, total)))
	}
	more(t, n, count)
	t.render(b, "")
}

func textRegions(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Regions) == 0 {
		return
	}
	var maxNs int64
	for _, r := range p.Regions {
		maxNs = max(maxNs, r.WallNs, r.MPINs)
	}
	u := pickUnit(float64(maxNs))
	section(b, "Regions (by MPI time; in "+u.name+"; sums over ranks, /rank means; MPI% of wall)")
	idx := sortedIdx(len(p.Regions), func(i, j int) int {
		a, c := p.Regions[i], p.Regions[j]
		return cmp.Or(cmp.Compare(c.MPINs, a.MPINs), strings.Compare(a.Path, c.Path))
	})
	t := newTable(L("Region"), R("Visits"), R("Ranks"), R("Wall (sum)"), R("Wall/rank"), R("MPI (sum)"),
		R("MPI/rank"), R("MPI%"), R("COV"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		r := p.Regions[i]
		t.add(r.Path, itoa(r.Visits), itoa(r.Ranks), u.i(r.WallNs), u.f(perCall(r.WallNs, r.Ranks)), u.i(r.MPINs),
			u.f(perCall(r.MPINs, r.Ranks)), pctStr(pct(r.MPINs, r.WallNs)), covStr(spreadCOV(r.RankMPI)))
	}
	more(t, n, len(idx))
	t.render(b, "")

	rf := regionFuncs(p)
	for _, i := range idx[:n] {
		r := p.Regions[i]
		fs := rf[r.Path]
		if len(fs) == 0 {
			continue
		}
		fu := unitOf(fs, func(f regionFunc) int64 { return f.TimeNs })
		fmt.Fprintf(b, "\nRegion %s: functions at its callsites (by time; times in %s)\n", ascii(r.Path), fu.name)
		ft := newTable(L("Function"), R("Calls"), R("Time"), R("%Region MPI"), R("Bytes"))
		fn := o.limit(len(fs))
		for _, f := range fs[:fn] {
			ft.add(f.Func, itoa(f.Calls), fu.i(f.TimeNs), pctStr(pct(f.TimeNs, r.MPINs)), itoa(f.Bytes))
		}
		more(ft, fn, len(fs))
		ft.render(b, "  ")
	}
}

func textEvents(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Events) == 0 {
		return
	}
	section(b, "User events (by count)")
	idx := sortedIdx(len(p.Events), func(i, j int) int {
		a, c := p.Events[i], p.Events[j]
		return cmp.Or(cmp.Compare(c.Count, a.Count), strings.Compare(a.Text, c.Text))
	})
	t := newTable(L("Event"), R("Count"), R("Ranks"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		e := p.Events[i]
		t.add(e.Text, itoa(e.Count), itoa(e.Ranks))
	}
	more(t, n, len(idx))
	t.render(b, "")
}
