package analyze

import (
	"math"
	"slices"
	"sort"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// pathInfo is what the backward replay finds besides each rank's
// segments.
type pathInfo struct {
	EndRank, StartRank, Jumps int
	Found                     bool // some rank made a call
}

type pathResult struct {
	info pathInfo
	segs [][][2]float64 // per rank index, in time order
}

// replay finds the critical path by backward replay over the jumps of the
// wait states, with every rank's jumps at hand (offline).
func replay(passes []*rankPass, ws []rankWaits) pathResult {
	n := len(passes)
	out := pathResult{segs: make([][][2]float64, n)}
	end := -1
	for i, p := range passes {
		if p.ncalls > 0 && (end < 0 || p.last > passes[end].last) {
			end = i
		}
	}
	if end < 0 {
		return out
	}
	out.info.Found = true
	out.info.EndRank = passes[end].rank
	// cursor[r]: the jumps of rank r not yet passed (the path only moves
	// backwards on each rank, so the replay ends).
	cursor := make([]int, n)
	for i := range cursor {
		cursor[i] = len(ws[i].jumps)
	}
	r, t := end, passes[end].last
	for {
		k, seg, ok := stepBack(ws[r].jumps, &cursor[r], passes[r].first, t)
		if seg[1] > seg[0] {
			out.segs[r] = append(out.segs[r], seg)
		}
		if !ok {
			out.info.StartRank = passes[r].rank
			break
		}
		j := ws[r].jumps[k]
		r, t = int(j.partner), j.ready
		out.info.Jumps++
	}
	for i := range out.segs {
		slices.Reverse(out.segs[i])
	}
	return out
}

// stepBack is one step of the backward replay on one rank, at time t: the
// last jump not yet passed that ends after... before t (its index, ok), and
// the segment of the path on this rank, from the partner's entry to t;
// without such a jump, the segment from the rank's first call to t.
func stepBack(js []jump, cursor *int, first, t float64) (int, [2]float64, bool) {
	k := sort.Search(*cursor, func(x int) bool { return js[x].t1 > t }) - 1
	if k < 0 {
		if t > first {
			return -1, [2]float64{first, t}, false
		}
		return -1, [2]float64{}, false
	}
	*cursor = k
	j := js[k]
	if t > j.ready {
		return k, [2]float64{j.ready, t}, true
	}
	return k, [2]float64{}, true
}

// segSeconds is the time the path spends on a rank.
func segSeconds(segs [][2]float64) float64 {
	var s float64
	for _, x := range segs {
		s += (x[1] - x[0]) / 1e9
	}
	return s
}

// pathKey is the MPI time on the path of one function and callsite of a
// rank, in ns.
type pathKey struct {
	fn uint16
	pc uint64
	ns float64
}

// pathKeys reads rank i's calls again for the MPI time on its segments of
// the path, per function and callsite, in a fixed order.
func pathKeys(w *trace.Walker, i int, r *trace.Rank, ss [][2]float64) []pathKey {
	if len(ss) == 0 {
		return nil
	}
	type fk struct {
		fn uint16
		pc uint64
	}
	m := map[fk]float64{}
	_ = r.Scan(func(_ int, evs []trace.Event) error {
		// A block is one thread's events, in time order: the first
		// segment ending after a call's entry moves forward from the
		// previous call's (searched again if a time goes back).
		k0, last := 0, math.Inf(-1)
		for e := range evs {
			ev := &evs[e]
			if !ev.IsCall() {
				continue
			}
			t0, t1 := w.Ns(i, ev.T0), w.Ns(i, ev.T1)
			if t0 < last {
				k0 = 0
			}
			last = t0
			for k0 < len(ss) && ss[k0][1] <= t0 {
				if k0+8 < len(ss) && ss[k0+8][1] <= t0 {
					k0 += sort.Search(len(ss)-k0, func(x int) bool { return ss[k0+x][1] > t0 })
					break
				}
				k0++
			}
			k := k0
			for ; k < len(ss) && ss[k][0] < t1; k++ {
				if o := min(t1, ss[k][1]) - max(t0, ss[k][0]); o > 0 {
					m[fk{ev.Fn, ev.PC}] += o
				}
			}
		}
		return nil
	})
	keys := make([]pathKey, 0, len(m))
	for k, v := range m {
		keys = append(keys, pathKey{k.fn, k.pc, v})
	}
	slices.SortFunc(keys, func(a, b pathKey) int {
		if a.fn != b.fn {
			return int(a.fn) - int(b.fn)
		}
		return cmpU(a.pc, b.pc)
	})
	return keys
}

// namePath names a rank's path keys.
func namePath(r *trace.Rank, keys []pathKey, site func(pc uint64) (string, string)) []PathEntry {
	out := make([]PathEntry, 0, len(keys))
	for _, k := range keys {
		s, c := site(k.pc)
		out = append(out, PathEntry{Func: r.FnName(int(k.fn)), Site: s, Caller: c, Ns: k.ns})
	}
	return out
}

// critical fills the critical path from the ranks' parts (in rank order:
// sums that do not depend on where they were computed).
func (res *Result) critical(parts []rankPart, info pathInfo) {
	n := len(parts)
	cp := &res.Critical
	cp.ByRank = make([]float64, n)
	cp.Funcs, cp.Callsites = []Share{}, []Share{}
	if !info.Found {
		return
	}
	cp.EndRank, cp.StartRank, cp.Jumps = info.EndRank, info.StartRank, info.Jumps
	for i := range parts {
		cp.ByRank[i] = parts[i].PathSec
		cp.Seconds += cp.ByRank[i]
	}
	funcs := map[string]float64{}
	sites := map[[2]string]*Share{}
	for i := range parts {
		for _, e := range parts[i].Path {
			v := e.Ns
			funcs[e.Func] += v / 1e9
			s := sites[[2]string{e.Func, e.Site}]
			if s == nil {
				s = &Share{Func: e.Func, Callsite: e.Site, Caller: e.Caller}
				sites[[2]string{e.Func, e.Site}] = s
			}
			s.Seconds += v / 1e9
			cp.MPI += v / 1e9
		}
	}
	cp.Computation = max(0, cp.Seconds-cp.MPI)
	for fn, v := range funcs {
		cp.Funcs = append(cp.Funcs, Share{Func: fn, Seconds: v})
	}
	for _, s := range sites {
		cp.Callsites = append(cp.Callsites, *s)
	}
	slices.SortFunc(cp.Funcs, bySeconds)
	slices.SortFunc(cp.Callsites, bySeconds)
}

func bySeconds(a, b Share) int {
	switch {
	case a.Seconds > b.Seconds:
		return -1
	case a.Seconds < b.Seconds:
		return 1
	case a.Func != b.Func:
		if a.Func < b.Func {
			return -1
		}
		return 1
	case a.Callsite < b.Callsite:
		return -1
	case a.Callsite > b.Callsite:
		return 1
	}
	return 0
}
