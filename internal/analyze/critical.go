package analyze

import (
	"slices"
	"sort"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// critical finds the critical path by backward replay over the jumps of
// the wait states, then reads the ranks on it again for the function and
// callsite shares.
func (res *Result) critical(w *trace.Walker, job *trace.Job, passes []*rankPass, ws []rankWaits, opt Options, names *namer) {
	n := len(passes)
	cp := &res.Critical
	cp.ByRank = make([]float64, n)
	cp.Funcs, cp.Callsites = []Share{}, []Share{}
	end := -1
	for i, p := range passes {
		if p.ncalls > 0 && (end < 0 || p.last > passes[end].last) {
			end = i
		}
	}
	if end < 0 {
		return
	}
	cp.EndRank = passes[end].rank
	// cursor[r]: the jumps of rank r not yet passed (the path only moves
	// backwards on each rank, so the replay ends).
	cursor := make([]int, n)
	for i := range cursor {
		cursor[i] = len(ws[i].jumps)
	}
	segs := make([][][2]float64, n)
	r, t := end, passes[end].last
	for {
		js := ws[r].jumps
		k := sort.Search(cursor[r], func(x int) bool { return js[x].t1 > t }) - 1
		if k < 0 {
			if start := passes[r].first; t > start {
				segs[r] = append(segs[r], [2]float64{start, t})
			}
			cp.StartRank = passes[r].rank
			break
		}
		cursor[r] = k
		j := js[k]
		if t > j.ready {
			segs[r] = append(segs[r], [2]float64{j.ready, t})
		}
		r, t = int(j.partner), j.ready
		cp.Jumps++
	}
	for i := range segs {
		slices.Reverse(segs[i])
		for _, s := range segs[i] {
			cp.ByRank[i] += (s[1] - s[0]) / 1e9
		}
		cp.Seconds += cp.ByRank[i]
	}
	// MPI time on the path per (function, callsite), rank by rank.
	type fk struct {
		fn uint16
		pc uint64
	}
	onPath := make([]map[fk]float64, n)
	forEach(n, opt.Workers, func(i int) {
		if len(segs[i]) == 0 {
			return
		}
		m := map[fk]float64{}
		onPath[i] = m
		ss := segs[i]
		_ = job.Ranks[i].Scan(func(_ int, evs []trace.Event) error {
			for e := range evs {
				ev := &evs[e]
				if !ev.IsCall() {
					continue
				}
				t0, t1 := w.Ns(i, ev.T0), w.Ns(i, ev.T1)
				k := sort.Search(len(ss), func(x int) bool { return ss[x][1] > t0 })
				for ; k < len(ss) && ss[k][0] < t1; k++ {
					if o := min(t1, ss[k][1]) - max(t0, ss[k][0]); o > 0 {
						m[fk{ev.Fn, ev.PC}] += o
					}
				}
			}
			return nil
		})
	})
	funcs := map[string]float64{}
	sites := map[[2]string]*Share{}
	for i, m := range onPath {
		// In a fixed order: sums that do not depend on map order.
		keys := make([]fk, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b fk) int {
			if a.fn != b.fn {
				return int(a.fn) - int(b.fn)
			}
			return cmpU(a.pc, b.pc)
		})
		for _, k := range keys {
			v := m[k]
			fn := job.Ranks[i].FnName(int(k.fn))
			site, caller := names.site(i, k.pc)
			funcs[fn] += v / 1e9
			s := sites[[2]string{fn, site}]
			if s == nil {
				s = &Share{Func: fn, Callsite: site, Caller: caller}
				sites[[2]string{fn, site}] = s
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
	bySeconds := func(a, b Share) int {
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
	slices.SortFunc(cp.Funcs, bySeconds)
	slices.SortFunc(cp.Callsites, bySeconds)
}
