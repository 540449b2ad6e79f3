package analyze

import "github.com/mpiscope/mpiscope/profile"

// Profile is the result as the profile's analysis section.
func (res *Result) Profile() *profile.Analysis {
	a := &profile.Analysis{Ranks: res.Ranks, Events: res.Events, Calls: res.Calls, Seconds: res.Seconds,
		Messages: res.Messages, Unmatched: res.Unmatched, Colls: res.Colls, Warnings: res.Warnings,
		RMA: &profile.AnalysisRMA{Fences: res.RMA.Fences, Epochs: res.RMA.Epochs, Locks: res.RMA.Locks, Unmatched: res.RMA.Unmatched}}
	for _, v := range res.MPISeconds {
		a.MPISeconds += v
	}
	for _, p := range res.Patterns {
		a.Patterns = append(a.Patterns, profile.AnalysisPattern{Pattern: p.Pattern, Seconds: p.Seconds, Instances: p.Instances, ByRank: p.ByRank})
	}
	for _, r := range res.Rows {
		a.Rows = append(a.Rows, profile.AnalysisRow{Pattern: r.Pattern, Rank: r.Rank, Func: r.Func, Callsite: r.Callsite,
			Caller: r.Caller, Comm: r.Comm, Seconds: r.Seconds, Instances: r.Instances})
	}
	cp := &res.Critical
	a.Path = profile.AnalysisPath{Seconds: cp.Seconds, EndRank: cp.EndRank, StartRank: cp.StartRank, Jumps: cp.Jumps,
		ByRank: cp.ByRank, Computation: cp.Computation, MPI: cp.MPI, Funcs: shares(cp.Funcs), Callsites: shares(cp.Callsites)}
	for _, d := range res.Delays {
		a.Delays = append(a.Delays, profile.AnalysisDelay{Rank: d.Rank, Func: d.Func, Callsite: d.Callsite, Caller: d.Caller,
			Seconds: d.Seconds, Short: d.Short, Long: d.Long, Instances: d.Instances})
	}
	return a
}

func shares(l []Share) []profile.AnalysisShare {
	var out []profile.AnalysisShare
	for _, s := range l {
		out = append(out, profile.AnalysisShare{Func: s.Func, Callsite: s.Callsite, Caller: s.Caller, Seconds: s.Seconds})
	}
	return out
}
