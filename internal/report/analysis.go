package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The trace analysis made in the job (MPISCOPE_ANALYZE=1, profile.Analysis):
// the "Trace analysis" section, JSON analysis and the CSV tables
// analysis_patterns, analysis_rows, analysis_path, analysis_path_sites,
// analysis_delays and analysis_rma, all present only when the profile has
// one (analysis_rma and JSON rma only when it counts the one-sided
// synchronizations: not in files written before 2026-11-28). Times are
// seconds, as `mpiscope analyze` gives them.

var analysisTitles = map[string]string{"late_sender": "Late sender", "late_receiver": "Late receiver", "wait_nxn": "Wait at N x N",
	"wait_barrier": "Wait at barrier", "late_broadcast": "Late broadcast", "early_reduce": "Early reduce",
	"wait_fence": "Wait at fence", "early_fence": "Early fence (part of wait at fence)", "late_post": "Late post", "early_wait": "Early wait", "late_complete": "Late complete (part of early wait)",
	"lock_contention": "Lock contention"}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', 6, 64) }

// rmaSummary is the summary line's one-sided part, as `mpiscope analyze`
// writes it: empty without one-sided synchronizations.
func rmaSummary(r *profile.AnalysisRMA) string {
	if r == nil || *r == (profile.AnalysisRMA{}) {
		return ""
	}
	s := fmt.Sprintf("; one-sided: %d fences, %d PSCW epoch pairs and %d lock epochs matched", r.Fences, r.Epochs, r.Locks)
	if r.Unmatched > 0 {
		s += fmt.Sprintf(", %d unmatched", r.Unmatched)
	}
	return s
}

func fracPct(v, of float64) string {
	if of <= 0 {
		return "-"
	}
	return strconv.FormatFloat(100*v/of, 'f', 1, 64)
}

// textAnalysis writes the "Trace analysis" section.
func textAnalysis(b *strings.Builder, p *profile.Profile, o Options) {
	a := p.Analysis
	if a == nil {
		return
	}
	section(b, "Trace analysis (in the job, MPISCOPE_ANALYZE=1; times in s)")
	fmt.Fprintf(b, "%d ranks, %d events, %d calls, %s s traced; %d messages and %d collectives matched", len(a.Ranks), a.Events,
		a.Calls, secs(a.Seconds), a.Messages, a.Colls)
	if a.Unmatched > 0 {
		fmt.Fprintf(b, ", %d message ends unmatched", a.Unmatched)
	}
	b.WriteString(rmaSummary(a.RMA))
	b.WriteString("\n")
	for _, w := range a.Warnings {
		fmt.Fprintf(b, "warning: %s\n", w)
	}
	b.WriteString("\n")
	t := newTable(L("Wait state"), R("Seconds"), R("% MPI"), R("Instances"))
	for _, pt := range a.Patterns {
		t.add(orDash(analysisTitles[pt.Pattern]), secs(pt.Seconds), fracPct(pt.Seconds, a.MPISeconds), itoa(pt.Instances))
	}
	fmt.Fprintf(b, "Wait states (Scalasca's patterns; %% of the analyzed ranks' MPI time, %s s):\n", secs(a.MPISeconds))
	t.render(b, "")
	if len(a.Rows) > 0 {
		b.WriteString("\n")
		t = newTable(L("Wait state"), R("Rank"), L("Function"), L("Callsite"), L("Comm"), R("Seconds"), R("Instances"))
		n := o.limit(len(a.Rows))
		for _, r := range a.Rows[:n] {
			t.add(orDash(analysisTitles[r.Pattern]), strconv.Itoa(r.Rank), r.Func, orDash(r.Callsite), orDash(r.Comm), secs(r.Seconds), itoa(r.Instances))
		}
		more(t, n, len(a.Rows))
		b.WriteString("Wait states per rank, function, callsite and communicator, most first:\n")
		t.render(b, "")
	}
	cp := &a.Path
	b.WriteString("\n")
	fmt.Fprintf(b, "Critical path: %s s, from rank %d to rank %d, %d moves between ranks; computation %s s (%s %%), MPI %s s\n",
		secs(cp.Seconds), cp.StartRank, cp.EndRank, cp.Jumps, secs(cp.Computation), fracPct(cp.Computation, cp.Seconds), secs(cp.MPI))
	if len(cp.ByRank) > 0 {
		t = newTable(R("Rank"), R("Seconds"), R("% path"))
		idx := sortedIdx(len(cp.ByRank), func(i, j int) int {
			switch {
			case cp.ByRank[i] > cp.ByRank[j]:
				return -1
			case cp.ByRank[i] < cp.ByRank[j]:
				return 1
			}
			return 0
		})
		shown := 0
		for _, i := range idx {
			if cp.ByRank[i] <= 0 {
				break
			}
			if shown == o.limit(len(idx)) {
				break
			}
			shown++
			rank := i
			if i < len(a.Ranks) {
				rank = a.Ranks[i]
			}
			t.add(strconv.Itoa(rank), secs(cp.ByRank[i]), fracPct(cp.ByRank[i], cp.Seconds))
		}
		b.WriteString("Ranks on the path:\n")
		t.render(b, "")
	}
	if len(cp.Callsites) > 0 {
		t = newTable(L("Function"), L("Callsite"), R("Seconds"), R("% path"))
		n := o.limit(len(cp.Callsites))
		for _, s := range cp.Callsites[:n] {
			t.add(s.Func, orDash(s.Callsite), secs(s.Seconds), fracPct(s.Seconds, cp.Seconds))
		}
		more(t, n, len(cp.Callsites))
		b.WriteString("MPI calls on the path (the rest is computation):\n")
		t.render(b, "")
	}
	if len(a.Delays) > 0 {
		b.WriteString("\n")
		t = newTable(R("Rank"), L("Before"), L("Callsite"), R("Seconds"), R("Short term"), R("Long term"), R("Waits"))
		n := o.limit(len(a.Delays))
		for _, d := range a.Delays[:n] {
			t.add(strconv.Itoa(d.Rank), d.Func, orDash(d.Callsite), secs(d.Seconds), secs(d.Short), secs(d.Long), itoa(d.Instances))
		}
		more(t, n, len(a.Delays))
		b.WriteString("Delay costs: the waiting a rank's activity before a call caused (short term: the waits it caused; long term: those they caused in turn):\n")
		t.render(b, "")
	}
}

// JSON: the section as `mpiscope analyze -format json` names its fields.
type jsonAnalysis struct {
	Ranks      []int                 `json:"ranks"`
	Events     uint64                `json:"events"`
	Calls      uint64                `json:"calls"`
	Seconds    float64               `json:"seconds"`
	MPISeconds float64               `json:"mpi_seconds"`
	Messages   uint64                `json:"messages_matched"`
	Unmatched  uint64                `json:"message_ends_unmatched"`
	Colls      uint64                `json:"collectives_matched"`
	Patterns   []jsonAnalysisPattern `json:"patterns"`
	Rows       []jsonAnalysisRow     `json:"rows"`
	Path       jsonAnalysisPath      `json:"critical_path"`
	Delays     []jsonAnalysisDelay   `json:"delay_costs"`
	Warnings   []string              `json:"warnings"`
	RMA        *jsonAnalysisRMA      `json:"rma,omitempty"` // absent in files written before 2026-11-28
}

// jsonAnalysisRMA names its fields as `mpiscope analyze -format json`'s rma.
type jsonAnalysisRMA struct {
	Fences    uint64 `json:"fences_matched"`
	Epochs    uint64 `json:"pscw_epochs_matched"`
	Locks     uint64 `json:"lock_epochs"`
	Unmatched uint64 `json:"unmatched"`
}

type jsonAnalysisPattern struct {
	Pattern   string    `json:"pattern"`
	Seconds   float64   `json:"seconds"`
	Instances int64     `json:"instances"`
	ByRank    []float64 `json:"seconds_by_rank"`
}

type jsonAnalysisRow struct {
	Pattern   string  `json:"pattern"`
	Rank      int     `json:"rank"`
	Func      string  `json:"function"`
	Callsite  string  `json:"callsite"`
	Caller    string  `json:"caller,omitempty"`
	Comm      string  `json:"communicator"`
	Seconds   float64 `json:"seconds"`
	Instances int64   `json:"instances"`
}

type jsonAnalysisShare struct {
	Func     string  `json:"function"`
	Callsite string  `json:"callsite,omitempty"`
	Caller   string  `json:"caller,omitempty"`
	Seconds  float64 `json:"seconds"`
}

type jsonAnalysisPath struct {
	Seconds     float64             `json:"seconds"`
	EndRank     int                 `json:"end_rank"`
	StartRank   int                 `json:"start_rank"`
	Jumps       int                 `json:"jumps"`
	ByRank      []float64           `json:"seconds_by_rank"`
	Computation float64             `json:"computation_seconds"`
	MPI         float64             `json:"mpi_seconds"`
	Funcs       []jsonAnalysisShare `json:"functions"`
	Callsites   []jsonAnalysisShare `json:"callsites"`
}

type jsonAnalysisDelay struct {
	Rank      int     `json:"rank"`
	Func      string  `json:"function"`
	Callsite  string  `json:"callsite"`
	Caller    string  `json:"caller,omitempty"`
	Seconds   float64 `json:"seconds"`
	Short     float64 `json:"short_term"`
	Long      float64 `json:"long_term"`
	Instances int64   `json:"instances"`
}

func orEmpty[T any](l []T) []T {
	if l == nil {
		return []T{}
	}
	return l
}

func jsonShares(l []profile.AnalysisShare) []jsonAnalysisShare {
	out := []jsonAnalysisShare{}
	for _, s := range l {
		out = append(out, jsonAnalysisShare{Func: s.Func, Callsite: s.Callsite, Caller: s.Caller, Seconds: finite(s.Seconds)})
	}
	return out
}

func finites(l []float64) []float64 {
	out := make([]float64, len(l))
	for i, v := range l {
		out[i] = finite(v)
	}
	return out
}

func analysisJSON(p *profile.Profile) *jsonAnalysis {
	a := p.Analysis
	if a == nil {
		return nil
	}
	j := &jsonAnalysis{Ranks: orEmpty(a.Ranks), Events: a.Events, Calls: a.Calls, Seconds: finite(a.Seconds), MPISeconds: finite(a.MPISeconds),
		Messages: a.Messages, Unmatched: a.Unmatched, Colls: a.Colls, Warnings: orEmpty(a.Warnings),
		Patterns: []jsonAnalysisPattern{}, Rows: []jsonAnalysisRow{}, Delays: []jsonAnalysisDelay{}}
	if r := a.RMA; r != nil {
		j.RMA = &jsonAnalysisRMA{Fences: r.Fences, Epochs: r.Epochs, Locks: r.Locks, Unmatched: r.Unmatched}
	}
	for _, pt := range a.Patterns {
		j.Patterns = append(j.Patterns, jsonAnalysisPattern{Pattern: pt.Pattern, Seconds: finite(pt.Seconds), Instances: pt.Instances, ByRank: finites(pt.ByRank)})
	}
	for _, r := range a.Rows {
		j.Rows = append(j.Rows, jsonAnalysisRow{Pattern: r.Pattern, Rank: r.Rank, Func: r.Func, Callsite: r.Callsite, Caller: r.Caller,
			Comm: r.Comm, Seconds: finite(r.Seconds), Instances: r.Instances})
	}
	cp := &a.Path
	j.Path = jsonAnalysisPath{Seconds: finite(cp.Seconds), EndRank: cp.EndRank, StartRank: cp.StartRank, Jumps: cp.Jumps,
		ByRank: finites(cp.ByRank), Computation: finite(cp.Computation), MPI: finite(cp.MPI), Funcs: jsonShares(cp.Funcs), Callsites: jsonShares(cp.Callsites)}
	for _, d := range a.Delays {
		j.Delays = append(j.Delays, jsonAnalysisDelay{Rank: d.Rank, Func: d.Func, Callsite: d.Callsite, Caller: d.Caller,
			Seconds: finite(d.Seconds), Short: finite(d.Short), Long: finite(d.Long), Instances: d.Instances})
	}
	return j
}

// analysisCSV adds the analysis tables (none without an analysis).
func analysisCSV(a *jsonAnalysis, table func(name string, header ...string) *csvTable) {
	if a == nil {
		return
	}
	ff := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	rank := func(i int) string {
		if i < len(a.Ranks) {
			return fi(a.Ranks[i])
		}
		return fi(i)
	}
	t := table("analysis_patterns", "pattern", "rank", "seconds", "instances")
	for _, p := range a.Patterns {
		t.row(p.Pattern, "", ff(p.Seconds), itoa(p.Instances))
		for i, v := range p.ByRank {
			t.row(p.Pattern, rank(i), ff(v), "")
		}
	}
	t = table("analysis_rows", "pattern", "rank", "function", "callsite", "caller", "communicator", "seconds", "instances")
	for _, r := range a.Rows {
		t.row(r.Pattern, fi(r.Rank), r.Func, r.Callsite, r.Caller, r.Comm, ff(r.Seconds), itoa(r.Instances))
	}
	cp := &a.Path
	t = table("analysis_path", "rank", "seconds", "start_rank", "end_rank", "jumps", "computation_seconds", "mpi_seconds")
	t.row("", ff(cp.Seconds), fi(cp.StartRank), fi(cp.EndRank), fi(cp.Jumps), ff(cp.Computation), ff(cp.MPI))
	for i, v := range cp.ByRank {
		t.row(rank(i), ff(v), "", "", "", "", "")
	}
	t = table("analysis_path_sites", "function", "callsite", "caller", "seconds")
	for _, s := range cp.Callsites {
		t.row(s.Func, s.Callsite, s.Caller, ff(s.Seconds))
	}
	t = table("analysis_delays", "rank", "function", "callsite", "caller", "seconds", "short_term", "long_term", "instances")
	for _, d := range a.Delays {
		t.row(fi(d.Rank), d.Func, d.Callsite, d.Caller, ff(d.Seconds), ff(d.Short), ff(d.Long), itoa(d.Instances))
	}
	if r := a.RMA; r != nil {
		t = table("analysis_rma", "fences_matched", "pscw_epochs_matched", "lock_epochs", "unmatched")
		u := func(v uint64) string { return strconv.FormatUint(v, 10) }
		t.row(u(r.Fences), u(r.Epochs), u(r.Locks), u(r.Unmatched))
	}
}
