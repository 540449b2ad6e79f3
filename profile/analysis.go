package profile

import "slices"

// Analysis is the trace analysis made inside the job at MPI_Finalize
// (MPISCOPE_ANALYZE=1, internal/analyze): wait states after Scalasca's
// patterns, the critical path and the delay costs, as `mpiscope analyze`
// finds them in the trace. Times are seconds. A job's analysis is one
// whole: merging keeps the first profile's.
type Analysis struct {
	Ranks      []int // world ranks analyzed (the index of the ByRank slices)
	Events     uint64
	Calls      uint64
	Seconds    float64 // first to last traced event
	MPISeconds float64 // MPI time of the ranks analyzed
	Messages   uint64  // point-to-point messages matched
	Unmatched  uint64  // message ends without their other end
	Colls      uint64  // collective instances matched
	Patterns   []AnalysisPattern
	Rows       []AnalysisRow // most first
	Path       AnalysisPath
	Delays     []AnalysisDelay // most first
	Warnings   []string
	// RMA counts the one-sided synchronizations matched (section 17,
	// added on 2026-11-28); nil in a file written before, whose
	// analysis did not keep them.
	RMA *AnalysisRMA
}

// AnalysisRMA counts the one-sided synchronizations the analysis matched
// across ranks, as `mpiscope analyze` does (its JSON "rma").
type AnalysisRMA struct {
	Fences    uint64 // MPI_Win_fence instances with every member of the window's group (fences_matched)
	Epochs    uint64 // pairs of an access and an exposure epoch of general active target synchronization (pscw_epochs_matched)
	Locks     uint64 // lock epochs with their unlock, per target (lock_epochs)
	Unmatched uint64 // fences, epochs and lock epochs without their other parts (unmatched)
}

// AnalysisPattern is one wait-state pattern over the job.
type AnalysisPattern struct {
	Pattern   string // "late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "early_reduce"; one-sided: "wait_fence", "early_fence" (a part of wait_fence), "late_post", "early_wait", "late_complete" (a part of early_wait), "lock_contention"
	Seconds   float64
	Instances int64
	ByRank    []float64
}

// AnalysisRow is the waiting time of one pattern at one function,
// callsite, communicator and rank.
type AnalysisRow struct {
	Pattern   string
	Rank      int
	Func      string
	Callsite  string // file:line, or the address
	Caller    string
	Comm      string
	Seconds   float64
	Instances int64
}

// AnalysisPath is the critical path.
type AnalysisPath struct {
	Seconds     float64
	EndRank     int
	StartRank   int
	Jumps       int
	ByRank      []float64
	Computation float64
	MPI         float64
	Funcs       []AnalysisShare
	Callsites   []AnalysisShare
}

// AnalysisShare is a function's or callsite's time on the critical path.
type AnalysisShare struct {
	Func, Callsite, Caller string
	Seconds                float64
}

// AnalysisDelay is the waiting that one rank's activity before one callsite
// caused: directly (short term) and through the waits of others (long
// term).
type AnalysisDelay struct {
	Rank                   int
	Func, Callsite, Caller string
	Seconds, Short, Long   float64
	Instances              int64
}

// cloneAnalysis copies a (the merge shares no memory with its inputs).
func cloneAnalysis(a *Analysis) *Analysis {
	if a == nil {
		return nil
	}
	c := *a
	c.Ranks = slices.Clone(a.Ranks)
	c.Patterns = slices.Clone(a.Patterns)
	for i := range c.Patterns {
		c.Patterns[i].ByRank = slices.Clone(a.Patterns[i].ByRank)
	}
	c.Rows = slices.Clone(a.Rows)
	c.Path.ByRank = slices.Clone(a.Path.ByRank)
	c.Path.Funcs = slices.Clone(a.Path.Funcs)
	c.Path.Callsites = slices.Clone(a.Path.Callsites)
	c.Delays = slices.Clone(a.Delays)
	c.Warnings = slices.Clone(a.Warnings)
	if a.RMA != nil {
		r := *a.RMA
		c.RMA = &r
	}
	return &c
}

func (e *encoder) floats(l []float64) {
	e.uvarint(uint64(len(l)))
	for _, v := range l {
		e.float(v)
	}
}

func (d *decoder) floats(what string) []float64 {
	n := d.count(what, 8)
	if n == 0 {
		return nil
	}
	l := make([]float64, n)
	for i := range l {
		l[i] = d.float()
	}
	return l
}

func (e *encoder) shares(l []AnalysisShare) {
	e.uvarint(uint64(len(l)))
	for _, s := range l {
		e.str(s.Func)
		e.str(s.Callsite)
		e.str(s.Caller)
		e.float(s.Seconds)
	}
}

func (d *decoder) shares() []AnalysisShare {
	n := d.count("critical-path share", 11)
	if n == 0 {
		return nil
	}
	l := make([]AnalysisShare, n)
	for i := 0; i < n && d.err == nil; i++ {
		l[i] = AnalysisShare{Func: d.str(), Callsite: d.str(), Caller: d.str(), Seconds: d.float()}
	}
	return l
}

func (e *encoder) analysis(a *Analysis) {
	e.uvarint(uint64(len(a.Ranks)))
	for _, r := range a.Ranks {
		e.int(r)
	}
	e.uvarint(a.Events)
	e.uvarint(a.Calls)
	e.float(a.Seconds)
	e.float(a.MPISeconds)
	e.uvarint(a.Messages)
	e.uvarint(a.Unmatched)
	e.uvarint(a.Colls)
	e.uvarint(uint64(len(a.Patterns)))
	for _, p := range a.Patterns {
		e.str(p.Pattern)
		e.float(p.Seconds)
		e.varint(p.Instances)
		e.floats(p.ByRank)
	}
	e.uvarint(uint64(len(a.Rows)))
	for _, r := range a.Rows {
		e.str(r.Pattern)
		e.int(r.Rank)
		e.str(r.Func)
		e.str(r.Callsite)
		e.str(r.Caller)
		e.str(r.Comm)
		e.float(r.Seconds)
		e.varint(r.Instances)
	}
	p := &a.Path
	e.float(p.Seconds)
	e.int(p.EndRank)
	e.int(p.StartRank)
	e.int(p.Jumps)
	e.floats(p.ByRank)
	e.float(p.Computation)
	e.float(p.MPI)
	e.shares(p.Funcs)
	e.shares(p.Callsites)
	e.uvarint(uint64(len(a.Delays)))
	for _, x := range a.Delays {
		e.int(x.Rank)
		e.str(x.Func)
		e.str(x.Callsite)
		e.str(x.Caller)
		e.float(x.Seconds)
		e.float(x.Short)
		e.float(x.Long)
		e.varint(x.Instances)
	}
	e.strList(a.Warnings)
}

func (d *decoder) analysis() *Analysis {
	a := &Analysis{}
	n := d.count("analysed rank", 1)
	if n > 0 {
		a.Ranks = make([]int, n)
		for i := range a.Ranks {
			a.Ranks[i] = d.int()
		}
	}
	a.Events = d.uvarint()
	a.Calls = d.uvarint()
	a.Seconds = d.float()
	a.MPISeconds = d.float()
	a.Messages = d.uvarint()
	a.Unmatched = d.uvarint()
	a.Colls = d.uvarint()
	if n := d.count("wait-state pattern", 11); n > 0 {
		a.Patterns = make([]AnalysisPattern, n)
		for i := 0; i < n && d.err == nil; i++ {
			p := &a.Patterns[i]
			p.Pattern = d.str()
			p.Seconds = d.float()
			p.Instances = d.varint()
			p.ByRank = d.floats("pattern's rank time")
		}
	}
	if n := d.count("analysis row", 15); n > 0 {
		a.Rows = make([]AnalysisRow, n)
		for i := 0; i < n && d.err == nil; i++ {
			r := &a.Rows[i]
			r.Pattern = d.str()
			r.Rank = d.int()
			r.Func = d.str()
			r.Callsite = d.str()
			r.Caller = d.str()
			r.Comm = d.str()
			r.Seconds = d.float()
			r.Instances = d.varint()
		}
	}
	p := &a.Path
	p.Seconds = d.float()
	p.EndRank = d.int()
	p.StartRank = d.int()
	p.Jumps = d.int()
	p.ByRank = d.floats("critical path's rank time")
	p.Computation = d.float()
	p.MPI = d.float()
	p.Funcs = d.shares()
	p.Callsites = d.shares()
	if n := d.count("delay cost", 29); n > 0 {
		a.Delays = make([]AnalysisDelay, n)
		for i := 0; i < n && d.err == nil; i++ {
			x := &a.Delays[i]
			x.Rank = d.int()
			x.Func = d.str()
			x.Callsite = d.str()
			x.Caller = d.str()
			x.Seconds = d.float()
			x.Short = d.float()
			x.Long = d.float()
			x.Instances = d.varint()
		}
	}
	a.Warnings = d.strList("analysis warning")
	return a
}

// analysisRMA writes section 17: Fences, Epochs, Locks, Unmatched, each
// a uvarint.
func (e *encoder) analysisRMA(r *AnalysisRMA) {
	e.uvarint(r.Fences)
	e.uvarint(r.Epochs)
	e.uvarint(r.Locks)
	e.uvarint(r.Unmatched)
}

func (d *decoder) analysisRMA() *AnalysisRMA {
	return &AnalysisRMA{Fences: d.uvarint(), Epochs: d.uvarint(), Locks: d.uvarint(), Unmatched: d.uvarint()}
}
