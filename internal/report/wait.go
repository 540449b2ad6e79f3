package report

import (
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Wait states measured online by the piggyback channel (profile.Waits):
// the "Wait states" section, JSON wait_states and the CSV waits table,
// all present only when the profile has some.

// textWaits writes the "Wait states" section, most waiting first.
func textWaits(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Waits) == 0 {
		return
	}
	u := unitOf(p.Waits, func(w profile.Wait) int64 { return w.WaitNs })
	section(b, "Wait states (measured online, MPISCOPE_PIGGYBACK=1; times in "+u.name+")")
	t := newTable(L("Kind"), L("Function"), L("Callsite"), L("Comm"), R("Calls"), R("Wait"), R("Max"), R("Rank"), R("Waited for"), R("Mean/rank"))
	idx := sortedIdx(len(p.Waits), func(i, j int) int {
		a, c := p.Waits[i], p.Waits[j]
		if a.WaitNs != c.WaitNs {
			if a.WaitNs > c.WaitNs {
				return -1
			}
			return 1
		}
		return 0
	})
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		w := p.Waits[i]
		mean := int64(0)
		if w.RankWait.N > 0 {
			mean = int64(w.RankWait.Sum / float64(w.RankWait.N))
		}
		t.add(w.Kind, w.Func, location(w.Loc, true), orDash(w.Comm), itoa(w.Calls), u.i(w.WaitNs), u.i(w.MaxNs),
			strconv.Itoa(w.MaxRank), strconv.Itoa(w.MaxPeer), u.i(mean))
	}
	more(t, n, len(idx))
	t.note("Rank: the rank that waited longest in one call; Waited for: the rank it waited for then (the sender, the last to arrive, or the root)")
	t.render(b, "")
}

type jsonWait struct {
	Kind     string     `json:"kind"`
	Func     string     `json:"func"`
	Loc      jsonLoc    `json:"loc"`
	Location string     `json:"location"`
	Comm     string     `json:"comm"`
	Calls    int64      `json:"calls"`
	WaitNs   int64      `json:"wait_ns"`
	MaxNs    int64      `json:"max_ns"`
	MaxRank  int        `json:"max_rank"`
	MaxPeer  int        `json:"max_peer"`
	RankWait jsonSpread `json:"rank_wait"`
}

func waitsJSON(p *profile.Profile) []jsonWait {
	var l []jsonWait
	for _, w := range p.Waits {
		lc := w.Loc
		l = append(l, jsonWait{Kind: w.Kind, Func: w.Func,
			Loc:      jsonLoc{Module: lc.Module, Offset: lc.Offset, Function: lc.Function, File: lc.File, Line: lc.Line},
			Location: location(lc, false), Comm: w.Comm, Calls: w.Calls, WaitNs: w.WaitNs, MaxNs: w.MaxNs,
			MaxRank: w.MaxRank, MaxPeer: w.MaxPeer, RankWait: toSpread(w.RankWait)})
	}
	return l
}
