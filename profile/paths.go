package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Path is one call path of one MPI function within one region, summed over
// ranks and threads (MPISCOPE_DEPTH > 1): the return addresses from the
// callsite up, Frames[0] being the callsite and each next frame its
// caller's, up to the depth. Paths are matched across ranks by their
// frames' symbols (function, file and line) once symbolized, else by
// module and offset. (No per-rank spread: the addresses of one line that
// a rank reached apart, as an unrolled loop's, merge after the ranks have.)
type Path struct {
	Func   string
	Region string // region path, "" outside any region
	Other  bool   // the "other paths" bucket of a thread whose path table was full: Frames holds the callsite only
	Frames []Loc  // innermost first
	Calls  int64
	TimeNs int64
	Bytes  int64
}

// frameKey is what identifies a frame across ranks: its symbol when
// symbolized, else its module and offset.
func frameKey(b *strings.Builder, l *Loc) {
	if l.File != "" || l.Function != "" {
		b.WriteString("s\x00")
		b.WriteString(l.Function)
		b.WriteByte(0)
		b.WriteString(l.File)
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(l.Line))
	} else {
		b.WriteString("a\x00")
		b.WriteString(l.Module)
		b.WriteByte(0)
		b.WriteString(strconv.FormatUint(l.Offset, 16))
	}
	b.WriteByte(1)
}

// PathKey is the key by which paths merge: function, region, bucket and
// frames (frameKey).
func PathKey(p *Path) string {
	var b strings.Builder
	b.WriteString(p.Func)
	b.WriteByte(0)
	b.WriteString(p.Region)
	b.WriteByte(0)
	if p.Other {
		b.WriteByte('o')
	}
	b.WriteByte(1)
	for i := range p.Frames {
		frameKey(&b, &p.Frames[i])
	}
	return b.String()
}

func cmpLoc(a, b Loc) int {
	return cmp.Or(strings.Compare(a.Function, b.Function), strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
		strings.Compare(a.Module, b.Module), cmp.Compare(a.Offset, b.Offset))
}

// cmpPathKey orders paths by (Func, Region, Other, Frames).
func cmpPathKey(a, b Path) int {
	if c := cmp.Or(strings.Compare(a.Func, b.Func), strings.Compare(a.Region, b.Region)); c != 0 {
		return c
	}
	if a.Other != b.Other {
		if !a.Other {
			return -1
		}
		return 1
	}
	return slices.CompareFunc(a.Frames, b.Frames, cmpLoc)
}

// addPath merges q into a (same key).
func addPath(a *Path, q *Path) {
	a.Calls += q.Calls
	a.TimeNs += q.TimeNs
	a.Bytes += q.Bytes
}

// addPaths merges the paths of one more profile.
func (m *merger) addPaths(l []Path) {
	if len(l) > 0 && m.pathIdx == nil {
		m.pathIdx = make(map[string]int)
	}
	for i := range l {
		q := &l[i]
		k := PathKey(q)
		j, ok := m.pathIdx[k]
		if !ok {
			m.pathIdx[k] = len(m.paths)
			c := *q
			c.Frames = slices.Clone(q.Frames)
			m.paths = append(m.paths, c)
			continue
		}
		addPath(&m.paths[j], q)
	}
}

// CompactPaths merges the paths that became equal once symbolized: the
// return addresses of one source line (an unrolled loop's, or the same
// code in two executables) make one path. p stays sorted.
func (p *Profile) CompactPaths() {
	if len(p.Paths) == 0 {
		return
	}
	m := &merger{}
	m.addPaths(p.Paths)
	p.Paths = m.paths
	sortStable(p.Paths, cmpPathKey)
}

func (e *encoder) paths(l []Path) {
	e.uvarint(uint64(len(l)))
	for i := range l {
		q := &l[i]
		e.str(q.Func)
		e.str(q.Region)
		flags := uint64(0)
		if q.Other {
			flags |= 1
		}
		e.uvarint(flags)
		e.uvarint(uint64(len(q.Frames)))
		for j := range q.Frames {
			f := &q.Frames[j]
			e.str(f.Module)
			e.uvarint(f.Offset)
			e.str(f.Function)
			e.str(f.File)
			e.int(f.Line)
		}
		e.varint(q.Calls)
		e.varint(q.TimeNs)
		e.varint(q.Bytes)
	}
}

func (d *decoder) paths(dst []Path) []Path {
	n := d.count("path", 8)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		q := &l[i]
		q.Func = d.str()
		q.Region = d.str()
		off := d.pos
		flags := d.uvarint()
		if flags > 1 {
			d.fail(off, "invalid path flags %d in %s", flags, d.ctx)
			return l
		}
		q.Other = flags&1 != 0
		nf := d.count("frame", 5)
		q.Frames = nil
		if nf > 0 {
			q.Frames = make([]Loc, nf)
		}
		for j := 0; j < nf && d.err == nil; j++ {
			f := &q.Frames[j]
			f.Module = d.str()
			f.Offset = d.uvarint()
			f.Function = d.str()
			f.File = d.str()
			f.Line = d.int()
		}
		q.Calls = d.varint()
		q.TimeNs = d.varint()
		q.Bytes = d.varint()
	}
	return l
}
