package report

import (
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Overhead compensation (MPISCOPE_COMPENSATE=1, profile.CompRanks and
// CompFuncs): the "Overhead compensation" section after the header, JSON
// compensation and the CSV comp_ranks and comp_funcs tables, all present
// only when the profile has compensated figures. Measured and compensated
// figures stand side by side.

// textComp writes the "Overhead compensation" section.
func textComp(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.CompRanks) == 0 {
		return
	}
	measured := map[int]profile.Rank{}
	var maxNs int64
	for _, r := range p.Ranks {
		measured[r.Rank] = r
		maxNs = max(maxNs, r.AppNs)
	}
	u := pickUnit(float64(maxNs))
	section(b, "Overhead compensation (MPISCOPE_COMPENSATE=1; times in "+u.name+")")
	var call, in, coll, delay float64
	for _, c := range p.CompRanks {
		call += c.CallNs
		in += c.InNs
		coll += c.CollNs
		delay += float64(c.DelayNs)
	}
	n := float64(len(p.CompRanks))
	b.WriteString("Compensation: on. Calibrated at MPI_Init, mean over ranks: " + ns1(call/n) + " ns per call outside MPI, " +
		ns1(in/n) + " ns per message side inside, " + ns1(coll/n) + " ns per blocking collective.\n")
	b.WriteString("Subtracted from the application time, mean over ranks: " + human(int64(delay/n)) + ".\n\n")
	t := newTable(R("Rank"), R("Per call (ns)"), R("Calls"), R("Subtracted"), R("App"), R("App comp."), R("MPI"), R("MPI comp."))
	idx := sortedIdx(len(p.CompRanks), func(i, j int) int { return 0 })
	shown := o.limit(len(idx))
	for _, i := range idx[:shown] {
		c := p.CompRanks[i]
		m := measured[c.Rank]
		t.add(strconv.Itoa(c.Rank), ns1(c.CallNs), itoa(c.Calls), u.i(c.DelayNs), u.i(m.AppNs), u.i(c.AppNs), u.i(m.MPINs), u.i(c.MPINs))
	}
	more(t, shown, len(idx))
	t.render(b, "")
	if len(p.CompFuncs) == 0 {
		return
	}
	b.WriteByte('\n')
	byName := map[string]profile.Func{}
	for _, f := range p.Funcs {
		byName[f.Name] = f
	}
	ft := newTable(L("Function"), R("Calls"), R("MPI time"), R("Compensated"), R("Difference"))
	fidx := sortedIdx(len(p.CompFuncs), func(i, j int) int {
		a, c := byName[p.CompFuncs[i].Name].TimeNs, byName[p.CompFuncs[j].Name].TimeNs
		if a != c {
			if a > c {
				return -1
			}
			return 1
		}
		return 0
	})
	shown = o.limit(len(fidx))
	for _, i := range fidx[:shown] {
		c := p.CompFuncs[i]
		m := byName[c.Name]
		ft.add(c.Name, itoa(m.Calls), u.i(m.TimeNs), u.i(c.TimeNs), u.i(c.TimeNs-m.TimeNs))
	}
	more(ft, shown, len(fidx))
	ft.render(b, "")
}

func ns1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

type jsonComp struct {
	Ranks []jsonCompRank `json:"ranks"`
	Funcs []jsonCompFunc `json:"funcs"`
}

type jsonCompRank struct {
	Rank          int     `json:"rank"`
	CallNs        float64 `json:"call_ns"`
	InNs          float64 `json:"in_ns"`
	CollNs        float64 `json:"coll_ns"`
	Calls         int64   `json:"calls"`
	SubtractedNs  int64   `json:"subtracted_ns"`
	AppNs         int64   `json:"app_ns"`
	AppCompNs     int64   `json:"app_comp_ns"`
	MPINs         int64   `json:"mpi_ns"`
	MPICompNs     int64   `json:"mpi_comp_ns"`
	MPISubtracted int64   `json:"mpi_subtracted_ns"`
}

type jsonCompFunc struct {
	Func         string     `json:"func"`
	TimeNs       int64      `json:"time_ns"`
	CompNs       int64      `json:"comp_ns"`
	RankCompTime jsonSpread `json:"rank_comp_time"`
}

// compJSON is the JSON compensation object, nil without compensation.
func compJSON(p *profile.Profile) *jsonComp {
	if len(p.CompRanks) == 0 && len(p.CompFuncs) == 0 {
		return nil
	}
	measured := map[int]profile.Rank{}
	for _, r := range p.Ranks {
		measured[r.Rank] = r
	}
	d := &jsonComp{Ranks: []jsonCompRank{}, Funcs: []jsonCompFunc{}}
	for _, c := range p.CompRanks {
		m := measured[c.Rank]
		d.Ranks = append(d.Ranks, jsonCompRank{Rank: c.Rank, CallNs: c.CallNs, InNs: c.InNs, CollNs: c.CollNs, Calls: c.Calls,
			SubtractedNs: c.DelayNs, AppNs: m.AppNs, AppCompNs: c.AppNs, MPINs: m.MPINs, MPICompNs: c.MPINs, MPISubtracted: m.MPINs - c.MPINs})
	}
	byName := map[string]profile.Func{}
	for _, f := range p.Funcs {
		byName[f.Name] = f
	}
	for _, c := range p.CompFuncs {
		d.Funcs = append(d.Funcs, jsonCompFunc{Func: c.Name, TimeNs: byName[c.Name].TimeNs, CompNs: c.TimeNs, RankCompTime: toSpread(c.RankTime)})
	}
	return d
}

// compCSV adds the comp_ranks and comp_funcs tables.
func compCSV(c *jsonComp, table func(name string, header ...string) *csvTable) {
	if c == nil {
		return
	}
	t := table("comp_ranks", "rank", "call_ns", "in_ns", "coll_ns", "calls", "subtracted_ns", "app_ns", "app_comp_ns", "mpi_ns", "mpi_comp_ns")
	for _, r := range c.Ranks {
		t.row(fi(r.Rank), ff(r.CallNs), ff(r.InNs), ff(r.CollNs), itoa(r.Calls), itoa(r.SubtractedNs), itoa(r.AppNs), itoa(r.AppCompNs),
			itoa(r.MPINs), itoa(r.MPICompNs))
	}
	t = table("comp_funcs", append([]string{"func", "time_ns", "comp_ns"}, prefixed("rank_comp_time_", spreadHeader)...)...)
	for _, f := range c.Funcs {
		t.row(append([]string{f.Func, itoa(f.TimeNs), itoa(f.CompNs)}, spreadFields(f.RankCompTime)...)...)
	}
}
