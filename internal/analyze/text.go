package analyze

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the result as indented JSON.
func (res *Result) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(res)
}

// WriteText writes the report: pattern totals, per rank, the top rows
// (top <= 0: all) and the critical path.
func (res *Result) WriteText(w io.Writer, top int) error {
	var mpi float64
	for _, v := range res.MPISeconds {
		mpi += v
	}
	fmt.Fprintf(w, "mpiscope analyze: %s\n", res.Dir)
	fmt.Fprintf(w, "%d of %d ranks, %d events, %d calls, %.6f s traced; %d messages and %d collectives matched",
		len(res.Ranks), res.Size, res.Events, res.Calls, res.Seconds, res.Messages, res.Colls)
	if res.Unmatched > 0 {
		fmt.Fprintf(w, ", %d message ends unmatched", res.Unmatched)
	}
	if r := res.RMA; r != (RMAStats{}) {
		fmt.Fprintf(w, "; one-sided: %d fences, %d PSCW epoch pairs and %d lock epochs matched", r.Fences, r.Epochs, r.Locks)
		if r.Unmatched > 0 {
			fmt.Fprintf(w, ", %d unmatched", r.Unmatched)
		}
	}
	fmt.Fprintln(w)
	for _, s := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	pct := func(v, of float64) string {
		if of <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", 100*v/of)
	}
	fmt.Fprintf(w, "\nWait states (Scalasca's patterns; MPI time of all ranks %.6f s)\n", mpi)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pattern\tseconds\t% MPI\tinstances\t")
	for p, pt := range res.Patterns {
		fmt.Fprintf(tw, "%s\t%.6f\t%s\t%d\t\n", Pattern(p).Title(), pt.Seconds, pct(pt.Seconds, mpi), pt.Instances)
	}
	tw.Flush()

	fmt.Fprintf(w, "\nWait states per rank (seconds)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"rank", "MPI"}
	for p := Pattern(0); p < NumPatterns; p++ {
		if p < WaitFence || res.Patterns[p].Instances > 0 { // the one-sided ones when there are
			hdr = append(hdr, p.String())
		}
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for i, r := range res.Ranks {
		fmt.Fprintf(tw, "%d\t%.6f", r, res.MPISeconds[i])
		for p, pt := range res.Patterns {
			if Pattern(p) < WaitFence || pt.Instances > 0 {
				fmt.Fprintf(tw, "\t%.6f", pt.ByRank[i])
			}
		}
		fmt.Fprintln(tw, "\t")
	}
	tw.Flush()

	rows := res.Rows
	fmt.Fprintf(w, "\nWait states by function, callsite, communicator and rank")
	if top > 0 && len(rows) > top {
		fmt.Fprintf(w, " (top %d of %d)", top, len(rows))
		rows = rows[:top]
	}
	fmt.Fprintln(w)
	if len(rows) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "pattern\tfunction\tcallsite\tcommunicator\trank\tseconds\tinstances")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.6f\t%d\n", r.Pattern, r.Func, r.Callsite, r.Comm, r.Rank, r.Seconds, r.Instances)
		}
		tw.Flush()
	}

	cp := &res.Critical
	fmt.Fprintf(w, "\nCritical path: %.6f s, from rank %d to rank %d (the last to finish); moves between ranks: %d\n",
		cp.Seconds, cp.StartRank, cp.EndRank, cp.Jumps)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tseconds\t% path\t")
	for i, r := range res.Ranks {
		fmt.Fprintf(tw, "%d\t%.6f\t%s\t\n", r, cp.ByRank[i], pct(cp.ByRank[i], cp.Seconds))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nCritical path by function: computation (outside MPI) %.6f s (%s%%), MPI %.6f s\n",
		cp.Computation, pct(cp.Computation, cp.Seconds), cp.MPI)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "function\tcallsite\tseconds\t% path")
	sites := cp.Callsites
	if top > 0 && len(sites) > top {
		sites = sites[:top]
	}
	for _, s := range sites {
		fmt.Fprintf(tw, "%s\t%s\t%.6f\t%s\n", s.Func, s.Callsite, s.Seconds, pct(s.Seconds, cp.Seconds))
	}
	tw.Flush()
	delays := res.Delays
	fmt.Fprintf(w, "\nDelay costs: the waiting a rank's activity before a call caused (short term: directly; long term: through the waits it caused)")
	if top > 0 && len(delays) > top {
		fmt.Fprintf(w, " (top %d of %d)", top, len(delays))
		delays = delays[:top]
	}
	fmt.Fprintln(w)
	if len(delays) == 0 {
		fmt.Fprintln(w, "  none")
	} else {
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "rank	before	callsite	seconds	short term	long term	waits")
		for _, d := range delays {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.6f\t%.6f\t%.6f\t%d\n", d.Rank, d.Func, d.Callsite, d.Seconds, d.Short, d.Long, d.Instances)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nNot analyzed (not in the trace): %s\n", strings.Join(res.Missing, "; "))
	return nil
}
