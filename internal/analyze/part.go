package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// rankPart is what one rank contributes to a result: computed where the
// rank's trace was read (offline: by a worker; in the job: by the rank
// itself) and assembled in rank order by Result.assemble, so that the
// offline analysis and the one in the job sum the same numbers in the
// same order.
type rankPart struct {
	Rank        int
	Events      uint64
	Calls       uint64
	MPI         float64 // ns
	First, Last float64 // ns, job time
	Waits       []WaitEntry
	PathSec     float64     // seconds of the critical path on this rank
	Path        []PathEntry // MPI time on the path per function and callsite
	DWaits      []DelayWait // the waits with a partner, for the delay analysis
	Keys        []KeyName   // the rank's call keys (DelayWait.PKey)
	Delays      []Delay     // in the job: the delay costs of this rank's calls (DWaits and Keys left out)
}

// WaitEntry is one rank's waiting time of one pattern at one key.
type WaitEntry struct {
	Pattern            Pattern
	Func, Site, Caller string
	Comm               string
	Ns                 float64
	Count              int64
}

// PathEntry is one rank's MPI time on the critical path at one function
// and callsite.
type PathEntry struct {
	Func, Site, Caller string
	Ns                 float64
}

// makePart collects a rank's wait states, in a fixed order (pattern, then
// the key's first appearance in the trace).
func makePart(p *rankPass, events uint64, rw rankWaits, site func(pc uint64) (string, string), names *namer, world func(int32) int) rankPart {
	part := rankPart{Rank: p.rank, Events: events, Calls: p.ncalls, MPI: p.mpi, First: p.first, Last: p.last}
	type sum struct {
		k [2]int32
		t float64
		n int64
	}
	var ks []sum
	rw.each(func(k [2]int32, t float64, n int64) { ks = append(ks, sum{k, t, n}) })
	slices.SortFunc(ks, func(a, b sum) int { return cmp.Or(cmp.Compare(a.k[0], b.k[0]), cmp.Compare(a.k[1], b.k[1])) })
	for _, w := range ks {
		key := p.keyList[w.k[1]]
		s, c := site(key.pc)
		part.Waits = append(part.Waits, WaitEntry{Pattern: Pattern(w.k[0]), Func: key.fn, Site: s, Caller: c,
			Comm: names.comm(key.comm), Ns: w.t, Count: w.n})
	}
	if len(rw.jumps) > 0 {
		// One per jump: no copies as it grows; offline, in the analysis'
		// store (the grouping's room, kept for them: Analyze).
		part.DWaits = storeList[DelayWait](p.st, len(rw.jumps))[:0]
	}
	for _, j := range rw.jumps {
		part.DWaits = append(part.DWaits, DelayWait{T0: j.t0, Ready: j.ready, Wait: j.wait, Partner: world(j.partner), PKey: j.pkey})
	}
	part.Keys = make([]KeyName, len(p.keyList))
	for i, k := range p.keyList {
		s, c := site(k.pc)
		part.Keys[i] = KeyName{Func: k.fn, Site: s, Caller: c}
	}
	return part
}

func (s *matchStats) add(o matchStats) {
	s.messages += o.messages
	s.unmatched += o.unmatched
	s.colls += o.colls
	s.mismatch += o.mismatch
}

// addStats adds the matching's counts and its warning.
func (res *Result) addStats(st matchStats) {
	res.Messages += st.messages
	res.Unmatched += st.unmatched
	res.Colls += st.colls
	if st.mismatch > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d collective calls do not match across ranks (tracing started at different points?): left out", st.mismatch))
	}
}

// assemble fills the pattern totals, rows and critical path from the
// ranks' parts, in rank order.
func (res *Result) assemble(parts []rankPart, info pathInfo) {
	n := len(parts)
	res.Patterns = make([]PatternTotal, NumPatterns)
	for p := range res.Patterns {
		res.Patterns[p] = PatternTotal{Pattern: Pattern(p).String(), ByRank: make([]float64, n)}
	}
	res.MPISeconds = make([]float64, n)
	first, last := 0.0, 0.0
	for i, p := range parts {
		res.MPISeconds[i] = p.MPI / 1e9
		if p.Calls > 0 {
			if i == 0 || first == 0 || p.First < first {
				first = p.First
			}
			last = max(last, p.Last)
		}
	}
	res.Seconds = (last - first) / 1e9
	for i, part := range parts {
		for _, e := range part.Waits {
			pt := &res.Patterns[e.Pattern]
			pt.Seconds += e.Ns / 1e9
			pt.Instances += e.Count
			pt.ByRank[i] += e.Ns / 1e9
			res.Rows = append(res.Rows, Row{Pattern: e.Pattern.String(), Rank: part.Rank, Func: e.Func,
				Callsite: e.Site, Caller: e.Caller, Comm: e.Comm, Seconds: e.Ns / 1e9, Instances: e.Count})
		}
	}
	slices.SortFunc(res.Rows, func(a, b Row) int {
		switch {
		case a.Seconds > b.Seconds:
			return -1
		case a.Seconds < b.Seconds:
			return 1
		}
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Pattern, b.Pattern), strings.Compare(a.Callsite, b.Callsite),
			strings.Compare(a.Func, b.Func), strings.Compare(a.Comm, b.Comm))
	})
	res.critical(parts, info)
	res.delays(parts)
}
