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
func (res *Result) delays(parts []rankPart) {
	res.Delays = []Delay{}
	pos := make(map[int]int, len(parts))
	type dw struct {
		DelayWait
		part   int32
		turn   int32   // its place in the processing order
		passed float64 // what later waits passed to it (long term)
	}
	n, maxRank := 0, 0
	for i := range parts {
		pos[parts[i].Rank] = i
		n += len(parts[i].DWaits)
		maxRank = max(maxRank, parts[i].Rank)
	}
	// The parts by world rank in a list (position + 1, 0 none) when the
	// ranks are not much sparser than the parts; else the map only.
	var posAt []int32
	if maxRank < 4*len(parts)+1024 {
		posAt = make([]int32, maxRank+1)
		for i := range parts {
			if r := parts[i].Rank; r >= 0 {
				posAt[r] = int32(i + 1)
			}
		}
	}
	// From the latest window end to the earliest: the waits in reverse
	// (higher ranks, later waits first), then sorted stably by window end,
	// descending.
	all := make([]dw, 0, n)
	for i := len(parts) - 1; i >= 0; i-- {
		ws := parts[i].DWaits
		for k := len(ws) - 1; k >= 0; k-- {
			if ws[k].Ready > ws[k].T0 {
				all = append(all, dw{DelayWait: ws[k], part: int32(i)})
			}
		}
	}
	// By the whole nanoseconds before the latest end (keys that spread
	// over the buckets of sortByKey), then the fractions by insertion.
	top := math.Inf(-1)
	for k := range all {
		top = max(top, all[k].Ready)
	}
	all = sortByKey(all, func(d *dw) uint64 { return uint64(min(top-d.Ready, 1<<62)) })
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j-1].Ready < all[j].Ready; j-- {
			all[j-1], all[j] = all[j], all[j-1]
		}
	}
	per := make([][]int32, len(parts)) // each rank's waits by window end
	np := make([]int, len(parts))
	for k := range all {
		np[all[k].part]++
	}
	for i := range per {
		per[i] = make([]int32, 0, np[i]) // no copies as they fill
	}
	for k := range all {
		all[k].turn = int32(k)
		per[all[k].part] = append(per[all[k].part], int32(k))
	}
	// Each rank's window ends beside them: the search below reads them
	// in a row, not through the 80-byte records.
	ready := make([][]float64, len(parts))
	for i := range per {
		slices.Reverse(per[i])
		ready[i] = make([]float64, len(per[i]))
		for x, k := range per[i] {
			ready[i][x] = all[k].Ready
		}
	}
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
	for k := range all {
		d := &all[k]
		load := d.Wait + d.passed
		if load <= 0 {
			continue
		}
		win := d.Ready - d.T0
		var sp int
		var ok bool
		if uint(d.Partner) < uint(len(posAt)) {
			sp, ok = int(posAt[d.Partner])-1, posAt[d.Partner] > 0
		} else {
			sp, ok = pos[d.Partner]
		}
		if !ok {
			continue
		}
		// The partner's waits that overlap the window and come later.
		ws, rs := per[sp], ready[sp]
		j, hi := 0, len(rs) // the first ending after the window's start (sort.Search's answer)
		for j < hi {
			if m := int(uint(j+hi) >> 1); !(rs[m] > d.T0) {
				j = m + 1
			} else {
				hi = m
			}
		}
		var covered float64
		for ; j < len(ws) && all[ws[j]].T0 < d.Ready; j++ {
			w := &all[ws[j]]
			o := min(w.Ready, d.Ready) - max(w.T0, d.T0)
			if o <= 0 || w.turn <= int32(k) {
				continue
			}
			o = min(o, win-covered)
			if o <= 0 {
				break
			}
			covered += o
			w.passed += load * o / win
		}
		rest := 1 - covered/win
		if rest <= 0 {
			continue
		}
		keys := parts[sp].Keys
		inKeys := d.PKey >= 0 && int(d.PKey) < len(keys)
		var x int
		if inKeys {
			if costAt[sp] == nil {
				costAt[sp] = make([]int32, len(keys))
			}
			x, ok = int(costAt[sp][d.PKey])-1, costAt[sp][d.PKey] > 0
		} else {
			x, ok = costs[ck{sp, d.PKey}]
		}
		if !ok {
			c := Delay{Rank: d.Partner}
			if inKeys {
				c.Func, c.Callsite, c.Caller = keys[d.PKey].Func, keys[d.PKey].Site, keys[d.PKey].Caller
				costAt[sp][d.PKey] = int32(len(list) + 1)
			} else {
				costs[ck{sp, d.PKey}] = len(list)
			}
			x = len(list)
			list = append(list, c)
		}
		c := &list[x]
		c.Short += d.Wait * rest / 1e9
		c.Long += d.passed * rest / 1e9
		if d.Wait > 0 {
			c.Instances++
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

// sortDelays puts delay costs in report order: most first (stable: ties
// keep their order).
func sortDelays(ds []Delay) {
	slices.SortStableFunc(ds, func(a, b Delay) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Callsite, b.Callsite),
			strings.Compare(a.Func, b.Func), strings.Compare(a.Caller, b.Caller))
	})
}
