package interpose

import "github.com/mpiscope/mpiscope/profile"

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
