package analyze

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// The critical path in the job by pointer doubling, in a number of
// exchanges that grows with the logarithm of the jumps instead of one
// message per jump (tokenReplay).
//
// The backward replay (replay, stepBack) is a chain over the jumps: from a
// jump of rank r the path continues at its partner p at the jump's ready
// time, where it takes p's last jump ending at or before that time, or,
// without one, p's first call (the path's start: a terminal). So each jump
// has one successor, which the partner's rank can find for all jumps at
// once:
//
//  1. each rank sends its jumps' ready times to their partners (one
//     exchange) and gets back their successors (a second one);
//  2. pointer doubling: level i+1 of a jump is level i of its level i,
//     the jump 2^(i+1) steps on (a request and a reply per level), until
//     every chain has reached its terminal;
//  3. the path from the end rank's last jump is marked top down: a mark
//     covering 2^(i+1) steps from a jump is split at level i into the
//     2^i from that jump and the 2^i from its level i (one exchange per
//     level), down to one mark per jump on the path, each with its place
//     on the path;
//  4. each jump on the path sends its ready time to its successor (one
//     exchange): the time the path arrives there, the end of the segment
//     the path spends on that rank.
//
// The replay also keeps a cursor per rank (a jump once passed is never
// taken again), which the successors above know only for a jump to the
// rank itself (the jumps before it). Elsewhere the two differ only where
// the path comes back to a rank at the very time of a jump it already
// took (each step's time is at most the last one's: ready times equal to
// the calls' ends, on two ranks at the same nanosecond): each
// rank checks that its jumps on the path come in decreasing order, the
// ranks agree on it in one reduction, and when one does not, the path is
// replayed by the token instead (tokenReplay): the result is the offline
// one in every case.

// pnode is a jump of a rank (k its index) or the rank's start (k < 0: no
// earlier jump, the path's end); r < 0: no rank (a partner out of range).
type pnode struct {
	r, k int32
}

// pathStats is what the path's exchanges cost one rank.
type pathStats struct {
	levels    int   // doubling levels
	exchanges int   // Alltoallv calls
	sent      int64 // bytes this rank sent in them
	tokens    bool  // replayed by the token instead
}

func (s pathStats) String() string {
	if s.tokens {
		return fmt.Sprintf("levels=%d,exchanges=%d,kb=%d,token", s.levels, s.exchanges, s.sent>>10)
	}
	return fmt.Sprintf("levels=%d,exchanges=%d,kb=%d", s.levels, s.exchanges, s.sent>>10)
}

// pathVerdict is what the ranks agree on after marking the path.
type pathVerdict struct {
	Bad      bool  // some rank's jumps on the path not in decreasing order
	TermPos  int64 // the terminal's place on the path (-1: none found)
	TermRank int
	Count    int64 // jumps on the path
}

// doublingReplay is the critical path in the job (see above): this rank's
// segments of the path, in time order, and info's start rank and jumps.
func doublingReplay(c Comm, jumps []jump, p *rankPass, endRank int, info *pathInfo, st *pathStats) ([][2]float64, error) {
	me, size := c.Rank(), c.Size()
	le := binary.LittleEndian
	n := len(jumps)
	// below: the replay's cursor (the jumps not yet passed), which is
	// known here only for a jump to this rank itself (the jump's own
	// index).
	searchBelow := func(below int, t float64) int32 {
		return int32(sort.Search(below, func(x int) bool { return jumps[x].t1 > t }) - 1)
	}
	search := func(t float64) int32 { return searchBelow(n, t) }
	a2a := func(out [][]byte) ([][]byte, error) {
		st.exchanges++
		for _, b := range out {
			st.sent += int64(len(b))
		}
		return c.Alltoallv(out)
	}
	active := func(q pnode) bool { return q.r >= 0 && q.k >= 0 }
	// 1. The successors. Each message starts with a header: this rank's
	// jumps (queries), whether a successor it gives is a jump (replies).
	succ := make([]pnode, n)
	out := make([][]byte, size)
	for d := range out {
		out[d] = le.AppendUint64(nil, uint64(n))
	}
	for k := range jumps {
		j := &jumps[k]
		switch pr := int(j.partner); {
		case pr < 0 || pr >= size:
			succ[k] = pnode{-1, -1}
		case pr == me:
			succ[k] = pnode{int32(me), searchBelow(k, j.ready)}
		default:
			out[pr] = le.AppendUint64(out[pr], math.Float64bits(j.ready))
		}
	}
	in, err := a2a(out)
	if err != nil {
		return nil, err
	}
	var total uint64
	more := false
	for _, k := range succ {
		more = more || active(k)
	}
	for s, b := range in {
		if len(b) < 8 || (len(b)-8)%8 != 0 {
			return nil, fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
		}
		total += le.Uint64(b)
		rep := []byte{0}
		for b = b[8:]; len(b) > 0; b = b[8:] {
			k := search(math.Float64frombits(le.Uint64(b)))
			rep = le.AppendUint32(rep, uint32(k))
			more = more || k >= 0
		}
		out[s] = rep
	}
	flag(out, more)
	if in, err = a2a(out); err != nil {
		return nil, err
	}
	more, err = fillReplies(in, jumps, size, me, func(k int, b []byte) (pnode, []byte) {
		return pnode{jumps[k].partner, int32(le.Uint32(b))}, b[4:]
	}, 4, succ)
	if err != nil {
		return nil, err
	}
	// 2. Pointer doubling. A chain has at most total jumps: 2^maxLevels
	// steps reach its terminal (or it has a cycle, which the check in 4
	// sees).
	levels := [][]pnode{succ}
	maxLevels := bits.Len64(total)
	for more && len(levels) <= maxLevels {
		lv := levels[len(levels)-1]
		next := make([]pnode, n)
		copy(next, lv)
		for d := range out {
			out[d] = out[d][:0]
		}
		more = false
		for k, q := range lv {
			if !active(q) {
				continue
			}
			if int(q.r) == me {
				next[k] = lv[q.k]
				more = more || active(next[k])
				continue
			}
			out[q.r] = le.AppendUint32(out[q.r], uint32(q.k))
		}
		if in, err = a2a(out); err != nil {
			return nil, err
		}
		for s, b := range in {
			if len(b)%4 != 0 {
				return nil, fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
			}
			rep := []byte{0}
			for ; len(b) > 0; b = b[4:] {
				k := int32(le.Uint32(b))
				if k < 0 || int(k) >= n {
					return nil, fmt.Errorf("critical path: rank %d asks for jump %d of %d", s, k, n)
				}
				q := lv[k]
				rep = le.AppendUint64(rep, uint64(uint32(q.r))<<32|uint64(uint32(q.k)))
				more = more || active(q)
			}
			out[s] = rep
		}
		flag(out, more)
		if in, err = a2a(out); err != nil {
			return nil, err
		}
		more, err = fillReplies(in, nil, size, me, func(_ int, b []byte) (pnode, []byte) {
			x := le.Uint64(b)
			return pnode{int32(uint32(x >> 32)), int32(uint32(x))}, b[8:]
		}, 8, next, lv)
		if err != nil {
			return nil, err
		}
		levels = append(levels, next)
	}
	st.levels = len(levels) - 1
	// 3. The marks, top down: a mark covers the steps [pos, pos+span) of
	// the path from its jump.
	type mark struct {
		k         int32
		pos, span int64
	}
	var marks []mark
	termPos := int64(-1)
	bad := false
	land := func(q pnode, pos, span int64) {
		switch {
		case q.r < 0:
			bad = true // a partner out of range: no terminal
		case q.k < 0:
			if termPos < 0 || pos < termPos {
				termPos = pos
			}
		default:
			marks = append(marks, mark{q.k, pos, span})
		}
	}
	if me == endRank {
		land(pnode{int32(me), search(p.last)}, 0, int64(2)<<(len(levels)-1))
	}
	for i := len(levels) - 1; i >= 0; i-- {
		half := int64(1) << i
		for d := range out {
			out[d] = out[d][:0]
		}
		for x := range len(marks) {
			m := &marks[x]
			if m.span <= half {
				continue
			}
			q := levels[i][m.k]
			pos, span := m.pos+half, m.span-half
			m.span = half
			if q.r >= 0 && int(q.r) != me {
				out[q.r] = le.AppendUint64(le.AppendUint64(le.AppendUint32(out[q.r], uint32(q.k)), uint64(pos)), uint64(span))
				continue
			}
			land(q, pos, span)
		}
		if in, err = a2a(out); err != nil {
			return nil, err
		}
		for s, b := range in {
			if len(b)%20 != 0 {
				return nil, fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
			}
			for ; len(b) > 0; b = b[20:] {
				k := int32(le.Uint32(b))
				if int(k) >= n {
					return nil, fmt.Errorf("critical path: rank %d marks jump %d of %d", s, k, n)
				}
				land(pnode{int32(me), k}, int64(le.Uint64(b[4:])), int64(le.Uint64(b[12:])))
			}
		}
		if i > 0 {
			levels[i] = nil
		}
	}
	// 4. The time the path arrives at each node: its predecessor's ready
	// time (the end rank's last call's end for the first).
	slices.SortFunc(marks, func(a, b mark) int { return int(a.pos - b.pos) })
	for x := 1; x < len(marks); x++ {
		if marks[x].k >= marks[x-1].k {
			bad = true // the replay's cursor would not take it
		}
	}
	at := make(map[int32]int, len(marks))
	for x, m := range marks {
		at[m.k] = x
	}
	arrive := make([]float64, len(marks))
	termArrive := math.NaN()
	put := func(k int32, pos int64, t float64) {
		if k < 0 {
			if pos == termPos {
				termArrive = t
			}
			return
		}
		if x, ok := at[k]; ok && marks[x].pos == pos {
			arrive[x] = t
		}
	}
	if me == endRank {
		put(search(p.last), 0, p.last)
	}
	for d := range out {
		out[d] = out[d][:0]
	}
	for _, m := range marks {
		q, t := succ[m.k], jumps[m.k].ready
		switch {
		case q.r < 0:
		case int(q.r) == me:
			put(q.k, m.pos+1, t)
		default:
			out[q.r] = le.AppendUint64(le.AppendUint64(le.AppendUint32(out[q.r], uint32(q.k)), uint64(m.pos+1)), math.Float64bits(t))
		}
	}
	if in, err = a2a(out); err != nil {
		return nil, err
	}
	for s, b := range in {
		if len(b)%20 != 0 {
			return nil, fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
		}
		for ; len(b) > 0; b = b[20:] {
			put(int32(le.Uint32(b)), int64(le.Uint64(b[4:])), math.Float64frombits(le.Uint64(b[12:])))
		}
	}
	v := pathVerdict{Bad: bad, TermPos: termPos, TermRank: -1, Count: int64(len(marks))}
	if termPos >= 0 {
		v.TermRank = me
	}
	if err := allReduce(c, &v, &v, func(a, b *pathVerdict) {
		a.Bad = a.Bad || b.Bad
		a.Count += b.Count
		if b.TermPos >= 0 && (a.TermPos < 0 || b.TermPos < a.TermPos) {
			a.TermPos, a.TermRank = b.TermPos, b.TermRank
		}
	}); err != nil {
		return nil, err
	}
	if v.Bad || v.TermPos < 0 || v.Count != v.TermPos {
		st.tokens = true
		return tokenReplay(c, jumps, p, me == endRank, info)
	}
	info.StartRank, info.Jumps = v.TermRank, int(v.TermPos)
	// The segments, from the path's start (the largest place) on.
	var segs [][2]float64
	if v.TermRank == me && termArrive > p.first {
		segs = append(segs, [2]float64{p.first, termArrive})
	}
	for x := len(marks) - 1; x >= 0; x-- {
		if r := jumps[marks[x].k].ready; arrive[x] > r {
			segs = append(segs, [2]float64{r, arrive[x]})
		}
	}
	return segs, nil
}

// flag sets the header byte of every message of out: whether this rank
// has, or gives another, a jump left to follow.
func flag(out [][]byte, more bool) {
	for _, b := range out {
		b[0] = 0
		if more {
			b[0] = 1
		}
	}
}

// fillReplies reads the replies of an exchange of the path (a header byte,
// set when some rank has a jump left to follow, then one node per request
// in the order this rank asked) into dst, for the jumps whose current
// node (cur, or their partner in jumps when cur is nil) is on another rank
// and active; it returns whether any rank has one.
func fillReplies(in [][]byte, jumps []jump, size, me int, read func(k int, b []byte) (pnode, []byte), width int, dst []pnode, cur ...[]pnode) (bool, error) {
	more := false
	for s, b := range in {
		if len(b) < 1 || (len(b)-1)%width != 0 {
			return false, fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
		}
		more = more || b[0] != 0
		in[s] = b[1:]
	}
	for k := range dst {
		var to int
		if cur != nil {
			q := cur[0][k]
			if q.r < 0 || q.k < 0 || int(q.r) == me {
				continue
			}
			to = int(q.r)
		} else {
			to = int(jumps[k].partner)
			if to < 0 || to >= size || to == me {
				continue
			}
		}
		if len(in[to]) < width {
			return false, fmt.Errorf("critical path: too few replies from rank %d", to)
		}
		dst[k], in[to] = read(k, in[to])
	}
	for s, b := range in {
		if len(b) != 0 {
			return false, fmt.Errorf("critical path: %d bytes too many from rank %d", len(b), s)
		}
	}
	return more, nil
}
