package interpose

import (
	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// rawPath is one call path of one function in one region, summed over a
// rank's threads (callpath_cgo.go): return addresses, the callsite first.
type rawPath struct {
	Fn, Region int
	Other      bool
	Frames     []uint64
	Calls      uint64
	Ticks      uint64
	Min, Max   uint64
	Bytes      int64
}

// buildPaths converts a rank's raw paths to the profile's.
func buildPaths(p *profile.Profile, r *rawRank, ns func(uint64) int64, resolve resolver) {
	for _, a := range r.Paths {
		q := profile.Path{Func: r.FnNames[a.Fn], Other: a.Other, Calls: int64(a.Calls), TimeNs: ns(a.Ticks), Bytes: a.Bytes}
		if a.Region > 0 && a.Region < len(r.RegionPath) {
			q.Region = r.RegionPath[a.Region]
		}
		for _, pc := range a.Frames {
			module, off, ok := resolve(pc)
			if !ok {
				module, off = "", pc
			}
			q.Frames = append(q.Frames, profile.Loc{Module: module, Offset: off})
		}
		p.Paths = append(p.Paths, q)
	}
	if len(p.Paths) > 0 {
		// Addresses of different modules resolved alike (none resolved):
		// merged here so that the rank's profile holds each key once.
		p.CompactPaths()
	}
}

// symbolizePathFrames fills function, file and line of every path's
// frames that have none, with frames(module, offset), the logical frames
// at a return address, innermost first (symbolize's LookupReturnFrames):
// a return address in code inlined into a function becomes a frame for
// each function inlined there, then the function itself, all at the one
// address, each at its line as the source says (the inlined call's line
// for the outer ones). Paths equal once symbolized merge.
func symbolizePathFrames(frames func(module string, off uint64) ([]symbolize.Frame, error), p *profile.Profile) {
	for i := range p.Paths {
		q := &p.Paths[i]
		var out []profile.Loc
		for _, l := range q.Frames {
			if l.Module == "" || l.File != "" {
				out = append(out, l)
				continue
			}
			fr, err := frames(l.Module, l.Offset)
			if err != nil || len(fr) == 0 {
				out = append(out, l)
				continue
			}
			for _, f := range fr {
				out = append(out, profile.Loc{Module: l.Module, Offset: l.Offset, Function: f.Func, File: f.File, Line: f.Line})
			}
		}
		q.Frames = out
	}
	p.CompactPaths()
}
