package analyze

import (
	"cmp"
	"slices"
	"sort"
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
	pos := map[int]int{}
	type dw struct {
		DelayWait
		part   int
		own    float64 // load: its own wait (short term) ...
		passed float64 // ... and what later waits passed to it
	}
	var all []*dw
	per := make([][]*dw, len(parts))
	for i := range parts {
		pos[parts[i].Rank] = i
		for _, w := range parts[i].DWaits {
			if w.Ready > w.T0 {
				d := &dw{DelayWait: w, part: i, own: w.Wait}
				all = append(all, d)
				per[i] = append(per[i], d)
			}
		}
	}
	// From the latest window end to the earliest (ties: higher rank first,
	// then the later entry): order[d] is d's turn.
	slices.SortStableFunc(all, func(a, b *dw) int {
		return cmp.Or(cmp.Compare(b.Ready, a.Ready), cmp.Compare(b.part, a.part), cmp.Compare(b.T0, a.T0))
	})
	turn := make(map[*dw]int, len(all))
	for k, d := range all {
		turn[d] = k
	}
	for i := range per {
		slices.SortFunc(per[i], func(a, b *dw) int { return cmp.Compare(a.Ready, b.Ready) })
	}
	type ck struct {
		part int
		key  int32
	}
	costs := map[ck]*Delay{}
	for k, d := range all {
		load := d.own + d.passed
		if load <= 0 {
			continue
		}
		win := d.Ready - d.T0
		sp, ok := pos[d.Partner]
		if !ok {
			continue
		}
		// The partner's waits that overlap the window and come later.
		ws := per[sp]
		j := sort.Search(len(ws), func(x int) bool { return ws[x].Ready > d.T0 })
		var covered float64
		for ; j < len(ws) && ws[j].T0 < d.Ready; j++ {
			o := min(ws[j].Ready, d.Ready) - max(ws[j].T0, d.T0)
			if o <= 0 || turn[ws[j]] <= k {
				continue
			}
			o = min(o, win-covered)
			if o <= 0 {
				break
			}
			covered += o
			ws[j].passed += load * o / win
		}
		rest := 1 - covered/win
		if rest <= 0 {
			continue
		}
		c := costs[ck{sp, d.PKey}]
		if c == nil {
			c = &Delay{Rank: d.Partner}
			if keys := parts[sp].Keys; d.PKey >= 0 && int(d.PKey) < len(keys) {
				c.Func, c.Callsite, c.Caller = keys[d.PKey].Func, keys[d.PKey].Site, keys[d.PKey].Caller
			}
			costs[ck{sp, d.PKey}] = c
		}
		c.Short += d.own * rest / 1e9
		c.Long += d.passed * rest / 1e9
		if d.own > 0 {
			c.Instances++
		}
	}
	for _, c := range costs {
		c.Seconds = c.Short + c.Long
		res.Delays = append(res.Delays, *c)
	}
	slices.SortFunc(res.Delays, func(a, b Delay) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Callsite, b.Callsite),
			strings.Compare(a.Func, b.Func))
	})
}
