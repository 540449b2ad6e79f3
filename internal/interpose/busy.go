package interpose

import (
	"strings"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// rawBusy is a call in progress on one thread when the tables were read
// (ms_busy_read, core.c), in ticks.
type rawBusy struct {
	Thread  int
	Fn      int
	PC      uint64
	Region  int
	Comm    string // communicator key, "" none or unknown
	Peer    int    // profile.Call.Peer
	Tag     int    // profile.Call.Tag
	Elapsed uint64 // ticks since the call began
}

// addBusy adds the rank's calls in progress and its time off to p (built
// by buildProfile from r).
func addBusy(p *profile.Profile, r *rawRank, ns func(uint64) int64, resolve resolver) {
	if len(p.Ranks) == 1 {
		p.Ranks[0].OffNs = min(ns(r.OffTicks), p.Ranks[0].AppNs)
	}
	for _, b := range r.Busy {
		module, off, ok := resolve(b.PC)
		if !ok {
			module, off = "", b.PC
		}
		c := profile.Call{Rank: r.Rank, Thread: b.Thread, Func: r.FnNames[b.Fn], Loc: profile.Loc{Module: module, Offset: off},
			Comm: b.Comm, Peer: b.Peer, Tag: b.Tag, ElapsedNs: ns(b.Elapsed)}
		if b.Region > 0 && b.Region < len(r.RegionPath) {
			c.Region = r.RegionPath[b.Region]
		}
		p.Busy = append(p.Busy, c)
	}
}

// symbolizeBusy fills function, file and line of the calls in progress.
func symbolizeBusy(s *symbolize.Symbolizer, p *profile.Profile) {
	for i := range p.Busy {
		l := &p.Busy[i].Loc
		if l.Module == "" || l.File != "" {
			continue
		}
		if fn, file, line, err := s.LookupReturn(l.Module, l.Offset); err == nil {
			l.Function, l.File, l.Line = fn, file, line
		}
	}
}

// busyRoles tells which of peer (or root) and tag a call in progress of
// the named function has published: its wrapper stores only those
// (internal/wrapgen, busyArgs; TestBusyRoles checks the generated code).
// Point-to-point calls have both (MPI_Mrecv neither), rooted collectives
// a root.
func busyRoles(name, class string) (peer, tag bool) {
	base := strings.TrimSuffix(name, "_c")
	switch {
	case class == "p2p":
		p := base != "MPI_Mrecv"
		return p, p
	case class == "coll":
		switch base {
		case "MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv":
			return true, false
		}
	}
	return false, false
}
