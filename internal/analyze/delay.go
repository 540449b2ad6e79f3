package analyze

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// Delay costs (Scalasca's root-cause analysis, our own formulation): which
// rank's activity made others wait, and where it ended.
//
// A wait state on rank R lasts from its call's entry to the moment its
// partner S entered the matching call: its window. S was busy with
// something else during that window. The part of the window where S was
// itself waiting (its own wait states that overlap the window) passes the
// cost on to whatever made S wait (propagation); the rest is S's own
// activity, charged to S's call that ended it: the computation (or MPI
// work that was no wait) before that call's callsite. A wait's cost is its
// own waiting time (short term) plus what later waits passed to it (long
// term), shared over its window in proportion to time; the waits are
// processed from the latest to the earliest, so each has received all it
// gets before it passes it on. Every second of waiting so ends at exactly
// one cause: the delay costs add up to the total waiting time of the
// waits with a partner.

// DelayWait is one call's wait, with what the delay analysis needs.
type DelayWait struct {
	T0, Ready float64 // the window: the call's entry, the partner's entry (capped by the call's end)
	Wait      float64 // the wait state's time (ns; 0: the call only passes the critical path)
	Partner   int     // world rank
	PKey      int32   // the partner's call: its key on the partner's rank (rankPart.Keys)
}

// KeyName is a call key's names on its rank.
type KeyName struct {
	Func, Site, Caller string
}

// Delay is the cost of the waiting that one rank's activity before one
// callsite caused.
type Delay struct {
	Rank      int     `json:"rank"`
	Func      string  `json:"function"` // the call that ended the delaying activity
	Callsite  string  `json:"callsite"`
	Caller    string  `json:"caller,omitempty"`
	Seconds   float64 `json:"seconds"`    // short + long term
	Short     float64 `json:"short_term"` // waiting it caused directly
	Long      float64 `json:"long_term"`  // waiting it caused through the waits of others (propagated)
	Instances int64   `json:"instances"`  // waits it caused directly
}

// delays runs the delay analysis over the ranks' waits (rank order).
//
// The waits are processed from the latest window end to the earliest,
// ties by rank, then index, descending (turnBefore). A rank's calls end
// in order (bar threads), so its waits with a window are already a run in
// that order read backwards (else that rank's alone are sorted): the runs
// are merged as they are processed, the next wait taken from the rank
// whose next comes first (turnTree), rather than all the waits copied and
// sorted (before 2026-11-29: a counting sort of 56-byte records by the
// window end, then the ties by insertion, about half of the step). What a
// rank has left to process is then the start of its run: a wait of it is
// later in the order than the one being processed exactly when it is
// there, and the partner's waits that overlap a window are found from the
// end of that start backwards (most windows overlap none or one), not by
// a search over all of them.
func (res *Result) delays(parts []rankPart) {
	res.Delays = []Delay{}
	maxRank := 0
	for i := range parts {
		maxRank = max(maxRank, parts[i].Rank)
	}
	// The parts by world rank in a list (position + 1, 0 none) when the
	// ranks are not much sparser than the parts; the others (all, or
	// those of no place in the list) in a map.
	var posAt []int32
	if maxRank < 4*len(parts)+1024 {
		posAt = make([]int32, maxRank+1)
	}
	pos := map[int]int{}
	for i := range parts {
		if r := parts[i].Rank; uint(r) < uint(len(posAt)) {
			posAt[r] = int32(i + 1)
		} else {
			pos[r] = i
		}
	}
	// Each rank's waits with a window, ascending by (end, index): the
	// reverse of their processing order. idx[i][x] is run[i]'s x-th
	// wait's index in the rank's DWaits (nil: x itself, every wait kept
	// in order).
	run := make([]delayRun, len(parts))
	idx := make([][]int32, len(parts))
	left := make([]int32, len(parts)) // each rank's waits not yet processed: run[i]'s first left[i]
	heads := make([]float64, len(parts))
	for i := range parts {
		ws := parts[i].DWaits
		n := 0
		for k := range ws {
			if ws[k].Ready > ws[k].T0 {
				n++
			}
		}
		if heads[i] = math.Inf(-1); n == 0 {
			continue
		}
		r := delayRun{t0: make([]float64, 0, n), ready: make([]float64, 0, n), passed: make([]float64, n)}
		sorted := true
		for k := range ws {
			if ws[k].Ready > ws[k].T0 {
				sorted = sorted && (len(r.ready) == 0 || ws[k].Ready >= r.ready[len(r.ready)-1])
				r.t0, r.ready = append(r.t0, ws[k].T0), append(r.ready, ws[k].Ready)
			}
		}
		if n < len(ws) || !sorted {
			x := make([]int32, 0, n)
			for k := range ws {
				if ws[k].Ready > ws[k].T0 {
					x = append(x, int32(k))
				}
			}
			if !sorted { // stably by end: ties keep the order of their indices
				slices.SortStableFunc(x, func(a, b int32) int { return cmp.Compare(ws[a].Ready, ws[b].Ready) })
				for j, k := range x {
					r.t0[j], r.ready[j] = ws[k].T0, ws[k].Ready
				}
			}
			idx[i] = x
		}
		run[i], left[i], heads[i] = r, int32(n), r.ready[n-1]
	}
	h := newTurnTree(heads)
	type ck struct {
		part int
		key  int32
	}
	// In order of creation: the order of ties does not depend on a map's.
	// A rank's keys index its list of costs (costAt: position + 1, 0
	// none); keys outside its key list go through the map.
	costs := map[ck]int{}
	costAt := make([][]int32, len(parts))
	var list []Delay
	for {
		i := h.top()
		if i < 0 {
			break
		}
		left[i]--
		x := left[i]
		if x > 0 {
			h.next(run[i].ready[x-1])
		} else {
			h.next(math.Inf(-1))
		}
		dw := &parts[i].DWaits[place(idx[i], x)]
		t0, ready, passed := run[i].t0[x], run[i].ready[x], run[i].passed[x]
		load := dw.Wait + passed
		if load <= 0 {
			continue
		}
		win := ready - t0
		var sp int
		var ok bool
		if uint(dw.Partner) < uint(len(posAt)) {
			sp, ok = int(posAt[dw.Partner])-1, posAt[dw.Partner] > 0
		} else {
			sp, ok = pos[dw.Partner]
		}
		if !ok {
			continue
		}
		// The partner's waits that overlap the window and come later:
		// among those it has left, from the first ending after the
		// window's start.
		ws := &run[sp]
		m := int(left[sp])
		var covered float64
		for j := firstEndAfter(ws.ready[:m], t0); j < m && ws.t0[j] < ready; j++ {
			o := min(ws.ready[j], ready) - max(ws.t0[j], t0)
			if o <= 0 {
				continue
			}
			o = min(o, win-covered)
			if o <= 0 {
				break
			}
			covered += o
			ws.passed[j] += load * o / win
		}
		rest := 1 - covered/win
		if rest <= 0 {
			continue
		}
		keys := parts[sp].Keys
		inKeys := dw.PKey >= 0 && int(dw.PKey) < len(keys)
		var c int
		if inKeys {
			if costAt[sp] == nil {
				costAt[sp] = make([]int32, len(keys))
			}
			c, ok = int(costAt[sp][dw.PKey])-1, costAt[sp][dw.PKey] > 0
		} else {
			c, ok = costs[ck{sp, dw.PKey}]
		}
		if !ok {
			e := Delay{Rank: dw.Partner}
			if inKeys {
				e.Func, e.Callsite, e.Caller = keys[dw.PKey].Func, keys[dw.PKey].Site, keys[dw.PKey].Caller
				costAt[sp][dw.PKey] = int32(len(list) + 1)
			} else {
				costs[ck{sp, dw.PKey}] = len(list)
			}
			c = len(list)
			list = append(list, e)
		}
		e := &list[c]
		e.Short += dw.Wait * rest / 1e9
		e.Long += passed * rest / 1e9
		if dw.Wait > 0 {
			e.Instances++
		}
	}
	for i := range list {
		list[i].Seconds = list[i].Short + list[i].Long
	}
	// By rank, each rank's in order of creation, as the job gathers them.
	slices.SortStableFunc(list, func(a, b Delay) int { return cmp.Compare(a.Rank, b.Rank) })
	res.Delays = append(res.Delays, list...)
	sortDelays(res.Delays)
}

// firstEndAfter is the place of the first of ends (ascending) above t0,
// len(ends) if none is, found back from the last: by steps of 1, 2, 4, ...
// while they end above t0, then by halves between the last two steps.
// When few do, as for the own waits that overlap a short window, it reads
// a few ends, not log2 of them all.
func firstEndAfter(ends []float64, t0 float64) int {
	j, lo := len(ends), 0
	for s := 1; j > lo; s <<= 1 {
		p := max(j-s, lo)
		if !(ends[p] > t0) {
			lo = p + 1
			break
		}
		j = p
	}
	for lo < j {
		if m := int(uint(lo+j) >> 1); !(ends[m] > t0) {
			lo = m + 1
		} else {
			j = m
		}
	}
	return j
}

// delayRun is a rank's waits with a window in delays, in order of their
// ends: their windows and what later waits passed to them (long term).
type delayRun struct {
	t0, ready, passed []float64
}

// turnTree merges runs in delays' processing order: a tournament over
// the runs' next waits (their window ends), whose every inner node keeps
// the run that lost there. The run whose next wait comes first (latest
// end, ties to the higher run) is at the top; once it gives its next, the
// new one plays the losers on its way up, one comparison a level: log2
// of the runs a wait (a heap takes up to two a level). Each run in order,
// the merge is turnBefore's order.
type turnTree struct {
	// node[0] is the top run's next wait; node[1:] the losers of a tree
	// whose leaves are the runs, padded to a power of 2. An end of -Inf:
	// no wait left (no wait with a window ends at -Inf).
	node []runHead
}

// runHead is a run's next wait in the merge: its window end.
type runHead struct {
	ready float64
	run   int32
}

// first tells whether a's wait comes before b's.
func (a runHead) first(b runHead) bool {
	return a.ready > b.ready || a.ready == b.ready && a.run > b.run
}

// newTurnTree starts the merge of runs whose first waits end at ready
// (-Inf: a run without any).
func newTurnTree(ready []float64) turnTree {
	k := 1
	for k < len(ready) {
		k <<= 1
	}
	win := make([]runHead, 2*k) // each node's winner, the leaves at k..2k-1
	for i := range k {
		win[k+i] = runHead{ready: math.Inf(-1), run: int32(i)}
		if i < len(ready) {
			win[k+i].ready = ready[i]
		}
	}
	t := turnTree{node: make([]runHead, k)}
	for n := k - 1; n >= 1; n-- {
		a, b := win[2*n], win[2*n+1]
		if b.first(a) {
			a, b = b, a
		}
		win[n], t.node[n] = a, b
	}
	t.node[0] = win[1]
	return t
}

// top is the run whose next wait comes first, -1 when no run has any left.
func (t turnTree) top() int32 {
	if math.IsInf(t.node[0].ready, -1) {
		return -1
	}
	return t.node[0].run
}

// next gives the top run's next wait's end (-Inf: it has none left).
func (t turnTree) next(ready float64) {
	node := t.node
	w := runHead{ready: ready, run: node[0].run}
	for n := uint(int(w.run)+len(node)) >> 1; n >= 1 && n < uint(len(node)); n >>= 1 {
		if l := node[n]; l.first(w) {
			node[n], w = w, l
		}
	}
	node[0] = w
}

// sortDelays puts delay costs in report order: most first (stable: ties
// keep their order).
func sortDelays(ds []Delay) {
	slices.SortStableFunc(ds, func(a, b Delay) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Callsite, b.Callsite),
			strings.Compare(a.Func, b.Func), strings.Compare(a.Caller, b.Caller))
	})
}
