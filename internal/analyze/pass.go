package analyze

import (
	"math"
	"math/bits"
	"slices"
	"strings"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// callTimes is what the message ends and the collective part of one
// call share, kept once per call in its rank's list (rankPass.times) and
// named by the records' tix: the call's entry and exit, its number on its
// rank (cand.call), and whether it blocks (the Test family does not).
// Since 2026-11-28 (night) the records hold this index instead of the two
// times, their rank (messages: the part they are in) and the flag: 24
// bytes a message end instead of 48, 28 a collective part instead of 48,
// and 24 bytes a call that keeps any (TestRecordSizes).
type callTimes struct {
	t0, t1   float64
	call     uint32
	blocking bool
}

// sendRec is the sending end of a message: when the send began (the
// blocking send's or the post's entry) and the call that may have been
// blocked by it (the blocking send, or the MPI_Wait* completing the post),
// at tix in its rank's callTimes. Its rank is that of the list (part) it
// is in.
type sendRec struct {
	flow  uint64
	enter float64
	tix   uint32
	key   int32
}

// recvRec is the receiving end: when the receive was posted and the call
// that waited for the message (its callTimes at tix).
type recvRec struct {
	flow uint64
	post float64
	tix  uint32
	key  int32
}

// collKind classifies a blocking collective for the patterns.
type collKind uint8

const (
	collOther collKind = iota
	collBarrier
	collNxN
	coll1xN // root sends: late broadcast
	collNx1 // root receives: early reduce
)

func kindOf(fn string) collKind {
	fn = strings.TrimSuffix(fn, "_c")
	switch fn {
	case "MPI_Barrier":
		return collBarrier
	case "MPI_Allreduce", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw",
		"MPI_Reduce_scatter", "MPI_Reduce_scatter_block":
		return collNxN
	case "MPI_Bcast", "MPI_Scatter", "MPI_Scatterv":
		return coll1xN
	case "MPI_Reduce", "MPI_Gather", "MPI_Gatherv":
		return collNx1
	}
	return collOther
}

// collRec is one rank's part of a blocking collective: the seq-th on its
// communicator; its call's times at tix in the callTimes of rank idx.
type collRec struct {
	comm int32
	seq  uint32
	idx  int32
	key  int32
	tix  uint32
	root int32 // world rank, -1 none
	kind collKind
	side uint8 // an intercommunicator's group (1: the lower ID's, 2: the other), 0 an intracommunicator
}

// interSide is an intercommunicator's instance numbering: both groups'
// collectives are instances of the lower of the two sides' IDs.
type interSide struct {
	comm int32
	side uint8
}

// interSides pairs the intercommunicators whose other side was traced.
func interSides(comms []*trace.GComm) map[int]interSide {
	m := map[int]interSide{}
	for _, g := range comms {
		if g.Inter && g.Peer != nil {
			if g.ID < g.Peer.ID {
				m[g.ID] = interSide{int32(g.ID), 1}
			} else {
				m[g.ID] = interSide{int32(g.Peer.ID), 2}
			}
		}
	}
	return m
}

// MPI_ROOT's value is -4 in Open MPI, -3 in MPICH; MPI_PROC_NULL's -2 and
// -1: a rooted collective's root on an intercommunicator below -2 is
// MPI_ROOT (this rank is the root), -1 or -2 MPI_PROC_NULL (a member of
// the root's group that takes no part).
const rootIsMe = -3

// cand is a possible wait of one call: the time its partner was ready for
// the pattern (waitReady) and for the critical path (jumpReady, partner).
type cand struct {
	idx       int32
	key       int32
	call      uint32
	pattern   Pattern
	partner   int32
	pkey      int32 // the partner's call's key on its rank
	t0, t1    float64
	waitReady float64
	jumpReady float64
}

// rankPass reads one rank's calls: message ends and collective parts by
// shard, keys, totals.
type rankPass struct {
	idx, rank int
	nshard    int
	keys      map[keyID]int32
	keyList   []keyT
	lastKey   keyID // the key interned last, and its value
	lastKeyV  int32
	kindFn    int // the last blocking collective's function id (FnID), and its kind
	kind      collKind
	kindOK    bool
	keyCache  [64]keySlot
	times     []callTimes // the calls that keep records (sendRec.tix ...)
	sends     [][]sendRec
	recvs     [][]recvRec
	colls     [][]collRec
	collSeq   map[int]uint32 // blocking collectives so far by GComm.ID, of IDs from len(collSeqs) on
	collSeqs  []uint32       // the same of IDs below maxCollSeqs (no map update per collective)
	ncalls    uint64
	first     float64
	last      float64
	mpi       float64
	lastFn    string
	lastBlock bool
	sp        *spill            // nil: records stay in memory
	inter     map[int]interSide // intercommunicators by GComm.ID (interSides)
	byOwner   bool              // in the job: shards are ranks (shard)
	log       *callLog          // nil: the critical path's shares read the trace again (pathKeys)
	reserved  bool              // reserve was done
	st        *store            // where reserve puts the lists (nil: the Go heap)
	rma       rmaState          // one-sided calls (rma.go)
	buf       []byte
}

// maxCollSeqs bounds the communicator IDs whose collectives a pass counts
// in a list (rankPass.collSeqs).
const maxCollSeqs = 1 << 12

// spillBatch is the records of a shard a pass holds before writing them
// to the spill.
const spillBatch = 512

// added writes shard s's records to the spill once a batch is full; and
// every shard's, once the calls' times are as many as the batches could
// hold records, so that the times can be let go of (a spilled record
// carries its call's times).
func (p *rankPass) added(s int) {
	if p.sp != nil {
		p.spilled(s)
	}
}

// spilled is added with a spill.
func (p *rankPass) spilled(s int) {
	if len(p.sends[s])+len(p.recvs[s])+len(p.colls[s]) >= spillBatch {
		p.flush(s)
	}
	if len(p.times) >= spillBatch*p.nshard {
		for s := range p.sends {
			p.flush(s)
		}
		p.times = p.times[:0]
	}
}

// timed is the index in p.times of call c's times (its number call, b
// whether it blocks): the last entry when it is that call's, else a new
// one.
func (p *rankPass) timed(c *trace.Call, call uint32, b bool) uint32 {
	if n := len(p.times); n > 0 && p.times[n-1].call == call && p.times[n-1].blocking == b {
		return uint32(n - 1)
	}
	p.times = append(p.times, callTimes{t0: c.T0, t1: c.T1, call: call, blocking: b})
	return uint32(len(p.times) - 1)
}

func newRankPass(idx, rank, nshard int) *rankPass {
	return &rankPass{idx: idx, rank: rank, nshard: nshard, keys: map[keyID]int32{}, lastKeyV: -1,
		sends: make([][]sendRec, nshard), recvs: make([][]recvRec, nshard), colls: make([][]collRec, nshard),
		collSeq: map[int]uint32{}}
}

// key interns the call's key; a completion call (no communicator of its
// own) takes that of the message, g.
func (p *rankPass) key(c *trace.Call, g *trace.GComm) int32 {
	k := keyID{fn: c.FnID, pc: c.PC, comm: -1}
	if c.Comm != nil {
		k.comm = c.Comm.ID
	} else if g != nil {
		k.comm = g.ID
	}
	if k == p.lastKey && p.lastKeyV >= 0 {
		return p.lastKeyV // a completion's messages share their call's key
	}
	// A direct-mapped cache of the keys seen last in front of the map
	// (a compare instead of hashing 24 bytes); the map numbers the keys.
	sl := &p.keyCache[(uint64(k.fn)*0x9e3779b97f4a7c15^k.pc^k.pc>>17^uint64(k.comm)*0xc2b2ae3d27d4eb4f)>>58]
	if sl.v1 != 0 && sl.k == k {
		p.lastKey, p.lastKeyV = k, sl.v1-1
		return sl.v1 - 1
	}
	v, ok := p.keys[k]
	if !ok {
		v = int32(len(p.keyList))
		p.keys[k] = v
		p.keyList = append(p.keyList, keyT{fn: c.Fn, pc: k.pc, comm: k.comm})
	}
	sl.k, sl.v1 = k, v+1
	p.lastKey, p.lastKeyV = k, v
	return v
}

// keyOnce is the call's own key: key when interned already (>= 0).
func (p *rankPass) keyOnce(c *trace.Call, key int32) int32 {
	if key < 0 {
		key = p.key(c, nil)
	}
	return key
}

// keySlot is an entry of rankPass.keyCache: a key and its value + 1 (0:
// empty).
type keySlot struct {
	k  keyID
	v1 int32
}

// keyID is keyT with the function's id: no string to hash per message.
type keyID struct {
	fn   int
	pc   uint64
	comm int
}

// blocks reports whether a call waits for what it completes (the Test
// family returns at once).
func (p *rankPass) blocks(fn string) bool {
	if fn != p.lastFn {
		p.lastFn, p.lastBlock = fn, !strings.HasPrefix(fn, "MPI_Test")
	}
	return p.lastBlock
}

// shard is where a message end goes: by flow offline; in the job
// (byOwner), to the receiver's rank (owner), whose shard it is.
func (p *rankPass) shard(flow uint64, owner int) int {
	if p.byOwner {
		if owner >= 0 && owner < p.nshard {
			return owner
		}
		return p.rank
	}
	return int(flow % uint64(p.nshard))
}

// Call implements trace.Visitor.
func (p *rankPass) Call(c *trace.Call) error {
	p.ncalls++
	call := uint32(p.ncalls)
	if p.ncalls == 1 || c.T0 < p.first {
		p.first = c.T0
	}
	if c.T1 > p.last { // not max: that of float64 looks for NaN and -0
		p.last = c.T1
	}
	p.mpi += c.T1 - c.T0
	if p.log != nil {
		p.log.add(uint16(c.FnID), c.PC, c.T0, c.T1)
	}
	key := int32(-1) // the call's key, interned when first needed (keyOnce)
	// A nonblocking operation's post time comes with its completion
	// (Msg.Posted).
	if m := c.Send; m != nil {
		if m.Req == 0 && m.Flow != 0 {
			s := p.shard(m.Flow, m.Peer)
			key = p.keyOnce(c, key)
			p.sends[s] = append(p.sends[s], sendRec{flow: m.Flow, enter: c.T0, tix: p.timed(c, call, true), key: key})
			p.added(s)
		}
	}
	if m := c.Recv; m != nil && m.Flow != 0 {
		s := p.shard(m.Flow, p.rank)
		key = p.keyOnce(c, key)
		p.recvs[s] = append(p.recvs[s], recvRec{flow: m.Flow, post: c.T0, tix: p.timed(c, call, true), key: key})
		p.added(s)
	}
	if len(c.SendDone) > 0 || len(c.RecvDone) > 0 {
		b := p.blocks(c.Fn)
		for i := range c.SendDone {
			m := &c.SendDone[i]
			if m.Flow != 0 {
				s := p.shard(m.Flow, m.Peer)
				p.sends[s] = append(p.sends[s], sendRec{flow: m.Flow, enter: m.Posted, tix: p.timed(c, call, b), key: p.key(c, m.Comm)})
				p.added(s)
			}
		}
		for i := range c.RecvDone {
			m := &c.RecvDone[i]
			if m.Flow != 0 {
				s := p.shard(m.Flow, p.rank)
				p.recvs[s] = append(p.recvs[s], recvRec{flow: m.Flow, post: m.Posted, tix: p.timed(c, call, b), key: p.key(c, m.Comm)})
				p.added(s)
			}
		}
	}
	if c.Rma != nil {
		p.rma.call(p, c, call, func() int32 { key = p.keyOnce(c, key); return key })
	}
	if c.Coll && c.CollReq == 0 && c.Comm != nil {
		var seq uint32
		if id := c.Comm.ID; uint(id) < maxCollSeqs {
			if id >= len(p.collSeqs) {
				p.collSeqs = append(p.collSeqs, make([]uint32, id+1-len(p.collSeqs))...)
			}
			seq = p.collSeqs[id]
			p.collSeqs[id] = seq + 1
		} else {
			seq = p.collSeq[id]
			p.collSeq[id] = seq + 1
		}
		root := int32(-1)
		if c.Root >= 0 && c.Root < len(c.Comm.World) {
			root = int32(c.Comm.World[c.Root]) // of an intercommunicator: the remote group's
		}
		if !p.kindOK || p.kindFn != c.FnID { // the same function as the last collective's, usually
			p.kindFn, p.kind, p.kindOK = c.FnID, kindOf(c.Fn), true
		}
		comm, side, kind, ok := int32(c.Comm.ID), uint8(0), p.kind, true
		if c.Comm.Inter {
			var is interSide
			is, ok = p.inter[c.Comm.ID]
			comm, side = is.comm, is.side
			if kind == coll1xN || kind == collNx1 {
				switch {
				case c.Root <= rootIsMe:
					root = int32(p.rank)
				case c.Root < 0:
					ok = false // MPI_PROC_NULL: no part in it
				}
			}
		}
		if ok {
			s := int((uint64(comm)*0x9e3779b97f4a7c15 + uint64(seq)) % uint64(p.nshard))
			key = p.keyOnce(c, key)
			p.colls[s] = append(p.colls[s], collRec{comm: comm, seq: seq, idx: int32(p.idx), key: key, tix: p.timed(c, call, true),
				kind: kind, side: side, root: root})
			p.added(s)
		}
	}
	return nil
}

// reserve sizes the shards' lists for the whole rank once its first
// block (seen of its events) is read, from what that block added: the
// lists then mostly fill in place instead of growing by copies (append
// grows a large slice by a quarter: each record copied several times, and
// as many fresh pages touched). Offline, without a spill, once; in the
// pass's store (store.go) when it has one.
func (p *rankPass) reserve(seen, events uint64) {
	if p.reserved || p.sp != nil || seen == 0 || seen >= events {
		return
	}
	p.reserved = true
	f := float64(events) / float64(seen)
	p.times = grow(p.st, p.times, f)
	for s := range p.sends {
		p.sends[s] = grow(p.st, p.sends[s], f)
		p.recvs[s] = grow(p.st, p.recvs[s], f)
		p.colls[s] = grow(p.st, p.colls[s], f)
	}
}

// grow gives a room for f times its records, and a margin: 2 % and three
// standard deviations of a count of len(a) drawn at random (a shard's
// share of the first block's records strays by 1/sqrt(n): 3.7 % for the
// 750 of a shard in a block of 30,000 events on 8 shards, where 2 % alone
// left a third of the lists to grow by copies on the 10^7-event trace).
// Room not written is not touched: it costs no page. In st's memory
// when it is large enough (storeGrow).
func grow[T any](st *store, a []T, f float64) []T {
	if len(a) == 0 {
		return a
	}
	n := float64(len(a))
	return storeGrow(st, a, int(n*f*(1.02+3/math.Sqrt(n)))+16)
}

// Region implements trace.Visitor.
func (p *rankPass) Region(int, int, bool, string, float64) error { return nil }

// Mark implements trace.Visitor.
func (p *rankPass) Mark(int, int, string, float64) error { return nil }

type matchStats struct {
	messages, unmatched, colls, mismatch uint64
}

// matchShard pairs the message ends of shard s by flow and groups its
// collective parts by instance, producing the wait candidates. Each
// rank's records are a part of the lists, with its calls' times: those of
// its pass, or, when spilled, those decoded with them.
func matchShard(s int, passes []*rankPass, idx map[int]int, comms []*trace.GComm, sp *spill, out *candOut) matchStats {
	n := len(passes)
	var sends [][]sendRec
	var recvs [][]recvRec
	var colls [][]collRec
	var times [][]callTimes
	if sp != nil {
		// Every record was spilled (rankPass.flushAll).
		var c0 []collRec
		var err error
		sends, recvs, c0, times, err = decodeSpill(sp.read(s), n)
		if err != nil {
			sp.fail(err)
		}
		colls = [][]collRec{c0}
	} else {
		sends, recvs, colls = make([][]sendRec, n), make([][]recvRec, n), make([][]collRec, n)
		times = make([][]callTimes, n)
		for i, p := range passes {
			sends[i], recvs[i], colls[i], times[i] = p.sends[s], p.recvs[s], p.colls[s], p.times
			p.sends[s], p.recvs[s], p.colls[s] = nil, nil, nil
		}
		if st := out.st; st != nil {
			// Once matched, the shard's lists are room for the
			// candidates of the shards after it.
			ss, rs, cs := slices.Clone(sends), slices.Clone(recvs), slices.Clone(colls)
			defer func() {
				for i := range ss {
					storeRelease(st, ss[i])
					storeRelease(st, rs[i])
					storeRelease(st, cs[i])
				}
			}()
		}
	}
	return matchParts(sends, recvs, colls, times, func(w int) (int, bool) { i, ok := idx[w]; return i, ok }, out)
}

// matchRecs pairs message ends by flow and groups collective parts by
// instance, producing the wait candidates: the records of one rank
// (index 0), its calls' times ts.
func matchRecs(sends []sendRec, recvs []recvRec, colls []collRec, ts []callTimes, idx func(world int) (int, bool)) ([]cand, matchStats) {
	var out candOut
	st := matchParts([][]sendRec{sends}, [][]recvRec{recvs}, [][]collRec{colls}, [][]callTimes{ts}, idx, &out)
	return out.flat, st
}

// candOut receives wait candidates: in one list (flat), or by rank index
// (by non-nil), each rank's in chunks that double up to candChunk (no
// list copied as it grows; sortParts takes the chunks as parts).
type candOut struct {
	flat []cand
	by   [][][]cand
	cur  [][]cand   // by rank index, the chunk being filled (finish puts it in by)
	tab  []flowSlot // matchFlows' table, kept for the next shard
	st   *store     // where by's chunks are made (nil: the Go heap)
}

const candChunk = 4096

func (o *candOut) add(c cand) {
	if cur := o.cur; int(c.idx) < len(cur) { // the usual case: room in the rank's chunk
		if ch := &cur[c.idx]; len(*ch) < cap(*ch) {
			*ch = append(*ch, c)
			return
		}
	}
	o.addNew(c)
}

// addNew is add to the flat list, or to a new chunk of the rank's (the
// full one goes to by).
func (o *candOut) addNew(c cand) {
	if o.by == nil {
		o.flat = append(o.flat, c)
		return
	}
	if o.cur == nil {
		o.cur = make([][]cand, len(o.by))
	}
	ch := o.cur[c.idx]
	size := 64
	if cap(ch) > 0 {
		o.by[c.idx] = append(o.by[c.idx], ch)
		size = min(2*cap(ch), candChunk)
	}
	o.cur[c.idx] = append(storeChunk[cand](o.st, size), c)
}

// finish puts the chunks being filled in by, after the full ones.
func (o *candOut) finish() {
	for i, ch := range o.cur {
		if len(ch) > 0 {
			o.by[i] = append(o.by[i], ch)
		}
	}
	o.cur = nil
}

// matchParts is matchRecs of the records in parts: sendParts[i] and
// recvParts[i] those of rank index i, whose calls' times are times[i]; a
// collective part's times are those of its idx.
func matchParts(sendParts [][]sendRec, recvParts [][]recvRec, collParts [][]collRec, times [][]callTimes, idx func(world int) (int, bool), out *candOut) matchStats {
	var st matchStats
	nc := 0
	for _, p := range collParts {
		nc += len(p)
	}
	if out.by == nil && out.flat == nil {
		// Room for a wait per message and per collective part: what a
		// job that waits everywhere has (more only when a message is both
		// late sent and late received), so that the list is not copied as
		// it grows.
		ns, nr := 0, 0
		for _, p := range sendParts {
			ns += len(p)
		}
		for _, p := range recvParts {
			nr += len(p)
		}
		out.flat = make([]cand, 0, min(ns, nr)+nc)
	}
	matchFlows(sendParts, recvParts, times, &st, out)
	clear(sendParts)
	clear(recvParts)
	// By (communicator, sequence number), then rank: one stable sort by
	// the instance, then each instance's parts (a few, and from the ranks'
	// lists in rank order already unless spilled) by rank, by insertion.
	// The sorted copy in the store, given back once the candidates are
	// made (2026-11-29); not when it is one of the parts (given back by
	// matchShard).
	colls := sortPartsIn(out.st, collParts, func(r *collRec) uint64 { return uint64(uint32(r.comm))<<32 | uint64(r.seq) })
	if len(colls) > 0 && (len(collParts) != 1 || unsafe.SliceData(colls) != unsafe.SliceData(collParts[0])) {
		defer storeRelease(out.st, colls)
	}
	clear(collParts)
	for i := 0; i < len(colls); {
		j := i + 1
		for j < len(colls) && colls[j].comm == colls[i].comm && colls[j].seq == colls[i].seq {
			j++
		}
		g := colls[i:j]
		i = j
		byRank(g)
		ok := true
		for _, c := range g[1:] {
			ok = ok && c.kind == g[0].kind && c.root == g[0].root && (c.side == 0) == (g[0].side == 0)
		}
		if !ok {
			st.mismatch += uint64(len(g))
			continue
		}
		st.colls++
		collCands(g, times, idx, out)
	}
	out.finish()
	return st
}

// byRank sorts an instance's parts by rank, stably.
func byRank(g []collRec) {
	if len(g) > 32 {
		if !slices.IsSortedFunc(g, cmpIdx) {
			slices.SortStableFunc(g, cmpIdx)
		}
		return
	}
	for a := 1; a < len(g); a++ {
		for b := a; b > 0 && uint32(g[b-1].idx) > uint32(g[b].idx); b-- {
			g[b-1], g[b] = g[b], g[b-1]
		}
	}
}

func cmpIdx(a, b collRec) int { return cmpU(uint64(uint32(a.idx)), uint64(uint32(b.idx))) }

// flowSlot is an entry of matchFlows' table: a receive's flow and where
// the receive is (part + 1, 0: an empty slot; index, -1: matched).
type flowSlot struct {
	flow uint64
	p1   int32
	i    int32
}

// matchFlows pairs sends and receives by flow through a table of the
// receives (open addressing, linear probing), without sorting or copying
// the records: the sends in order, each with the first receive of its
// flow not yet taken, in order (receives of one flow lie along the probe
// sequence in the order they were put in), which are the pairs a merge of
// both lists sorted stably by flow makes. The candidates come in the
// sends' order; what is made of them does not depend on their order
// (rankWaits.group).
func matchFlows(sendParts [][]sendRec, recvParts [][]recvRec, times [][]callTimes, st *matchStats, out *candOut) {
	nr, ns := 0, 0
	for _, p := range recvParts {
		nr += len(p)
	}
	for _, p := range sendParts {
		ns += len(p)
	}
	if nr == 0 || ns == 0 {
		st.unmatched += uint64(nr + ns)
		return
	}
	// Twice as many slots as receives (at most half full), not rounded
	// up to a power of two (since 2026-11-29: up to twice the room, 256
	// MiB a worker at 10^8 events): the home slot is the flow's hash
	// scaled to the table (the high word of their product).
	size := 2 * nr
	var tab []flowSlot
	if cap(out.tab) >= size {
		tab = out.tab[:size]
		clear(tab)
	} else {
		tab = make([]flowSlot, size)
	}
	out.tab = tab
	home := func(flow uint64) int { h, _ := bits.Mul64(flow*0x9e3779b97f4a7c15, uint64(size)); return int(h) }
	for pi, p := range recvParts {
		for i := range p {
			h := home(p[i].flow)
			for tab[h].p1 != 0 {
				if h++; h == size {
					h = 0
				}
			}
			tab[h] = flowSlot{flow: p[i].flow, p1: int32(pi + 1), i: int32(i)}
		}
	}
	var matched uint64
	for si, p := range sendParts {
		sts := times[si]
		for k := range p {
			sd := &p[k]
			var rv *recvRec
			ri := int32(0)
			for h := home(sd.flow); tab[h].p1 != 0; {
				if e := &tab[h]; e.flow == sd.flow && e.i >= 0 {
					ri = e.p1 - 1
					rv = &recvParts[ri][e.i]
					e.i = -1
					break
				}
				if h++; h == size {
					h = 0
				}
			}
			if rv == nil {
				st.unmatched++
				continue
			}
			matched++
			// Late sender: the receiver waited for the send to begin.
			rt := &times[ri][rv.tix]
			if rt.blocking && sd.enter > rt.t0 {
				out.add(cand{idx: ri, key: rv.key, call: rt.call, pattern: LateSender, partner: int32(si), pkey: sd.key,
					t0: rt.t0, t1: rt.t1, waitReady: sd.enter, jumpReady: sd.enter})
			}
			// Late receiver: the sender was still blocked when the
			// receive was posted.
			if t := &sts[sd.tix]; t.blocking && rv.post > t.t0 && rv.post < t.t1 {
				out.add(cand{idx: int32(si), key: sd.key, call: t.call, pattern: LateReceiver, partner: ri, pkey: rv.key,
					t0: t.t0, t1: t.t1, waitReady: rv.post, jumpReady: rv.post})
			}
		}
	}
	st.messages += matched
	st.unmatched += uint64(nr) - matched
}

// collCands adds the wait candidates of one collective instance; a
// part's times are times[idx][tix].
func collCands(g []collRec, times [][]callTimes, idx func(world int) (int, bool), out *candOut) {
	tm := func(c *collRec) *callTimes { return &times[c.idx][c.tix] }
	last := 0
	t0s := tm(&g[0]).t0
	for k := 1; k < len(g); k++ {
		if t := tm(&g[k]).t0; t > t0s {
			last, t0s = k, t
		}
	}
	add := func(c *collRec, p Pattern, waitReady float64, partner *collRec, jumpReady float64) {
		t := tm(c)
		if waitReady <= t.t0 && jumpReady <= t.t0 {
			return
		}
		out.add(cand{idx: c.idx, key: c.key, call: t.call, pattern: p, partner: partner.idx, pkey: partner.key,
			t0: t.t0, t1: t.t1, waitReady: waitReady, jumpReady: jumpReady})
	}
	maxT, who := t0s, &g[last]
	switch g[0].kind {
	case collBarrier, collNxN:
		p := WaitNxN
		if g[0].kind == collBarrier {
			p = WaitBarrier
		}
		if g[0].side != 0 {
			// An intercommunicator: each group waits for the last
			// member of the other to enter.
			var last [3]*collRec
			var lt [3]float64
			for k := range g {
				if s, t := g[k].side, tm(&g[k]).t0; last[s] == nil || t > lt[s] {
					last[s], lt[s] = &g[k], t
				}
			}
			for k := range g {
				if o := last[3-g[k].side]; o != nil {
					add(&g[k], p, lt[3-g[k].side], o, lt[3-g[k].side])
				}
			}
			return
		}
		for k := range g {
			add(&g[k], p, maxT, who, maxT)
		}
	case coll1xN:
		ri, ok := idx(int(g[0].root))
		if !ok {
			return
		}
		var root *collRec
		for k := range g {
			if int(g[k].idx) == ri {
				root = &g[k]
			}
		}
		if root == nil {
			return
		}
		rt := tm(root).t0
		for k := range g {
			if &g[k] != root {
				add(&g[k], LateBroadcast, rt, root, rt)
			}
		}
	case collNx1:
		ri, ok := idx(int(g[0].root))
		if !ok {
			return
		}
		var root *collRec
		first := -1.0
		for k := range g {
			if int(g[k].idx) == ri {
				root = &g[k]
			} else if t := tm(&g[k]).t0; first < 0 || t < first {
				first = t
			}
		}
		if root == nil || first < 0 {
			return
		}
		// The root waits (early reduce) until the first non-root
		// enters; it cannot finish before the last one entered.
		add(root, EarlyReduce, first, who, maxT)
	}
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
