package trace

import (
	"fmt"
	"slices"
)

// Call paths (MPISCOPE_DEPTH > 1). A traced call's record holds, where a
// callsite is, its call path's key in its thread's path table: PathTag |
// the path's index (callpath.h), or PathTag | PathOther | the callsite
// when the table was full. At the end of the run each thread's table goes
// to the file in a BPaths block (the thread id, then each path's index and
// frames: return addresses, the callsite first). Reading a rank, the
// decoder interns the frames of every thread's paths into the rank's path
// ids (Rank.Paths, 1-based; a path of the same frames on two threads is one
// id) and gives each event its callsite back in PC and its path in Path.
// Files of format version 2 hold no path and read as before.
const (
	PathTag   = 1 << 63 // a record's PC is a path key of its thread
	PathOther = 1 << 62 // with PathTag: the "other paths" bucket, the callsite in the low bits

	// BPaths is one thread's path table (EncodePaths), written at the
	// end of the run.
	BPaths = 'Q'
)

// ThreadPaths is one thread's path table: Frames[i] are path Index[i]'s
// return addresses, the callsite first.
type ThreadPaths struct {
	Tid    int
	Index  []uint32
	Frames [][]uint64
}

// maxPathFrames bounds a path's frames in a file (the library records at
// most 32).
const maxPathFrames = 256

// EncodePaths returns the payload of a BPaths block.
func EncodePaths(p *ThreadPaths) []byte {
	var e enc
	e.u(uint64(p.Tid))
	e.u(uint64(len(p.Index)))
	for i, ix := range p.Index {
		e.u(uint64(ix))
		e.u(uint64(len(p.Frames[i])))
		for _, f := range p.Frames[i] {
			e.u(f)
		}
	}
	return e.b
}

func decodePaths(b []byte) (*ThreadPaths, error) {
	d := dec{b: b}
	p := &ThreadPaths{Tid: d.n(1 << 31)}
	n := d.n(len(d.b) / 2)
	for i := 0; i < n && d.err == nil; i++ {
		ix := d.n(PathOther - 1)
		k := d.n(maxPathFrames)
		if d.err == nil && k == 0 {
			d.err = fmt.Errorf("path %d has no frame", ix)
		}
		fr := make([]uint64, 0, k)
		for j := 0; j < k && d.err == nil; j++ {
			fr = append(fr, d.u())
		}
		p.Index = append(p.Index, uint32(ix))
		p.Frames = append(p.Frames, fr)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%d bytes after the paths", len(d.b))
	}
	return p, d.err
}

// addPaths interns a thread's paths into the rank's path ids.
func (r *Rank) addPaths(p *ThreadPaths) {
	if r.pathOf == nil {
		r.pathOf = map[pathKey]uint32{}
		r.pathIDs = map[string]uint32{}
	}
	for i, ix := range p.Index {
		k := string(u64bytes(p.Frames[i]))
		id, ok := r.pathIDs[k]
		if !ok {
			r.Paths = append(r.Paths, slices.Clone(p.Frames[i]))
			id = uint32(len(r.Paths))
			r.pathIDs[k] = id
		}
		r.pathOf[pathKey{p.Tid, ix}] = id
	}
}

type pathKey struct {
	tid int
	ix  uint32
}

func u64bytes(v []uint64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
	}
	return b
}

// resolvePaths gives thread tid's events whose PC is a path key their
// callsite back (PC) and their path (Path, 0: none). A key whose path the
// file does not hold (a run killed before its tables were written) keeps
// no path and no callsite.
func (r *Rank) resolvePaths(tid int, evs []Event) {
	for i := range evs {
		e := &evs[i]
		if e.PC&PathTag == 0 {
			continue
		}
		if e.PC&PathOther != 0 {
			e.PC &^= PathTag | PathOther
			continue
		}
		id := r.pathOf[pathKey{tid, uint32(e.PC &^ PathTag)}]
		e.PC, e.Path = 0, id
		if id != 0 {
			e.PC = r.Paths[id-1][0]
		}
	}
}

// PathFrames returns the return addresses of the rank's path id (the
// callsite first), nil for 0 or an unknown id.
func (r *Rank) PathFrames(id uint32) []uint64 {
	if id == 0 || int(id) > len(r.Paths) {
		return nil
	}
	return r.Paths[id-1]
}

// pathSources resolves a rank's paths to the sources of their callers
// (the frames above the callsite), once per path.
type pathSources struct {
	r   *Rank
	src func(pc uint64) *Source
	m   map[uint32][]*Source
}

func (p *pathSources) of(id uint32) []*Source {
	if id == 0 {
		return nil
	}
	if s, ok := p.m[id]; ok {
		return s
	}
	if p.m == nil {
		p.m = map[uint32][]*Source{}
	}
	var s []*Source
	if fr := p.r.PathFrames(id); len(fr) > 1 {
		s = make([]*Source, len(fr)-1)
		for i, pc := range fr[1:] {
			s[i] = p.src(pc)
		}
	}
	p.m[id] = s
	return s
}
