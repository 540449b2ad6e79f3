package analyze

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"
)

// The critical path in the job by pointer doubling, in a number of
// exchanges that grows with the logarithm of the path's jumps instead of
// one message per jump (tokenReplay).
//
// The backward replay (replay, stepBack) is a chain over the jumps: from a
// jump of rank r the path continues at its partner p at the jump's ready
// time, where it takes p's last jump ending at or before that time, or,
// without one, p's first call (the path's start: a terminal). So each jump
// j has one successor S_0(j), which the partner's rank can find for all
// jumps at once. Write S_i(j) for the node 2^i steps on from j (or the
// terminal, when the chain reaches it sooner), R_i(j) for the ready time
// of the jump just before S_i(j) on the chain (R_0(j): j's ready time),
// and In_i(k) for the jumps j with S_i(j) = k. A jump's rank keeps its S_i
// and R_i, and its In_i:
//
//  1. each rank sends its jumps' ready times to their partners (one
//     exchange); the partner's rank finds their successors, so it has
//     In_0 of its own jumps, and sends the successors back (a second);
//  2. pointer doubling, pushed: at level i the rank of each jump k sends
//     S_i(k) and R_i(k) to the rank of every j in In_i(k), which makes
//     them S_{i+1}(j) and R_{i+1}(j), and tells the rank of S_i(k) that
//     j is in its In_{i+1}; one exchange per level;
//  3. in the same exchange, the path is marked from the end rank's last
//     jump (place 0): after level i the jumps at places below 2^(i+1) are
//     marked, each jump x marked at place t sending place t + 2^i and
//     R_i(x) to S_i(x): the place of S_i(x) on the path (a terminal
//     reached sooner gets a larger place; the smallest is its own) and
//     the time the path arrives there (the ready time of the jump before
//     it), the end of the segment the path spends on its rank. Level i
//     runs only when the path has a jump at place 2^i - 1 (for i = 0 the
//     end rank's last jump), marked by then; that jump's rank sees
//     whether its S_i is the terminal: the path then has fewer than
//     2^(i+1) jumps (T <= 2^i - 1 + 2^i), so after this level every
//     jump is marked (places below 2^(i+1)) and the start has its exact
//     place T from the mark at T - 2^i (below 2^i, as T >= 2^i). Each
//     message carries a flag, set by that rank when the S_i is a jump, so
//     every rank knows whether another level follows without a
//     reduction. (Before 2026-11-28 the end rank set the flag from its own
//     S_i, a level later: one exchange more whenever T is not a power of
//     two.)
//
// A path of T >= 1 jumps takes floor(log2 T) + 1 levels, floor(log2 T) +
// 3 exchanges (one when T is 0), whatever the length of the other chains.
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
	levels    int   // the path's last doubling level L (2^L <= its jumps < 2^(L+1))
	exchanges int   // Alltoallv calls
	sent      int64 // bytes this rank sent in them (to other ranks)
	tokens    bool  // replayed by the token instead
	gathered  bool  // replayed at the end rank (gatherReplay): no exchange, no level
	// in the exchanges (wall time): waiting for the other ranks and
	// moving the bytes; the rest of the path's time is this rank's own
	// work.
	inExchanges time.Duration
}

func (s pathStats) String() string {
	ms := float64(s.inExchanges.Microseconds()) / 1e3
	if s.tokens {
		return fmt.Sprintf("levels=%d,exchanges=%d,kb=%d,a2a_ms=%.1f,token", s.levels, s.exchanges, s.sent>>10, ms)
	}
	if s.gathered {
		return fmt.Sprintf("levels=%d,exchanges=%d,kb=%d,a2a_ms=%.1f,gathered", s.levels, s.exchanges, s.sent>>10, ms)
	}
	return fmt.Sprintf("levels=%d,exchanges=%d,kb=%d,a2a_ms=%.1f", s.levels, s.exchanges, s.sent>>10, ms)
}

// pathCost is the doubling levels and exchanges of a path of jumps jumps
// (doublingReplay, without a fall back to the token).
func pathCost(jumps int) (levels, exchanges int) {
	if jumps == 0 {
		return 0, 1
	}
	levels = bits.Len(uint(jumps)) - 1
	return levels, levels + 3
}

// pathVerdict is what the ranks agree on after marking the path.
type pathVerdict struct {
	Bad      bool  // some rank's jumps on the path not in decreasing order
	TermPos  int64 // the terminal's place on the path (-1: none found)
	TermRank int
	Count    int64 // jumps on the path
	// Err is a rank's failure in the exchanges (ErrRank's; "": none).
	Err     string
	ErrRank int
}

// The messages (since 2026-11-28 ranks and indices as unsigned varints,
// an index that may be -1 as index + 1; times as 8 bytes little endian;
// before, 4 bytes each):
//   - the successors' queries: the flag (whether the path has a jump),
//     this rank's jumps (8 bytes), then per jump asked its index (the
//     difference to the one asked before: they go in order) and ready time;
//   - the replies: the flag 0 (since 2026-11-29: treeFailed, a failure,
//     starts any of these messages in its place), a bitmap over the
//     queries the receiver sent, which of
//     the sender's own queries to it were for a leaf (a jump no other
//     jump's successor is, not the path's end: it can never be on the
//     path, so no update or in-entry is sent for it, at any level), then
//     the successor of each query received (index + 1);
//   - a level's messages: the flag (whether another level follows) and the
//     three counts, then
//   - updates, to the rank of j: j's index, S_{i+1}(j) (rank + 1, index +
//     1), R_{i+1}(j);
//   - in-entries, to the rank of k: k's index, j (rank, index), j in In_{i+1}(k);
//   - marks, to the rank of a node: its index + 1 (0: the rank's start),
//     its place, the time the path arrives there.

// readUvarint reads an unsigned varint of at most max from b at *off.
func readUvarint(b []byte, off *int, max uint64) (uint64, bool) {
	v, n := binary.Uvarint(b[*off:])
	if n <= 0 || v > max {
		return 0, false
	}
	*off += n
	return v, true
}

// readF64 reads 8 bytes of a float64 from b at *off.
func readF64(b []byte, off *int) (float64, bool) {
	if len(b)-*off < 8 {
		return 0, false
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(b[*off:]))
	*off += 8
	return f, true
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
	// The jumps' ends beside each other, for the searches (sort.Search
	// over the 48-byte jumps through a closure took a seventh of the
	// path's CPU).
	t1s := make([]float64, n)
	for k := range jumps {
		t1s[k] = jumps[k].t1
	}
	searchBelow := func(below int, t float64) int32 {
		lo, hi := 0, below // the first ending after t
		for lo < hi {
			if m := int(uint(lo+hi) >> 1); !(t1s[m] > t) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return int32(lo - 1)
	}
	search := func(t float64) int32 { return searchBelow(n, t) }
	// failed: this rank's failure (a message that is not one); learnt:
	// another rank's, from the flag treeFailed that starts its messages
	// (since 2026-11-29). A rank that fails takes part in the next step
	// all the ranks take (the exchange or the verdict that the last
	// exchange's flags say), with the failure in place of its messages;
	// the ranks that see it go to the verdict at once, which carries the
	// failure to all: no rank is left waiting in an exchange.
	var failed, learnt error
	halt := false
	a2a := func(out [][]byte) ([][]byte, error) {
		if failed != nil {
			for d := range out {
				out[d] = failMsg(me, failed)
			}
		}
		st.exchanges++
		for d, b := range out {
			if d != me {
				st.sent += int64(len(b))
			}
		}
		t0 := time.Now()
		in, err := c.Alltoallv(out)
		st.inExchanges += time.Since(t0)
		for s, b := range in {
			if s != me && len(b) > 0 && b[0] == treeFailed && learnt == nil {
				learnt = readFail(b, s)
			}
		}
		halt = failed != nil || learnt != nil
		return in, err
	}
	// flags is whether any message of an exchange has its flag set.
	flags := func(in [][]byte) bool {
		for _, b := range in {
			if len(b) > 0 && b[0] != 0 {
				return true
			}
		}
		return false
	}
	active := func(q pnode) bool { return q.r >= 0 && q.k >= 0 }
	// This rank's jumps on the path: index, place, arrival; term once it
	// has sent a mark to a terminal (the first is the one that counts: a
	// later one's place is larger).
	type mark struct {
		k    int32
		pos  int64
		at   float64
		term bool
	}
	var marks []mark
	termPos, termArrive := int64(-1), math.NaN()
	land := func(k int32, pos int64, t float64) {
		if k >= 0 {
			marks = append(marks, mark{k: k, pos: pos, at: t})
		} else if termPos < 0 || pos < termPos {
			termPos, termArrive = pos, t
		}
	}
	// The path's first node, the end rank's last jump, arrived at with
	// its last call's end.
	end := int32(-1)
	more := false
	if me == endRank {
		end = search(p.last)
		land(end, 0, p.last)
		more = end >= 0
	}
	// 1. The successors. Each message starts with the flag (whether the
	// path has a jump) and this rank's jumps; the queries are (index,
	// ready time).
	type inEntry struct {
		k int32 // this rank's jump
		j pnode // a jump whose S_i is k
	}
	var ins []inEntry
	succ := make([]pnode, n)
	out := make([][]byte, size)
	asked := make([]int, size)
	for k := range jumps {
		if pr := int(jumps[k].partner); pr >= 0 && pr < size && pr != me {
			asked[pr]++
		}
	}
	for d := range out {
		out[d] = le.AppendUint64(make([]byte, 1, 9+asked[d]*(binary.MaxVarintLen32+8)), uint64(n))
		out[d][0] = flagByte(more)
	}
	lastAsked := make([]int, size)
	for k := range jumps {
		j := &jumps[k]
		switch pr := int(j.partner); {
		case pr < 0 || pr >= size:
			succ[k] = pnode{-1, -1}
		case pr == me:
			s := searchBelow(k, j.ready)
			succ[k] = pnode{int32(me), s}
			if s >= 0 {
				ins = append(ins, inEntry{s, pnode{int32(me), int32(k)}})
			}
		default:
			out[pr] = le.AppendUint64(binary.AppendUvarint(out[pr], uint64(k-lastAsked[pr])), math.Float64bits(j.ready))
			lastAsked[pr] = k
		}
	}
	in, err := a2a(out)
	if err != nil {
		return nil, err
	}
	queries := len(ins)
	for _, b := range in {
		queries += max(len(b)-9, 0) / 9 // at most: a varint and 8 bytes each
	}
	ins = slices.Grow(ins, queries)
	var total uint64
	nOf := make([]int32, size) // each rank's jumps
	nq := make([]int, size)    // the queries received from each rank, whose ins entries follow those of the ranks before
	more = !halt && flags(in)
	if !halt {
		failed = func() error {
			for s, b := range in {
				if len(b) < 9 {
					return fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
				}
				m := le.Uint64(b[1:])
				if m > math.MaxInt32 {
					return fmt.Errorf("critical path: rank %d has %d jumps", s, m)
				}
				nOf[s] = int32(m)
				total += m
				rep := out[s][:0]
				jk := int64(0)
				for off := 9; off < len(b); {
					dk, ok := readUvarint(b, &off, uint64(nOf[s]))
					t, ok2 := readF64(b, &off)
					if jk += int64(dk); !ok || !ok2 || jk >= int64(nOf[s]) || s == me {
						return fmt.Errorf("critical path: rank %d asks for its jump %d of %d (byte %d of %d)", s, jk, nOf[s], off, len(b))
					}
					k := search(t)
					rep = binary.AppendUvarint(rep, uint64(k+1))
					ins = append(ins, inEntry{k, pnode{int32(s), int32(jk)}})
					nq[s]++
				}
				out[s] = rep
			}
			return nil
		}()
	}
	if !halt && more && failed != nil {
		if _, err := a2a(out); err != nil { // the failure in place of the replies
			return nil, err
		}
	} else if !halt && more {
		failed = func() error {
			// The leaves: jumps that are no jump's successor (bar the path's
			// end), told to the ranks that found their successors, which keep
			// them out of the in-lists.
			hasIn := make([]bool, n)
			for _, x := range ins {
				if x.k >= 0 {
					hasIn[x.k] = true
				}
			}
			leaf := func(k int) bool { return !hasIn[k] && !(me == endRank && int32(k) == end) }
			// One pass over the jumps for all ranks' bitmaps (before
			// 2026-11-28 one per rank).
			bms := make([][]byte, size)
			xs := make([]int, size)
			for d := range bms {
				if d != me {
					bms[d] = make([]byte, 1+(asked[d]+7)/8, 1+(asked[d]+7)/8+len(out[d])) // the flag, 0, and the bitmap
				}
			}
			for k := range jumps {
				if d := int(jumps[k].partner); d >= 0 && d < size && d != me {
					if leaf(k) {
						bms[d][1+xs[d]/8] |= 1 << (xs[d] % 8)
					}
					xs[d]++
				}
			}
			for d := range out {
				if d != me {
					out[d] = append(bms[d], out[d]...)
				}
			}
			if in, err = a2a(out); err != nil || halt {
				return err
			}
			for s, b := range in {
				if s == me {
					continue
				}
				nb := (nq[s] + 7) / 8
				if len(b) < 1+nb || b[0] != 0 {
					return fmt.Errorf("critical path: %d bytes from rank %d, want at least %d and the flag 0 at byte 0", len(b), s, 1+nb)
				}
				bms[s], in[s] = b[1:1+nb], b[1+nb:]
			}
			offs := make([]int, size)
			for k := range jumps {
				pr := int(jumps[k].partner)
				if pr < 0 || pr >= size || pr == me {
					continue
				}
				x, ok := readUvarint(in[pr], &offs[pr], uint64(nOf[pr]))
				if !ok {
					return fmt.Errorf("critical path: rank %d's reply at byte %d of %d: not a jump of %d", pr, 1+(nq[pr]+7)/8+offs[pr], 1+(nq[pr]+7)/8+len(in[pr]), nOf[pr])
				}
				succ[k] = pnode{int32(pr), int32(x) - 1}
			}
			for s := range in {
				if s != me && offs[s] != len(in[s]) {
					return fmt.Errorf("critical path: %d bytes from rank %d, want %d", 1+(nq[s]+7)/8+len(in[s]), s, 1+(nq[s]+7)/8+offs[s])
				}
			}
			// Keep the entries of jumps that are no leaves and whose
			// successor is a jump (the queries' entries, in order by rank).
			kept := ins[:0]
			q := make([]int, size)
			for _, x := range ins {
				drop := x.k < 0
				if r := int(x.j.r); r == me {
					drop = drop || leaf(int(x.j.k))
				} else {
					drop = drop || bms[r][q[r]/8]&(1<<(q[r]%8)) != 0
					q[r]++
				}
				if !drop {
					kept = append(kept, x)
				}
			}
			ins = kept
			return nil
		}()
	}
	// 2 and 3. The levels. A chain without a cycle has at most total
	// jumps: 2^maxLevels steps reach its terminal (a cycle, which the
	// check below sees, runs until then).
	ready := make([]float64, n)
	for k := range jumps {
		ready[k] = jumps[k].ready
	}
	maxLevels := bits.Len64(total)
	ups := make([][]byte, size)
	inb := make([][]byte, size)
	mks := make([][]byte, size)
	nup, nin, nmk := make([]int, size), make([]int, size), make([]int, size)
	bad := false
	level := 0
	for ; !halt && more && level <= maxLevels; level++ {
		if failed != nil {
			if _, err := a2a(out); err != nil { // the failure in place of the level's messages
				return nil, err
			}
			break
		}
		for d := range size {
			ups[d], inb[d], mks[d] = ups[d][:0], inb[d][:0], mks[d][:0]
			nup[d], nin[d], nmk[d] = 0, 0, 0
		}
		for _, x := range ins {
			q, r := succ[x.k], ready[x.k]
			u := binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(ups[x.j.r], uint64(x.j.k)), uint64(q.r+1)), uint64(q.k+1))
			ups[x.j.r] = le.AppendUint64(u, math.Float64bits(r))
			nup[x.j.r]++
			if active(q) {
				inb[q.r] = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(inb[q.r], uint64(q.k)), uint64(x.j.r)), uint64(x.j.k))
				nin[q.r]++
			}
		}
		half := int64(1) << level
		for x := range marks {
			m := &marks[x]
			q := succ[m.k]
			if q.r < 0 {
				bad = true // a partner out of range: no terminal
				continue
			}
			if q.k < 0 {
				if m.term {
					continue
				}
				m.term = true
			}
			mks[q.r] = le.AppendUint64(binary.AppendUvarint(binary.AppendUvarint(mks[q.r], uint64(q.k+1)), uint64(m.pos+half)), math.Float64bits(ready[m.k]))
			nmk[q.r]++
		}
		// Another level follows when the path's jump at place 2^i - 1
		// (marked by now) has a jump 2^i steps on.
		flag := false
		for x := range marks {
			if m := &marks[x]; m.pos == half-1 && active(succ[m.k]) {
				flag = true
			}
		}
		for d := range size {
			b := append(out[d][:0], flagByte(flag))
			b = binary.AppendUvarint(binary.AppendUvarint(binary.AppendUvarint(b, uint64(nup[d])), uint64(nin[d])), uint64(nmk[d]))
			out[d] = append(append(append(b, ups[d]...), inb[d]...), mks[d]...)
		}
		if in, err = a2a(out); err != nil {
			return nil, err
		}
		if halt {
			break
		}
		// Everything sent has been read from this level's S, R and In:
		// they become the next level's in place.
		ins = ins[:0]
		more = flags(in)
		failed = func() error {
			for s, b := range in {
				if len(b) < 1 {
					return fmt.Errorf("critical path: %d bytes from rank %d", len(b), s)
				}
				off := 1
				fail := func(what string) error {
					return fmt.Errorf("critical path: rank %d's level %d message: %s at byte %d of %d", s, level, what, off, len(b))
				}
				nu, ok1 := readUvarint(b, &off, uint64(len(b)))
				ni, ok2 := readUvarint(b, &off, uint64(len(b)))
				nm, ok3 := readUvarint(b, &off, uint64(len(b)))
				if !ok1 || !ok2 || !ok3 {
					return fail("bad counts")
				}
				for range nu {
					k, ok1 := readUvarint(b, &off, math.MaxInt32)
					qr, ok2 := readUvarint(b, &off, uint64(size))
					qk, ok3 := readUvarint(b, &off, math.MaxInt32)
					t, ok4 := readF64(b, &off)
					q := pnode{int32(qr) - 1, int32(qk) - 1}
					if !ok1 || !ok2 || !ok3 || !ok4 || k >= uint64(n) || q.r >= 0 && q.k >= nOf[q.r] {
						return fail(fmt.Sprintf("an update of jump %d to %v", k, q))
					}
					succ[k], ready[k] = q, t
				}
				for range ni {
					k, ok1 := readUvarint(b, &off, math.MaxInt32)
					jr, ok2 := readUvarint(b, &off, uint64(size-1))
					var jk uint64
					ok3 := false
					if ok2 {
						jk, ok3 = readUvarint(b, &off, math.MaxInt32)
					}
					if !ok1 || !ok2 || !ok3 || k >= uint64(n) || jk >= uint64(nOf[jr]) {
						return fail(fmt.Sprintf("an in-entry of jump %d", k))
					}
					ins = append(ins, inEntry{int32(k), pnode{int32(jr), int32(jk)}})
				}
				for range nm {
					k, ok1 := readUvarint(b, &off, uint64(n))
					pos, ok2 := readUvarint(b, &off, math.MaxInt64)
					t, ok3 := readF64(b, &off)
					if !ok1 || !ok2 || !ok3 {
						return fail("a mark")
					}
					land(int32(k)-1, int64(pos), t)
				}
				if off != len(b) {
					return fail(fmt.Sprintf("%d, %d and %d records end", nu, ni, nm))
				}
			}
			return nil
		}()
	}
	st.levels = max(level-1, 0)
	// 4. The ranks agree on the path's start and length, and whether the
	// replay's cursor would have taken it.
	slices.SortFunc(marks, func(a, b mark) int { return int(a.pos - b.pos) })
	for x := 1; x < len(marks); x++ {
		if marks[x].k >= marks[x-1].k {
			bad = true // the replay's cursor would not take it
		}
	}
	v := pathVerdict{Bad: bad, TermPos: termPos, TermRank: -1, Count: int64(len(marks))}
	if termPos >= 0 {
		v.TermRank = me
	}
	var je *jobError
	if failed != nil {
		v.Err, v.ErrRank = failed.Error(), me
	} else if errors.As(learnt, &je) {
		v.Err, v.ErrRank = je.msg, je.rank
	}
	if err := allReduce(c, &v, &v, func(a, b *pathVerdict) {
		a.Bad = a.Bad || b.Bad
		a.Count += b.Count
		if b.TermPos >= 0 && (a.TermPos < 0 || b.TermPos < a.TermPos) {
			a.TermPos, a.TermRank = b.TermPos, b.TermRank
		}
		if a.Err == "" {
			a.Err, a.ErrRank = b.Err, b.ErrRank
		}
	}); err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	if v.Err != "" {
		return nil, &jobError{rank: v.ErrRank, msg: v.Err}
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
		if r := jumps[marks[x].k].ready; marks[x].at > r {
			segs = append(segs, [2]float64{r, marks[x].at})
		}
	}
	return segs, nil
}

// flagByte is a message's flag byte.
func flagByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// The critical path gathered at the end rank (since 2026-11-28, late
// night; up a binomial tree since 2026-11-29): when the job's jumps fit a
// quarter of the bound at the rank of the path's end (gatherJumpBytes
// each), every rank's jumps (their ends, ready times and partners), its
// first call's start and its last call's end go there up a binomial tree
// rooted at that rank; the end rank runs the offline backward replay
// itself (replay: the same steps, cursors and ties) and sends each rank
// its segments of the path, with the path's start rank and length, down
// the same tree (tree.go: ranks renumbered relative to the end rank, the
// parent of rel > 0 is rel without its lowest set bit, so a child's
// subtree is a contiguous block of ranks).
//
// Up: each rank receives its children's bundles (smallest step first),
// appends them to its own entry and sends the whole to its parent: a flag
// byte (0: the entries follow; 1: the subtree's jumps do not fit), the
// number of entries and of jumps, then per rank of the subtree in
// relative order its rank, first start, last end, whether it has calls,
// its jumps' count and its jumps. As soon as a subtree's jumps pass the
// quarter of the bound, its bundle is the flag alone. Down: the end rank
// sends each child a bundle for the child's subtree: a flag byte (0: the
// path follows; 1: run doublingReplay), the start rank and the jumps, then
// per rank of the subtree in relative order its segments (their count,
// then two times of 8 bytes each); each rank keeps its own and forwards
// each child its part (largest step first). 2(P - 1) messages,
// ceil(log2 P) hops each way; no rank receives more than ceil(log2 P)
// (the end rank one per child, the others one per child and one from
// their parent), where the linear gather of 2026-11-28 had the end rank
// receive P - 1, in rank order. The
// doubling takes floor(log2 T) + 3 exchanges of every rank with every
// other and a reduction for its verdict: on an oversubscribed node each
// of those is a wait for every rank to get a CPU. When the jumps do not
// fit, or a partner is no rank, every rank learns it from the replies
// and the ranks run doublingReplay together.
//
// A failure (a bundle or reply that is not one, at any rank) goes in
// place of the bundles, with the flag treeFailed and failMsg's rank and
// text: a rank whose subtree failed still receives all its children's
// bundles, sends the failure up, and once its parent's reply has come,
// sends the failure down; the end rank sends it down as its replies. So
// every rank returns the error (since 2026-11-29; before, the rank that
// found it returned at once and its parent and children waited forever),
// bar a reply found bad going down, which only the finder's subtree
// learns.

// gatherJumpBytes is what a jump costs the end rank: decoded (a jump, 48
// bytes) and its share of the bundles (17 to 21 bytes).
const gatherJumpBytes = 72

// pathGatherFits tells whether jumps jumps fit the end rank's share of
// the bound (a quarter; a variable so that tests can force the doubling).
var pathGatherFits = func(jumps int64, bound int64) bool {
	return jumps >= 0 && jumps <= bound/4/gatherJumpBytes
}

// gatherReplay is the critical path gathered at the end rank (above):
// this rank's segments of the path in time order, and info's start rank
// and jumps; done false when the ranks must run doublingReplay instead.
func gatherReplay(c Comm, jumps []jump, p *rankPass, endRank int, bound int64, info *pathInfo, st *pathStats) (segs [][2]float64, done bool, err error) {
	me, size := c.Rank(), c.Size()
	le := binary.LittleEndian
	t0 := time.Now()
	defer func() { st.inExchanges += time.Since(t0) }()
	defer func() { st.gathered = done }()
	rel := (me - endRank + size) % size
	abs := func(x int) int { return (x + endRank) % size }
	// Up: the children's bundles, kept as received (the end rank reads
	// them where they are; the others copy them once, after their own
	// entry, into the bundle for their parent).
	total := int64(len(jumps))
	fits := pathGatherFits(total, bound)
	type kidPart struct {
		src, kid, span int
		body           []byte // the entries, after the header
	}
	var kids []kidPart
	entries, bodies := 0, 0
	// failed: this rank's failure or its subtree's (the first), sent up
	// and down in place of the bundles; the children's bundles are
	// received all the same.
	var failed error
	kidBundle := func(src, kid, span int, b []byte) error {
		if len(b) > 0 && b[0] == treeFailed {
			return readFail(b, src)
		}
		if len(b) < 1 || b[0] > 1 {
			return fmt.Errorf("critical path: rank %d's jumps: %d bytes, bad flag at byte 0", src, len(b))
		}
		if b[0] == 1 {
			fits, kids = false, nil
			return nil
		}
		off := 1
		n, ok1 := readUvarint(b, &off, uint64(span))
		m, ok2 := readUvarint(b, &off, uint64(len(b))/17)
		if !ok1 || !ok2 || n != uint64(span) {
			return fmt.Errorf("critical path: rank %d's jumps: %d bytes, bad at byte %d (%d ranks, want %d)", src, len(b), off, n, span)
		}
		total += int64(m)
		entries += int(n)
		if fits = fits && pathGatherFits(total, bound); fits {
			kids = append(kids, kidPart{src, kid, span, b[off:]})
			bodies += len(b) - off
		} else {
			kids = nil
		}
		return nil
	}
	treeKids(rel, size, func(kid, span int) error {
		src := abs(kid)
		b, err := c.Recv(src)
		if failed == nil {
			if err != nil {
				failed = fmt.Errorf("critical path: receiving from rank %d: %w", src, err)
			} else {
				failed = kidBundle(src, kid, span, b)
			}
		}
		return nil
	})
	// fail sends err down to this rank's children in place of their
	// parts and returns it.
	fail := func(err error) ([][2]float64, bool, error) {
		sendKids(c, rel, endRank, func(int, int) []byte { return failMsg(me, err) }, st)
		return nil, false, err
	}
	if rel != 0 {
		parent := abs(treeParent(rel))
		b := []byte{1}
		if failed != nil {
			b = failMsg(me, failed)
		} else if fits {
			b = make([]byte, 0, 1+2*binary.MaxVarintLen64+binary.MaxVarintLen32+8+8+1+binary.MaxVarintLen64+len(jumps)*(16+binary.MaxVarintLen32)+bodies)
			b = binary.AppendUvarint(binary.AppendUvarint(append(b, 0), uint64(entries+1)), uint64(total))
			b = binary.AppendUvarint(b, uint64(me))
			b = le.AppendUint64(le.AppendUint64(b, math.Float64bits(p.first)), math.Float64bits(p.last))
			b = append(b, flagByte(p.ncalls > 0))
			b = binary.AppendUvarint(b, uint64(len(jumps)))
			for k := range jumps {
				j := &jumps[k]
				b = le.AppendUint64(le.AppendUint64(b, math.Float64bits(j.t1)), math.Float64bits(j.ready))
				b = binary.AppendVarint(b, int64(j.partner))
			}
			for _, k := range kids {
				b = append(b, k.body...)
			}
		}
		kids = nil
		st.sent += int64(len(b))
		if err := c.Send(parent, b); err != nil && failed == nil {
			failed = err
		}
		// Down: this subtree's part of the replies, or the job's failure
		// (this rank's own, when it failed, is the one it reports).
		r, err := c.Recv(parent)
		if failed != nil {
			return fail(failed)
		}
		if err != nil {
			return fail(fmt.Errorf("critical path: receiving from rank %d: %w", parent, err))
		}
		if len(r) > 0 && r[0] == treeFailed {
			return fail(readFail(r, parent))
		}
		if len(r) < 1 || r[0] > 1 {
			return fail(fmt.Errorf("critical path: rank %d's reply: %d bytes, bad flag at byte 0", parent, len(r)))
		}
		if r[0] == 1 {
			return nil, false, sendKids(c, rel, endRank, func(int, int) []byte { return []byte{1} }, st)
		}
		off := 1
		sr, ok1 := readUvarint(r, &off, uint64(size-1))
		n, ok2 := readUvarint(r, &off, math.MaxInt64)
		head := off
		// The ranks' parts in relative order: this rank's, then each
		// child's subtree.
		part := func(ranks int) (int, int, error) {
			from := off
			for range ranks {
				ns, ok := readUvarint(r, &off, uint64(len(r)/16))
				if !ok || len(r)-off < int(ns)*16 {
					return 0, 0, fmt.Errorf("critical path: rank %d's reply of %d bytes: bad at byte %d", parent, len(r), off)
				}
				off += int(ns) * 16
			}
			return from, off, nil
		}
		if !ok1 || !ok2 {
			return fail(fmt.Errorf("critical path: rank %d's reply of %d bytes: bad at byte %d", parent, len(r), off))
		}
		from, to, err := part(1)
		if err != nil {
			return fail(err)
		}
		var cuts [][2]int // by child, smallest step first
		if err := treeKids(rel, size, func(_, span int) error {
			a, z, err := part(span)
			cuts = append(cuts, [2]int{a, z})
			return err
		}); err != nil {
			return fail(err)
		}
		if off != len(r) {
			return fail(fmt.Errorf("critical path: rank %d's reply: %d bytes, want %d", parent, len(r), off))
		}
		off = from
		ns, _ := readUvarint(r, &off, uint64(len(r)/16))
		for range ns {
			a, _ := readF64(r, &off)
			z, _ := readF64(r, &off)
			segs = append(segs, [2]float64{a, z})
		}
		if err := sendKids(c, rel, endRank, func(kid, _ int) []byte {
			x := cuts[bits.TrailingZeros(uint(kid-rel))]
			return append(slices.Clip(r[:head]), r[x[0]:x[1]]...)
		}, st); err != nil {
			return nil, false, err
		}
		if off != to {
			return nil, false, fmt.Errorf("critical path: rank %d's reply: bad at byte %d", parent, off)
		}
		info.StartRank, info.Jumps = int(sr), int(n)
		return segs, true, nil
	}
	if failed != nil {
		return fail(failed)
	}
	// The end rank: every rank's entry, in relative order.
	passes := make([]*rankPass, size)
	ws := make([]rankWaits, size)
	inRange := func(js []jump) bool {
		for k := range js {
			if js[k].partner < 0 || int(js[k].partner) >= size {
				return false
			}
		}
		return true
	}
	passes[me] = &rankPass{rank: me, ncalls: p.ncalls, first: p.first, last: p.last}
	ws[me].jumps = jumps
	ok := fits && inRange(jumps)
	if ok && entries != size-1 {
		return fail(fmt.Errorf("critical path: %d ranks' jumps gathered, want %d", entries, size-1))
	}
	for _, kp := range kids {
		if !ok {
			break
		}
		body, off := kp.body, 0
		for x := kp.kid; ok && x < kp.kid+kp.span; x++ {
			s := abs(x)
			bad := func(what string) error {
				return fmt.Errorf("critical path: rank %d's jumps, from rank %d: %s at byte %d of %d", s, kp.src, what, off, len(body))
			}
			sr, ok0 := readUvarint(body, &off, uint64(size-1))
			first, ok1 := readF64(body, &off)
			last, ok2 := readF64(body, &off)
			var calls uint64
			if ok2 && off < len(body) {
				calls = uint64(body[off])
				off++
			}
			n, ok3 := readUvarint(body, &off, math.MaxInt32)
			if !ok0 || int(sr) != s || !ok1 || !ok2 || calls > 1 || !ok3 || n > uint64(len(body)-off)/17 {
				return fail(bad("a bad entry"))
			}
			passes[s] = &rankPass{rank: s, ncalls: calls, first: first, last: last}
			js := make([]jump, n)
			for k := range js {
				t1, ok1 := readF64(body, &off)
				ready, ok2 := readF64(body, &off)
				pr, y := binary.Varint(body[off:])
				if !ok1 || !ok2 || y <= 0 || pr < math.MinInt32 || pr > math.MaxInt32 {
					return fail(bad(fmt.Sprintf("jump %d of %d", k, n)))
				}
				off += y
				js[k] = jump{t1: t1, ready: ready, partner: int32(pr)}
			}
			ws[s].jumps = js
			ok = ok && inRange(js)
		}
		if ok && off != len(body) {
			return fail(fmt.Errorf("critical path: the jumps from rank %d: %d bytes, want %d", kp.src, len(body), off))
		}
	}
	kids = nil
	var res pathResult
	if ok {
		res = replay(passes, ws)
		ok = res.info.Found && res.info.EndRank == endRank
	}
	// Down: each child its subtree's segments.
	err = sendKids(c, rel, endRank, func(kid, span int) []byte {
		if !ok {
			return []byte{1}
		}
		b := binary.AppendUvarint(binary.AppendUvarint([]byte{0}, uint64(res.info.StartRank)), uint64(res.info.Jumps))
		for x := kid; x < kid+span; x++ {
			ss := res.segs[abs(x)]
			b = binary.AppendUvarint(b, uint64(len(ss)))
			for _, z := range ss {
				b = le.AppendUint64(le.AppendUint64(b, math.Float64bits(z[0])), math.Float64bits(z[1]))
			}
		}
		return b
	}, st)
	if err != nil || !ok {
		return nil, false, err
	}
	info.StartRank, info.Jumps = res.info.StartRank, res.info.Jumps
	return res.segs[me], true, nil
}

// sendKids sends each child of rel (relative to root) the message msg
// makes for it, largest step first (treeKidsDown); every child is sent
// its message, and the first error is returned.
func sendKids(c Comm, rel, root int, msg func(kid, span int) []byte, st *pathStats) error {
	size := c.Size()
	var failed error
	treeKidsDown(rel, size, func(kid, span int) error {
		b := msg(kid, span)
		st.sent += int64(len(b))
		if err := c.Send((kid+root)%size, b); err != nil && failed == nil {
			failed = err
		}
		return nil
	})
	return failed
}
