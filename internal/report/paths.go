package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Call paths (profile.Paths, MPISCOPE_DEPTH > 1): the "Top call paths"
// section (each path as indented frames, the callsite first), the
// "Callers" section (the calls of each function that holds an MPI
// callsite, by the function that called it), JSON call_paths; all present
// only when the profile has paths.

// pathOrder is p's paths by time, most first (ties: profile order).
func pathOrder(p *profile.Profile) []int {
	return sortedIdx(len(p.Paths), func(i, j int) int { return cmp.Compare(p.Paths[j].TimeNs, p.Paths[i].TimeNs) })
}

// frameText is one frame of a path: "f at file:line".
func frameText(l profile.Loc) string { return location(l, true) }

// textPaths writes the "Top call paths" and "Callers" sections.
func textPaths(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Paths) == 0 {
		return
	}
	u := unitOf(p.Paths, func(q profile.Path) int64 { return q.TimeNs })
	section(b, fmt.Sprintf("Top call paths (by time; times in %s; the callsite first, then each caller)", u.name))
	idx := pathOrder(p)
	n := o.limit(len(idx))
	for k, i := range idx[:n] {
		q := p.Paths[i]
		region := ""
		if q.Region != "" {
			region = "  region " + q.Region
		}
		fmt.Fprintf(b, "%3d  %s  %s calls  %s %s  %s%% MPI  %s bytes%s\n", k+1, q.Func, itoa(q.Calls), u.i(q.TimeNs), u.name,
			pctStr(pct(q.TimeNs, tot.mpiNs)), itoa(q.Bytes), region)
		for d, f := range q.Frames {
			fmt.Fprintf(b, "     %s%s\n", strings.Repeat("  ", d), frameText(f))
		}
		if q.Other {
			b.WriteString("     (other paths: a thread's path table was full; callsite only)\n")
		}
	}
	if n < len(idx) {
		fmt.Fprintf(b, "(%d more; use --all)\n", len(idx)-n)
	}
	textCallers(b, p, o, u)
}

// caller is the calls of one MPI function made in one function (a
// callsite's function), from one caller of that function.
type caller struct {
	fn, site, from string
	calls, timeNs  int64
}

// callers sums the paths of two frames or more by (MPI function, the
// callsite's function, its caller's frame), and the totals by (MPI
// function, callsite function).
func callers(p *profile.Profile) ([]caller, map[[2]string]int64) {
	idx := map[[3]string]int{}
	tot := map[[2]string]int64{}
	var l []caller
	for _, q := range p.Paths {
		if len(q.Frames) < 2 || q.Other {
			continue
		}
		site := displayName(q.Frames[0].Function)
		if site == "" {
			site = location(q.Frames[0], true)
		}
		from := frameText(q.Frames[1])
		k := [3]string{q.Func, site, from}
		i, ok := idx[k]
		if !ok {
			i = len(l)
			idx[k] = i
			l = append(l, caller{fn: q.Func, site: site, from: from})
		}
		l[i].calls += q.Calls
		l[i].timeNs += q.TimeNs
		tot[[2]string{q.Func, site}] += q.TimeNs
	}
	return l, tot
}

// textCallers writes "Callers": per (MPI function, function holding the
// call), its callers by time, with their share of its time.
func textCallers(b *strings.Builder, p *profile.Profile, o Options, u unit) {
	l, tot := callers(p)
	if len(l) == 0 {
		return
	}
	section(b, fmt.Sprintf("Callers (each MPI function in each function that calls it, by caller; times in %s)", u.name))
	idx := sortedIdx(len(l), func(i, j int) int {
		a, c := l[i], l[j]
		ta, tc := tot[[2]string{a.fn, a.site}], tot[[2]string{c.fn, c.site}]
		return cmp.Or(cmp.Compare(tc, ta), strings.Compare(a.fn, c.fn), strings.Compare(a.site, c.site),
			cmp.Compare(c.timeNs, a.timeNs), strings.Compare(a.from, c.from))
	})
	t := newTable(L("Function"), L("In"), L("Called from"), R("Calls"), R("Time"), R("%"))
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		c := l[i]
		t.add(c.fn, c.site, c.from, itoa(c.calls), u.i(c.timeNs), pctStr(pct(c.timeNs, tot[[2]string{c.fn, c.site}])))
	}
	more(t, n, len(idx))
	t.note("%: share of the time of that MPI function in the function in \"In\"")
	t.render(b, "")
}

type jsonFrame struct {
	jsonLoc
	Location string `json:"location"`
}

type jsonPath struct {
	ID     int         `json:"id"`
	Func   string      `json:"func"`
	Region string      `json:"region"`
	Other  bool        `json:"other,omitempty"`
	Frames []jsonFrame `json:"frames"` // the callsite first
	Calls  int64       `json:"calls"`
	TimeNs int64       `json:"time_ns"`
	Bytes  int64       `json:"bytes"`
	PctMPI float64     `json:"pct_mpi"`
}

func pathsJSON(p *profile.Profile, tot totals) []jsonPath {
	var l []jsonPath
	for k, i := range pathOrder(p) {
		q := p.Paths[i]
		jp := jsonPath{ID: k + 1, Func: q.Func, Region: q.Region, Other: q.Other, Frames: []jsonFrame{}, Calls: q.Calls,
			TimeNs: q.TimeNs, Bytes: q.Bytes, PctMPI: round6(pct(q.TimeNs, tot.mpiNs))}
		for _, f := range q.Frames {
			jp.Frames = append(jp.Frames, jsonFrame{jsonLoc{Module: f.Module, Offset: f.Offset, Function: displayName(f.Function),
				File: f.File, Line: f.Line}, location(f, false)})
		}
		l = append(l, jp)
	}
	return l
}
