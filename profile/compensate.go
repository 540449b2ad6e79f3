package profile

import (
	"cmp"
	"strings"
)

// CompRank is one rank's overhead compensation (MPISCOPE_COMPENSATE=1,
// docs/compensation.md): its calibrated costs, what was subtracted, and
// its compensated times beside the measured ones of its Rank.
type CompRank struct {
	Rank    int
	CallNs  float64 // calibrated cost of one wrapper outside the MPI call (entry and exit), ns
	InNs    float64 // calibrated cost of our header inside a point-to-point call, per side, ns
	CollNs  float64 // calibrated cost of the extra reduction before a blocking collective, ns
	Calls   int64   // recorded calls that paid CallNs
	DelayNs int64   // subtracted from the application time: how much later the rank ended than it would have without us
	AppNs   int64   // compensated application time (Rank.AppNs is the measured one)
	MPINs   int64   // compensated MPI time (Rank.MPINs is the measured one)
}

// CompFunc is one MPI function's compensated time (Func.TimeNs is the
// measured one).
type CompFunc struct {
	Name     string
	TimeNs   int64  // over ranks
	RankTime Spread // per rank
}

// Compensate makes one rank's compensated figures from its measured rank
// r and functions, the time subtracted from each function (by name) and
// its calibration c (Rank, AppNs and MPINs are filled here).
func Compensate(r Rank, funcs []Func, sub map[string]int64, c CompRank) ([]CompFunc, []CompRank) {
	var out []CompFunc
	var mpi int64
	for _, f := range funcs {
		t := max(0, f.TimeNs-sub[f.Name])
		mpi += t
		out = append(out, CompFunc{Name: f.Name, TimeNs: t, RankTime: SpreadOf(r.Rank, float64(t))})
	}
	c.Rank = r.Rank
	c.AppNs = max(0, r.AppNs-c.DelayNs)
	c.MPINs = min(mpi, c.AppNs)
	return out, []CompRank{c}
}

// addComp merges one more profile's compensated figures: ranks are
// appended (a rank present twice keeps its first), functions summed.
func (m *merger) addComp(q *Profile) {
	for _, r := range q.CompRanks {
		if m.compSeen == nil {
			m.compSeen = map[int]bool{}
		}
		if !m.compSeen[r.Rank] {
			m.compSeen[r.Rank] = true
			m.compRanks = append(m.compRanks, r)
		}
	}
	for _, f := range q.CompFuncs {
		if m.compIdx == nil {
			m.compIdx = map[string]int{}
		}
		j, ok := m.compIdx[f.Name]
		if !ok {
			m.compIdx[f.Name] = len(m.compFuncs)
			m.compFuncs = append(m.compFuncs, f)
			continue
		}
		a := &m.compFuncs[j]
		a.TimeNs += f.TimeNs
		a.RankTime.Add(f.RankTime)
	}
}

func sortComp(p *Profile) {
	sortStable(p.CompRanks, func(a, b CompRank) int { return cmp.Compare(a.Rank, b.Rank) })
	sortStable(p.CompFuncs, func(a, b CompFunc) int { return strings.Compare(a.Name, b.Name) })
}

func (e *encoder) comp(p *Profile) {
	e.uvarint(uint64(len(p.CompRanks)))
	for i := range p.CompRanks {
		r := &p.CompRanks[i]
		e.int(r.Rank)
		e.float(r.CallNs)
		e.float(r.InNs)
		e.float(r.CollNs)
		e.varint(r.Calls)
		e.varint(r.DelayNs)
		e.varint(r.AppNs)
		e.varint(r.MPINs)
	}
	e.uvarint(uint64(len(p.CompFuncs)))
	for i := range p.CompFuncs {
		f := &p.CompFuncs[i]
		e.str(f.Name)
		e.varint(f.TimeNs)
		e.spread(f.RankTime)
	}
}

func (d *decoder) comp(p *Profile) {
	n := d.count("compensated rank", 29)
	p.CompRanks = nil
	if n > 0 {
		p.CompRanks = make([]CompRank, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		r := &p.CompRanks[i]
		r.Rank = d.int()
		r.CallNs = d.float()
		r.InNs = d.float()
		r.CollNs = d.float()
		r.Calls = d.varint()
		r.DelayNs = d.varint()
		r.AppNs = d.varint()
		r.MPINs = d.varint()
	}
	if d.err != nil {
		return
	}
	n = d.count("compensated function", 3)
	p.CompFuncs = nil
	if n > 0 {
		p.CompFuncs = make([]CompFunc, n)
	}
	for i := 0; i < n && d.err == nil; i++ {
		f := &p.CompFuncs[i]
		f.Name = d.str()
		f.TimeNs = d.varint()
		f.RankTime = d.spread()
	}
}
