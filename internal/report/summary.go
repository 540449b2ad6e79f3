package report

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// SummaryFuncs is the number of functions listed by Summary.
const SummaryFuncs = 5

// Summary is the short digest rank 0 prints to stderr at finalize: the
// application, its MPI share of app time (mean of the per-rank MPI%), the
// top functions by time with their share of MPI time, and where the report
// is. It has at most 15 lines, each prefixed "mpiscope: " and ending in a
// newline.
func Summary(p *profile.Profile, reportPath string) string {
	if p == nil {
		p = &profile.Profile{}
	}
	const prefix = "mpiscope: "
	var b strings.Builder
	p = recordedTime(p) // time with recording off is in no denominator (busy.go)
	tot := computeTotals(p)
	app := "(unknown)"
	if len(p.Meta.Command) > 0 && p.Meta.Command[0] != "" {
		app = filepath.Base(p.Meta.Command[0])
	}
	ranks := p.Meta.NumRanks
	if ranks == 0 {
		ranks = len(p.Ranks)
	}
	fmt.Fprintf(&b, "%s%s on %d ranks: MPI %.1f%% of app time (mean over ranks)\n",
		prefix, ascii(app), ranks, tot.mpiPctMean)
	if st := status(p); st != "final" {
		fmt.Fprintf(&b, "%s%s\n", prefix, st)
	}
	if tot.dropped > 0 {
		fmt.Fprintf(&b, "%swarning: %d records dropped (fixed tables full)\n", prefix, tot.dropped)
	}
	idx := sortedIdx(len(p.Funcs), func(i, j int) int {
		a, c := p.Funcs[i], p.Funcs[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Name, c.Name))
	})
	idx = idx[:min(len(idx), SummaryFuncs)]
	if len(idx) == 0 {
		fmt.Fprintf(&b, "%sno MPI calls recorded\n", prefix)
	}
	width := 0
	for _, i := range idx {
		width = max(width, len(p.Funcs[i].Name))
	}
	for _, i := range idx {
		f := p.Funcs[i]
		fmt.Fprintf(&b, "%s  %-*s %6.2f%% of MPI  %10s  %d calls\n",
			prefix, width, ascii(f.Name), pct(f.TimeNs, tot.mpiNs), human(f.TimeNs), f.Calls)
	}
	fmt.Fprintf(&b, "%sreport: %s\n", prefix, ascii(reportPath))
	return b.String()
}
