package trace

// The call paths of MPI calls in the exporters: OTF2 calling contexts and
// Perfetto's "path" argument.
//
// OTF2 calling contexts of MPI calls: a call whose callsite is resolved is
// entered and left in a calling context (CallingContextEnter/Leave). Each
// context is a region at a source code location, with a parent:
//
//   - the MPI function's region at its callsite (the leaf);
//   - with a call path (MPISCOPE_DEPTH > 1, Call.Path), its parent is the
//     region of the function that holds the callsite, at the location
//     where that function was called (the path's next frame), and so on up
//     the path; the outermost function known has no location (where it
//     was called from lies beyond the path's depth).
//
// So a region's location is where it was called: the leaf's as before
// (depth 1: one context per MPI function and callsite, no parent), and a
// tool shows the call tree as halo < solve < main with the lines of the
// calls. A chain stops at the first frame that is not resolved to a
// function (the C library's start-up frames above main without debug
// information), so two paths that differ only there share their contexts.
// User functions are regions of role function (paradigm user); a region
// named like one (MPI_Pcontrol(4)) is the same region.

// otf2PathKey is a call's context in a rank writer's cache: the leaf's
// region and callsite, and its path (the slice pathSources made for the
// path id: one per path and rank, so its first element's address names
// it).
type otf2PathKey struct {
	reg  uint32
	src  Source
	path **Source
	n    int
}

// callContext returns the calling context of call c in region reg, or
// otf2Undef32 when its callsite is not resolved.
func (o *OTF2Writer) callContext(reg uint32, c *Call) uint32 {
	if c.Src == nil {
		return otf2Undef32
	}
	path := knownCallers(c)
	if len(path) == 0 {
		return o.context(reg, c.Src)
	}
	if o.root == nil {
		return o.pathContext(reg, c.Src, path)
	}
	k := otf2PathKey{reg, *c.Src, &path[0], len(path)}
	if id, ok := o.lpath[k]; ok {
		return id
	}
	o.root.mu.Lock()
	id := o.root.pathContext(reg, c.Src, path)
	o.root.mu.Unlock()
	if o.lpath == nil {
		o.lpath = map[otf2PathKey]uint32{}
	}
	o.lpath[k] = id
	return id
}

// knownCallers is c.Path up to its first frame not resolved to a function,
// with the callsite's function known (else nothing).
func knownCallers(c *Call) []*Source {
	if c.Src.Func == "" {
		return nil
	}
	for i, s := range c.Path {
		if s == nil || s.Func == "" {
			return c.Path[:i]
		}
	}
	return c.Path
}

// pathContext defines (on the root, locked) the chain of contexts of a
// call in region reg at callsite src with callers path (innermost first,
// all resolved) and returns the leaf's.
func (o *OTF2Writer) pathContext(reg uint32, src *Source, path []*Source) uint32 {
	parent := uint32(otf2Undef32)
	scl := uint32(otf2Undef32)
	// From the outermost function down: each function's region at the
	// location it was called from (the next frame out).
	for i := len(path) - 1; i >= 0; i-- {
		fn := o.region(path[i].Func, roleFunction, otf2ParadigmUser)
		parent = o.ccNode(fn, scl, parent)
		scl = o.sclOf(path[i])
	}
	parent = o.ccNode(o.region(src.Func, roleFunction, otf2ParadigmUser), scl, parent)
	return o.ccNode(reg, o.sclOf(src), parent)
}

// sclOf returns the source code location of src (root, locked).
func (o *OTF2Writer) sclOf(src *Source) uint32 {
	scl, ok := o.scls[*src]
	if !ok {
		scl = uint32(len(o.scll))
		o.scls[*src] = scl
		o.scll = append(o.scll, *src)
	}
	return scl
}

// ccNode returns the context of region reg at location scl (otf2Undef32:
// none) under parent (otf2Undef32: a root), defining it when new (root,
// locked). A parent is always defined before its children.
func (o *OTF2Writer) ccNode(reg, scl, parent uint32) uint32 {
	k := otf2CCKey{reg, scl, parent}
	id, ok := o.ccs[k]
	if !ok {
		id = uint32(len(o.ccl))
		o.ccs[k] = id
		o.ccl = append(o.ccl, k)
	}
	return id
}

// pathArg is a call's callers as Perfetto's "path" argument, quoted: each
// function with the line that called the one below it, innermost first
// ("solve calltree.c:34 < main calltree.c:80"; "?" for a frame not
// resolved). Made once per path and rank writer: the walk gives each path
// a slice of its own (pathSources), whose first element's address names
// it (its elements are shared: the sources of return addresses).
func (p *PerfettoWriter) pathArg(path []*Source) string {
	if q, ok := p.pq[&path[0]]; ok {
		return q
	}
	var b []byte
	for i, s := range path {
		if i > 0 {
			b = append(b, " < "...)
		}
		if s == nil {
			b = append(b, '?')
			continue
		}
		if s.Func != "" {
			b = append(b, s.Func...)
			b = append(b, ' ')
		}
		b = append(b, s.String()...)
	}
	q := jq(string(b))
	if p.pq == nil {
		p.pq = map[**Source]string{}
	}
	p.pq[&path[0]] = q
	return q
}
