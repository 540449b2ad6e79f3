package trace

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// GComm is a communicator of the job, the same object on every member.
type GComm struct {
	ID    int
	Key   string
	World []int // comm rank -> world rank; of an intercommunicator, its remote group
	Inter bool
	// Members are the world ranks whose traces define it, sorted.
	Members []int
	// Peer is the other side of an intercommunicator (the ranks of its
	// remote group define it under their own key), nil when not traced.
	Peer  *GComm
	local map[int]int
}

// LocalGroup returns an intercommunicator's local group (comm rank ->
// world rank): the other side's remote group when it was traced, else the
// members in world rank order. Of an intracommunicator, World.
func (g *GComm) LocalGroup() []int {
	if !g.Inter {
		return g.World
	}
	if g.Peer != nil {
		return g.Peer.World
	}
	return g.Members
}

// interKey reads an intercommunicator key ("inter:<fn>:<local size>@<local
// leader's world rank>").
func interKey(k string) (size, leader int, ok bool) {
	rest, ok := strings.CutPrefix(k, "inter:")
	i := strings.LastIndexByte(rest, '@')
	j := strings.LastIndexByte(rest[:max(i, 0)], ':')
	if !ok || i < 0 || j < 0 {
		return 0, 0, false
	}
	size, err1 := strconv.Atoi(rest[j+1 : i])
	leader, err2 := strconv.Atoi(rest[i+1:])
	return size, leader, err1 == nil && err2 == nil
}

// PairInter is pairInter for a list of communicators made elsewhere (the
// analysis in the job, where each rank walks its own trace).
func PairInter(comms []*GComm) { pairInter(comms) }

// pairInter finds each intercommunicator's other side: the one whose
// remote group starts with this side's leader and has this side's size,
// and the other way round.
func pairInter(comms []*GComm) {
	for _, a := range comms {
		sa, la, ok := interKey(a.Key)
		if !ok || a.Peer != nil || len(a.World) == 0 {
			continue
		}
		for _, b := range comms {
			sb, lb, ok := interKey(b.Key)
			if !ok || b == a || b.Peer != nil || len(b.World) == 0 {
				continue
			}
			if a.World[0] == lb && len(a.World) == sb && b.World[0] == la && len(b.World) == sa {
				a.Peer, b.Peer = b, a
				break
			}
		}
	}
}

// Local returns the rank in the communicator of world rank w, or -1.
func (g *GComm) Local(w int) int {
	if g == nil {
		return -1
	}
	if g.local == nil {
		g.local = make(map[int]int, len(g.World))
		for i, x := range g.World {
			g.local[x] = i
		}
	}
	if l, ok := g.local[w]; ok {
		return l
	}
	return -1
}

// Msg is one end of a point-to-point message.
type Msg struct {
	Peer  int // world rank of the other end; -1 unknown
	Tag   int
	Bytes int64
	Comm  *GComm
	Req   uint64 // per-rank request id of a nonblocking operation, 0 blocking
	Flow  uint64 // the same at both ends of one message
	// Posted is a nonblocking operation's post (or persistent start):
	// the entry of the call that posted it, in job time (0 blocking).
	Posted float64
	pi     uint64 // a pending receive's post index (recvOrder)
}

// CollOp is a nonblocking or persistent collective operation, from its
// post to its completion.
type CollOp struct {
	Fn    string // the posting function (MPI_Ibcast, MPI_Bcast_init)
	Comm  *GComm
	Root  int // in Comm; -1 none
	Bytes int64
	Req   uint64 // per-rank request id
}

// Call is one MPI call, resolved: job times, names, peers.
type Call struct {
	Rank, Thread int
	Fn, Class    string
	FnID         int     // the function's id in its rank's header (Header.FnNames)
	T0, T1       float64 // ns since the job's origin
	PC           uint64
	Src          *Source   // the callsite in the source, nil when unknown
	Path         []*Source // the callers above the callsite (MPISCOPE_DEPTH > 1), innermost first; an entry is nil when unknown
	Comm         *GComm
	Send         *Msg  // blocking send, or a nonblocking send's post (Req set)
	Recv         *Msg  // blocking receive, completed
	RecvPost     *Msg  // nonblocking receive posted (Req set; Peer may be -1 for any source)
	StartSend    []Msg // persistent sends started in this call (MPI_Start, MPI_Startall; Req set)
	StartRecv    []Msg // persistent receives started in this call (Req set; Peer may be -1)
	SendDone     []Msg // nonblocking sends completed in this call
	RecvDone     []Msg // nonblocking receives completed in this call
	Coll         bool
	CollBytes    int64
	Root         int       // a rooted collective's root in Comm; -1 none
	CollReq      uint64    // a nonblocking collective's request id (0: blocking)
	StartColl    []CollOp  // persistent collectives started in this call
	CollDone     []CollOp  // nonblocking and persistent collectives completed in this call
	Rma          *RmaOp    // a one-sided call: window, epoch or communication (nil: not one)
	RmaDone      []RmaDone // one-sided communications completed in this call
	Cancelled    []uint64  // requests (ids) found cancelled in this call: marked, not matched
	Io           *IoOp     // an MPI-IO call: open, close, read, write (nil: not one)
	IoDone       []IoDone  // MPI-IO operations completed in this call
}

// clearRest empties the fields of a call the walk reuses that only some
// calls set, field by field (cheaper than writing the whole struct): the
// slices keep their arrays, Root is -1. The walk writes the others, which
// every call has, itself; TestCallReset checks that the two together
// leave no field behind.
func (c *Call) clearRest() {
	c.clearMsgs()
	c.clearRare()
}

// clearMsgs empties the fields of clearRest that point-to-point and
// collective calls set (inline in the walk's loop).
func (c *Call) clearMsgs() {
	c.Send, c.Recv, c.RecvPost = nil, nil, nil
	c.SendDone, c.RecvDone = c.SendDone[:0], c.RecvDone[:0]
	c.Coll, c.CollBytes, c.Root, c.CollReq = false, 0, -1, 0
}

// clearRare empties the others: persistent starts, collectives completed,
// cancellations, one-sided and MPI-IO calls. The walk calls it only after
// a call that set one of them.
func (c *Call) clearRare() {
	c.StartSend, c.StartRecv = c.StartSend[:0], c.StartRecv[:0]
	c.StartColl, c.CollDone = c.StartColl[:0], c.CollDone[:0]
	c.Rma, c.RmaDone, c.Cancelled, c.Io, c.IoDone = nil, c.RmaDone[:0], c.Cancelled[:0], nil, c.IoDone[:0]
}

// Source is a callsite resolved to source code.
type Source struct {
	Func, File string
	Line       int
}

// String is "file:line".
func (s *Source) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Visitor receives a job's events rank by rank, thread by thread in time
// order within each thread. The Call passed to Call, its messages and its
// slices are valid during the call only (the walk reuses them): a visitor
// copies what it keeps.
type Visitor interface {
	Call(c *Call) error
	Region(rank, thread int, enter bool, name string, t float64) error
	Mark(rank, thread int, text string, t float64) error
}

// WalkOptions tune a walk.
type WalkOptions struct {
	NoClock  bool                          // skip clock correction
	MaxOpen  int                           // clock repair: messages held open at most (0: DefaultMaxOpen)
	Progress func(rank int, events uint64) // called after each block
	// Source resolves a rank's callsite address (nil: callsites stay
	// addresses); called once per rank and address.
	Source func(r *Rank, pc uint64) (Source, bool)
	// NoSources leaves Call.Src and Call.Path nil: for a visitor that
	// reads neither (the analysis), no callsite or call path looked up
	// per call.
	NoSources bool
}

// Walker resolves a job's events.
type Walker struct {
	Job    *Job
	Comms  map[string]*GComm
	Clocks []*Clock
	Origin float64 // job time 0, in rank 0 nanoseconds
	// RealOrigin is the date of job time 0: nanoseconds since 1970 UTC
	// (0 unknown).
	RealOrigin int64
	End        float64 // last time seen so far, relative to Origin
	// Unmatched counts completions whose post was not found (another
	// thread's buffer written later, or the post before tracing started).
	Unmatched int
	// Warning says why the clocks could not be made consistent with the
	// messages ("" when they are).
	Warning string
	// Damaged lists the ranks whose events could not all be read (a
	// damaged block: file and offset); their events before it are
	// converted, the other ranks' in full.
	Damaged []string
	// Calls counts the calls visited.
	Calls uint64
	opt   WalkOptions
	mu    sync.Mutex // End, Unmatched and Calls when ranks are walked concurrently
}

// NewWalker prepares the job: communicators unified by key, clocks, origin.
func NewWalker(j *Job, opt WalkOptions) *Walker {
	w := &Walker{Job: j, Comms: map[string]*GComm{}, opt: opt, Origin: math.Inf(1)}
	var keys []string
	defs := map[string]*CommDef{}
	members := map[string][]int{}
	hostClock := hostClocks(j)
	for _, r := range j.Ranks {
		c := NewClock(hostClock[r])
		c.Off = opt.NoClock
		w.Clocks = append(w.Clocks, c)
		ids := make([]int, 0, len(r.Comms))
		for id := range r.Comms {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			d := r.Comms[id]
			members[d.Key] = append(members[d.Key], r.Header.Rank)
			if _, ok := defs[d.Key]; !ok {
				defs[d.Key] = d
				keys = append(keys, d.Key)
			}
		}
	}
	// World first, then in order of first definition.
	sort.SliceStable(keys, func(a, b int) bool { return keys[a] == "world" && keys[b] != "world" })
	for i, k := range keys {
		d := defs[k]
		m := members[k]
		sort.Ints(m)
		w.Comms[k] = &GComm{ID: i, Key: k, World: d.World, Inter: d.Inter, Members: slices.Compact(m)}
	}
	pairInter(w.CommList())
	for _, g := range w.Comms {
		g.Local(-1) // its map built now: read concurrently from here on
	}
	if !opt.NoClock {
		w.Origin = 0 // the repair pass needs finite times, not this origin
		w.repair(hostClock)
		w.Origin = math.Inf(1)
	}
	for i, r := range j.Ranks {
		if t := w.Clocks[i].Ns(r.Calib.Tick0); t < w.Origin {
			w.Origin = t
		}
	}
	if math.IsInf(w.Origin, 0) {
		w.Origin = 0
	}
	// The date of the origin, from the lowest rank's CLOCK_REALTIME at
	// init (read with its calibration).
	if len(j.Ranks) > 0 && j.Ranks[0].Header.RealNs > 0 {
		r := j.Ranks[0]
		w.RealOrigin = r.Header.RealNs - int64(w.Clocks[0].Ns(r.Calib.Tick0)-w.Origin)
	}
	return w
}

// CommList returns the job's communicators by ID.
func (w *Walker) CommList() []*GComm {
	l := make([]*GComm, 0, len(w.Comms))
	for _, c := range w.Comms {
		l = append(l, c)
	}
	sort.Slice(l, func(a, b int) bool { return l[a].ID < l[b].ID })
	return l
}

type chanKey struct {
	src, dst int
	comm     int // GComm.ID: one walker numbers both ends' communicators alike
	tag      int
}

// flowID hashes a message's channel and sequence number (FNV-1a over the
// fields, then a final mix): both ends compute it alone.
func flowID(k chanKey, seq uint64) uint64 { return flowSeq(flowHash(k), seq) }

const fnvPrime = 1099511628211

// fnvMix runs FNV-1a over the 8 bytes of v, low byte first (unrolled:
// once per message end).
func fnvMix(h, v uint64) uint64 {
	h = (h ^ v&0xff) * fnvPrime
	h = (h ^ v>>8&0xff) * fnvPrime
	h = (h ^ v>>16&0xff) * fnvPrime
	h = (h ^ v>>24&0xff) * fnvPrime
	h = (h ^ v>>32&0xff) * fnvPrime
	h = (h ^ v>>40&0xff) * fnvPrime
	h = (h ^ v>>48&0xff) * fnvPrime
	return (h ^ v>>56) * fnvPrime
}

// flowHash is flowID's hash of the channel alone: computed once per
// channel, its messages add only their sequence number (flowSeq).
func flowHash(k chanKey) uint64 {
	h := uint64(14695981039346656037)
	h = fnvMix(h, uint64(int64(k.src)))
	h = fnvMix(h, uint64(int64(k.dst)))
	h = fnvMix(h, uint64(int64(k.comm)))
	return fnvMix(h, uint64(int64(k.tag)))
}

// fnvPrime5 is fnvPrime to the fifth power (modulo 2^64): FNV-1a over
// five zero bytes, (h^0)*fnvPrime five times, is h*fnvPrime5.
const fnvPrime5 = fnvPrime * fnvPrime * fnvPrime * fnvPrime * fnvPrime % (1 << 64)

// flowSeq finishes flowID from the channel's flowHash. A sequence number
// below 2^24 (nearly all) has five zero bytes on top: one multiply by
// fnvPrime5 does their FNV-1a rounds (the same value as fnvMix).
func flowSeq(h, seq uint64) uint64 {
	if seq < 1<<24 {
		h = (h ^ seq&0xff) * fnvPrime
		h = (h ^ seq>>8&0xff) * fnvPrime
		h = (h ^ seq>>16) * fnvPrime
		h *= fnvPrime5
	} else {
		h = fnvMix(h, seq)
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	if h == 0 {
		h = 1 // 0 means no flow
	}
	return h
}

// post is what a request handle stands for until it completes: a send, a
// receive, or both (MPI_Isendrecv), each with its own request id; or a
// collective; or nothing to show (a message to or from MPI_PROC_NULL, an
// RMA or I/O request), which its completion still takes.
type post struct {
	send, recv *Msg
	coll       *CollOp
	sbuf, rbuf Msg // what send and recv point to (one allocation a post)
	isRma      bool
	rma        RmaDone // a one-sided operation's request (MPI_Rput...)
	isIo       bool
	io         IoDone // an MPI-IO operation's request (MPI_File_iread...)
}

// posts recycles a walk's posts once their completion is handled.
type posts struct{ free []*post }

func (ps *posts) get() *post {
	if n := len(ps.free); n > 0 {
		p := ps.free[n-1]
		ps.free = ps.free[:n-1]
		return p
	}
	return &post{}
}

// put frees a post. Only what tells its kind is cleared (not its 248
// bytes): the walk sets the buffers, rma and io before it reads them.
func (ps *posts) put(p *post) {
	p.send, p.recv, p.coll, p.isRma, p.isIo = nil, nil, nil, false, false
	ps.free = append(ps.free, p)
}

// maxShared bounds the posts pending under one handle value; beyond it the
// oldest is forgotten (a post whose completion was never traced).
const maxShared = 1 << 16

// postTable holds a rank's pending posts by request handle. A handle value
// does not name one request: Open MPI gives every send that completes at
// once, and every request to MPI_PROC_NULL, the same handle
// (ompi_request_empty), MPICH its lightweight complete request; and a
// library reuses a request's handle once the request is freed, whether or
// not its completion was traced (MPI_Request_free, a completion call of
// more than 256 requests). So each handle keeps its posts in posting
// order, and the k completions of a handle in one call take its k latest
// posts: those the call's requests can be, since a post whose completion
// was missed is older than the one that reused its handle.
type postTable struct {
	m map[uint64]*[]*post // one lookup a push or take: the slice in place
	// cache is a direct-mapped cache in front of m: a rank reuses a few
	// handle values over and over, and a compare costs less than the
	// map's lookup. An entry's slice stays in m as long as the entry.
	cache [256]postSlot
}

type postSlot struct {
	h  uint64
	sp *[]*post
}

// slot is h's entry: the top byte of h times a large odd number (the
// product's top bits depend on all of h's bits).
func (pt *postTable) slot(h uint64) *postSlot {
	return &pt.cache[h*0x9e3779b97f4a7c15>>56]
}

// slice returns handle h's slice of posts, nil when h has none.
func (pt *postTable) slice(h uint64) *[]*post {
	e := pt.slot(h)
	if e.sp != nil && e.h == h {
		return e.sp
	}
	sp := pt.m[h]
	if sp != nil {
		e.h, e.sp = h, sp
	}
	return sp
}

func (pt *postTable) push(h uint64, po *post) {
	sp := pt.slice(h)
	if sp == nil {
		sp = new([]*post)
		pt.m[h] = sp
	}
	s := append(*sp, po)
	if len(s) > maxShared {
		s = s[1:]
	}
	*sp = s
}

// take1 is take of one post (most completions: one post a handle): it
// removes and returns the latest post of handle h, nil when none.
func (pt *postTable) take1(h uint64) *post {
	sp := pt.slice(h)
	if sp == nil {
		return nil
	}
	s := *sp
	var po *post
	if n := len(s) - 1; n >= 0 {
		po = s[n]
		s[n] = nil
		s = s[:n]
	}
	pt.emptied(h, sp, s)
	return po
}

// emptied stores handle h's posts s back in place after a take; an
// emptied handle keeps its slice for its next post (handles are reused)
// unless the table is large.
func (pt *postTable) emptied(h uint64, sp *[]*post, s []*post) {
	if len(s) == 0 && len(pt.m) > 4096 {
		delete(pt.m, h)
		if e := pt.slot(h); e.h == h {
			*e = postSlot{}
		}
	} else {
		*sp = s
	}
}

// take removes the k latest posts of handle h and appends them to out,
// oldest first (fewer when fewer are pending).
func (pt *postTable) take(h uint64, k int, out []*post) []*post {
	sp := pt.slice(h)
	if sp == nil {
		return out
	}
	s := *sp
	k = min(k, len(s))
	out = append(out, s[len(s)-k:]...)
	clear(s[len(s)-k:])
	pt.emptied(h, sp, s[:len(s)-k])
	return out
}

// Walk visits every event of every rank.
// A rank whose events cannot all be decoded (a damaged block) is
// converted up to that block and noted in Damaged; the walk goes on with
// the other ranks. It fails when the visitor does, when a rank's file
// cannot be read at all (opened, or read: not a damaged block), or when no
// call at all could be read from a damaged job.
func (w *Walker) Walk(v Visitor) error {
	for i, r := range w.Job.Ranks {
		if err := w.walkRank(i, r, v); err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) {
				return err
			}
			w.Damaged = append(w.Damaged, fmt.Sprintf("%v: rank %d's events from there on were not converted", err, r.Header.Rank))
		}
	}
	if w.Calls == 0 && len(w.Damaged) > 0 {
		return fmt.Errorf("no event could be converted: %s", w.Damaged[0])
	}
	return nil
}

// WalkRanks visits every rank on up to workers goroutines (0: one),
// rank i with the visitor v(i) (made on the goroutine that walks it);
// done(i, err), when not nil, is called on that goroutine after the
// rank's walk (err: what ended it) and may fail the whole walk. A damaged
// rank is noted in Damaged, in rank order, as Walk does.
func (w *Walker) WalkRanks(workers int, v func(i int) Visitor, done func(i int, err error) error) error {
	n := len(w.Job.Ranks)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Bool
	for g := 0; g < max(1, min(workers, n)); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				err := w.WalkRank(i, v(i))
				if done != nil {
					if derr := done(i, err); derr != nil {
						err = derr
					}
				}
				var ce *CorruptError
				if err != nil && !errors.As(err, &ce) {
					failed.Store(true)
				}
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var ce *CorruptError
		if errors.As(err, &ce) {
			w.Damaged = append(w.Damaged, fmt.Sprintf("%v: rank %d's events from there on were not converted", err, w.Job.Ranks[i].Header.Rank))
		} else if err != nil {
			return err
		}
	}
	if w.Calls == 0 && len(w.Damaged) > 0 {
		return fmt.Errorf("no event could be converted: %s", w.Damaged[0])
	}
	return nil
}

// WalkRank visits the events of the i-th rank of the job (Job.Ranks[i])
// only. Ranks may be walked concurrently, each with its own visitor
// (WalkOptions.Progress and Source must then be safe for concurrent use).
// A damaged block ends the rank's walk with a *CorruptError.
func (w *Walker) WalkRank(i int, v Visitor) error { return w.walkRank(i, w.Job.Ranks[i], v) }

// Ns converts a tick of the i-th rank to job time (ns since Origin), as
// the walk does.
func (w *Walker) Ns(i int, tick uint64) float64 { return w.Clocks[i].Ns(tick) - w.Origin }

// tickConv converts a rank's ticks to job time as Walker.Ns does
// (Clock.Ns less the origin), the same operations in the same order, with
// the clock's fields read and its calibration's integers converted once:
// a call converts two times.
type tickConv struct {
	ns0, tick0, perTick float64
	off                 float64 // the clock's constant offset (not interp)
	shift, origin       float64
	interp              bool // the offset drifts: Clock.Offset per time
	clk                 *Clock
}

func newTickConv(clk *Clock, origin float64) tickConv {
	x := tickConv{ns0: float64(clk.cal.Ns0), tick0: float64(clk.cal.Tick0), perTick: clk.cal.NsPerTick,
		shift: clk.Shift, origin: origin, clk: clk}
	switch {
	case clk.Off || clk.n == 0:
	case clk.n == 1 || clk.l1 <= clk.l0:
		x.off = clk.o0
	default:
		x.interp = true
	}
	return x
}

// at is tick t in job time.
func (x *tickConv) at(t uint64) float64 {
	l := x.ns0 + (float64(t)-x.tick0)*x.perTick
	if x.interp {
		return l + x.clk.Offset(l) + x.shift - x.origin
	}
	return l + x.off + x.shift - x.origin
}

// span is at of a call's two times, in one call (too large to be
// inlined: the walk's loop has its two cases written out, through lin).
func (x *tickConv) span(t0, t1 uint64) (a, b float64) {
	if x.interp {
		return x.spanInterp(t0, t1)
	}
	return x.lin(t0), x.lin(t1)
}

// lin is at of a clock whose offset is constant.
func (x *tickConv) lin(t uint64) float64 {
	return x.ns0 + (float64(t)-x.tick0)*x.perTick + x.off + x.shift - x.origin
}

// spanInterp is span of a clock whose offset drifts.
func (x *tickConv) spanInterp(t0, t1 uint64) (a, b float64) { return x.at(t0), x.at(t1) }

func (w *Walker) walkRank(idx int, r *Rank, v Visitor) error {
	var end float64
	var unmatched int
	var calls uint64
	defer func() {
		w.mu.Lock()
		w.End = max(w.End, end)
		w.Unmatched += unmatched
		w.Calls += calls
		w.mu.Unlock()
	}()
	clk := w.Clocks[idx]
	conv := newTickConv(clk, w.Origin)
	me := r.Header.Rank
	t := func(tick uint64) float64 { return clk.Ns(tick) - w.Origin } // regions, marks (a call inlines it)
	// comm resolves a rank's communicator id: the last one, else from a
	// cache (no string hash per call).
	lastComm, lastG := int32(math.MinInt32), (*GComm)(nil)
	comms := map[int32]*GComm{}
	comm := func(id int32) *GComm {
		if id == lastComm {
			return lastG
		}
		g, ok := comms[id]
		if !ok {
			if d, ok := r.Comms[int(id)]; ok {
				g = w.Comms[d.Key]
			}
			comms[id] = g
		}
		lastComm, lastG = id, g
		return g
	}
	// A channel's messages sent so far, and its flowHash.
	type sendChan struct{ n, h uint64 }
	sendSeq := map[chanKey]*sendChan{}
	var sendCache chanCache[*sendChan]
	var nextReq uint64
	waits := map[int]*threadWaits{}
	var done uint64
	sendFlow := func(g *GComm, peer, tag int) uint64 {
		if g == nil || peer < 0 {
			return 0
		}
		k := chanKey{me, peer, g.ID, tag}
		e := sendCache.slot(k)
		s := e.v
		if s == nil || e.k != k {
			if s = sendSeq[k]; s == nil {
				s = &sendChan{h: flowHash(k)}
				sendSeq[k] = s
			}
			e.k, e.v = k, s
		}
		s.n++
		return flowSeq(s.h, s.n)
	}
	ord := newRecvOrder()
	// recvFlow numbers a received message on its channel in matching
	// order; pi is its receive's post index (0: a blocking receive).
	recvFlow := func(g *GComm, peer, tag int, pi uint64) uint64 {
		if g == nil || peer < 0 {
			return 0
		}
		seq, ch := ord.complete(pi, chanKey{peer, me, g.ID, tag})
		return flowSeq(ch.h, seq)
	}
	// recvPost registers a nonblocking receive with the matching order.
	recvPost := func(m *Msg) {
		k := wildcard
		if m.Comm != nil && m.Peer >= 0 && m.Tag >= 0 {
			k = chanKey{m.Peer, me, m.Comm.ID, m.Tag}
		}
		m.pi = ord.post(k)
	}
	pt := postTable{m: map[uint64]*[]*post{}}
	// The call passed to the visitor and its blocking messages, reused;
	// rare: cb holds a field of Call.clearRare's.
	var cb Call
	rare := true
	// reqMsg gives a nonblocking operation's message its request id; a
	// receive is registered with the matching order.
	reqMsg := func(m *Msg, send bool) {
		nextReq++
		m.Req, m.Posted = nextReq, cb.T0 // cb: the call posting it
		if !send {
			recvPost(m)
		}
	}
	reqColl := func(op *CollOp) {
		nextReq++
		op.Req = nextReq
	}
	newID := func() uint64 {
		nextReq++
		return nextReq
	}
	obj := newObjState()
	var rmaBuf RmaOp
	var ioBuf IoOp
	type match struct {
		e   *cplEv
		po  *post
		req uint64 // firstReq(po): the order of the matches
	}
	var matched []match
	var took []*post
	seenReq := map[uint64]int{}
	var sendBuf, recvBuf Msg
	var pool posts
	srcs := map[uint64]*Source{}
	// srcCache is a direct-mapped cache in front of srcs: a rank calls
	// from a few callsites over and over.
	type srcSlot struct {
		pc uint64 // 0: empty
		s  *Source
	}
	var srcCache [64]srcSlot
	source := func(pc uint64) *Source {
		if w.opt.Source == nil || pc == 0 {
			return nil
		}
		e := &srcCache[pc*0x9e3779b97f4a7c15>>58]
		if e.pc == pc {
			return e.s
		}
		s, ok := srcs[pc]
		if !ok {
			if x, found := w.opt.Source(r, pc); found {
				s = &x
			}
			srcs[pc] = s
		}
		*e = srcSlot{pc, s}
		return s
	}
	callers := pathSources{r: r, src: source}
	sources := !w.opt.NoSources
	// The functions' names and classes side by side: one bounds check a
	// call instead of two.
	type fnNames struct{ name, class string }
	fns := make([]fnNames, len(r.Header.FnNames))
	for i := range fns {
		fns[i] = fnNames{r.FnName(i), r.FnClass(i)}
	}
	return r.scanParts(scanPart, func(tid int, evs []Event, blockEnd bool) error {
		th := r.ThreadIndex(tid)
		// The thread's completions and starts waiting for their call,
		// through a pointer: the loop keeps no slice of them in registers
		// (it spilled and reloaded six words an event).
		tw := waits[tid]
		if tw == nil {
			tw = &threadWaits{}
			waits[tid] = tw
		}
		var err error
	events:
		for i := range evs {
			e := &evs[i]
			switch e.Kind {
			case KComplete:
				if len(tw.pend) == maxWaiting {
					// More than a call completes: the oldest half never
					// get one (a damaged file). Forgotten, unmatched, so
					// that memory stays bounded.
					unmatched += maxWaiting / 2
					tw.pend = append(tw.pend[:0], tw.pend[maxWaiting/2:]...)
				}
				tw.pend = append(tw.pend, cplEv{req: e.Req, rbytes: e.RBytes, rpeer: e.RPeer, rtag: e.RTag, flags: e.Flags})
			case KPost:
				if len(tw.start) == maxWaiting {
					tw.start = append(tw.start[:0], tw.start[maxWaiting/2:]...) // as completions
				}
				tw.start = append(tw.start, *e)
			case KEnter, KLeave:
				name := r.Regions[int(e.Fn)]
				if name == "" {
					name = fmt.Sprintf("region#%d", e.Fn)
				}
				if err = v.Region(me, th, e.Kind == KEnter, name, t(e.T0)); err != nil {
					break events
				}
			case KMark:
				text, ok := r.Texts[int(e.Fn)]
				if !ok {
					text = fmt.Sprintf("event#%d", e.Fn)
				}
				if err = v.Mark(me, th, text, t(e.T0)); err != nil {
					break events
				}
			case KCall, KRma, KIo:
				c := &cb
				var src *Source
				var path []*Source
				if sources {
					src, path = source(e.PC), callers.of(e.Path)
				}
				// conv.span, its cases written out (it is too large to
				// inline).
				var t0, t1 float64
				if conv.interp {
					t0, t1 = conv.spanInterp(e.T0, e.T1)
				} else {
					t0, t1 = conv.lin(e.T0), conv.lin(e.T1)
				}
				g := lastG
				if e.Comm != lastComm {
					g = comm(e.Comm)
				}
				// The fields every call has, each written once (the test's
				// reset lists the same), then the others emptied.
				if int(e.Fn) < len(fns) {
					f := &fns[e.Fn]
					c.Fn, c.Class = f.name, f.class
				} else {
					c.Fn, c.Class = r.FnName(int(e.Fn)), r.FnClass(int(e.Fn))
				}
				c.Rank, c.Thread, c.FnID = me, th, int(e.Fn)
				c.T0, c.T1, c.PC, c.Src, c.Path, c.Comm = t0, t1, e.PC, src, path, g
				c.clearMsgs()
				if rare { // the last call set a field of clearRare's
					c.clearRare()
					rare = false
				}
				if c.T1 > end {
					end = c.T1
				}
				nb := e.Flags&FReq != 0 && e.Req != 0
				var po *post
				if nb {
					po = pool.get()
				}
				if e.Flags&FColl != 0 {
					c.Coll, c.CollBytes, c.Root = true, e.SBytes, int(e.STag)
					if nb {
						op := &CollOp{Fn: c.Fn, Comm: c.Comm, Root: c.Root, Bytes: c.CollBytes}
						reqColl(op)
						po.coll = op
						c.CollReq = op.Req
					}
				}
				if e.Flags&FSend != 0 && e.SPeer >= 0 {
					m := &sendBuf
					if nb {
						m = &po.sbuf
					}
					*m = Msg{Peer: int(e.SPeer), Tag: int(e.STag), Bytes: e.SBytes, Comm: c.Comm}
					m.Flow = sendFlow(c.Comm, m.Peer, m.Tag)
					if nb {
						reqMsg(m, true)
						po.send = m
					}
					c.Send = m
				}
				if e.Flags&FRecv != 0 && e.RPeer != -1 {
					m := &recvBuf
					if nb {
						m = &po.rbuf
					}
					*m = Msg{Peer: int(e.RPeer), Tag: int(e.RTag), Bytes: e.RBytes, Comm: c.Comm}
					if nb {
						if m.Peer < 0 {
							m.Peer = -1
						}
						reqMsg(m, false)
						po.recv = m
						c.RecvPost = m
					} else if m.Peer >= 0 {
						m.Flow = recvFlow(c.Comm, m.Peer, m.Tag, 0)
						c.Recv = m
					}
				}
				switch e.Kind {
				case KRma:
					rare = true
					var ok bool
					if c.RmaDone, ok = obj.rma(r, e, c.Comm, &rmaBuf, c.RmaDone, newID); ok {
						c.Rma = &rmaBuf
						if nb && rmaBuf.Kind.IsComm() {
							po.isRma, po.rma = true, RmaDone{Win: rmaBuf.Win, ID: rmaBuf.ID}
						}
					}
				case KIo:
					rare = true
					var ok bool
					if c.IoDone, ok = obj.io(r, e, c.Comm, &ioBuf, c.IoDone, newID); ok {
						c.Io = &ioBuf
						if nb && ioBuf.ID != 0 {
							po.isIo, po.io = true, IoDone{File: ioBuf.File, ID: ioBuf.ID, Bytes: ioBuf.Bytes}
						}
					}
				}
				if nb {
					pt.push(e.Req, po)
				}
				if len(tw.start) > 0 {
					rare = true
				}
				for _, p := range tw.start {
					g := comm(p.Comm)
					sp := pool.get()
					if p.Flags&FColl != 0 {
						op := &CollOp{Fn: r.FnName(int(p.Fn)), Comm: g, Root: int(p.STag), Bytes: p.SBytes}
						reqColl(op)
						sp.coll = op
						c.StartColl = append(c.StartColl, *op)
					} else if p.Flags&FSend != 0 && p.SPeer >= 0 {
						m := &sp.sbuf
						*m = Msg{Peer: int(p.SPeer), Tag: int(p.STag), Bytes: p.SBytes, Comm: g}
						m.Flow = sendFlow(g, m.Peer, m.Tag)
						reqMsg(m, true)
						sp.send = m
						c.StartSend = append(c.StartSend, *m)
					} else if p.Flags&FRecv != 0 && p.RPeer != -1 {
						m := &sp.rbuf
						*m = Msg{Peer: max(int(p.RPeer), -1), Tag: int(p.RTag), Bytes: p.RBytes, Comm: g}
						reqMsg(m, false)
						sp.recv = m
						c.StartRecv = append(c.StartRecv, *m)
					}
					// MPI_PROC_NULL: nothing to show, but its completion
					// takes the post.
					pt.push(p.Req, sp)
				}
				tw.start = tw.start[:0]
				if len(tw.pend) > 0 { // most calls complete nothing
					// The k completions of one handle take its k latest posts,
					// in array order; all are then taken in the order their
					// requests were posted (MPI matches receives in that
					// order), not in array order.
					cpl := tw.pend
					matched = matched[:0]
					small := len(cpl) <= 16 // count each handle's completions by scanning, not in a map
					if !small {
						clear(seenReq)
						for i := range cpl {
							seenReq[cpl[i].req]++
						}
					}
					var later uint32 // small: completions taken with an earlier one of their handle
					for i := range cpl {
						h := cpl[i].req
						k := 1
						if small {
							if later&(1<<i) != 0 {
								continue // taken with its handle's first completion
							}
							for x := i + 1; x < len(cpl); x++ {
								if cpl[x].req == h {
									k++
									later |= 1 << x
								}
							}
						} else {
							var ok bool
							if k, ok = seenReq[h]; !ok {
								continue // taken with its handle's first completion
							}
							delete(seenReq, h)
						}
						if k == 1 {
							if po := pt.take1(h); po != nil {
								matched = append(matched, match{&cpl[i], po, firstReq(po)})
							} else {
								unmatched++
							}
							continue
						}
						took = pt.take(h, k, took[:0])
						unmatched += k - len(took)
						j := 0
						for x := i; x < len(cpl) && j < len(took); x++ {
							if cpl[x].req == h {
								matched = append(matched, match{&cpl[x], took[j], firstReq(took[j])})
								j++
							}
						}
					}
					for x := 1; x < len(matched); x++ {
						if matched[x].req < matched[x-1].req {
							slices.SortStableFunc(matched, func(a, b match) int { return cmpU64(a.req, b.req) })
							break
						}
					}
					for _, mt := range matched {
						p, po := mt.e, mt.po
						if p.flags&FRecv != 0 && p.rpeer == Cancelled {
							rare = true
							if po.send != nil {
								c.Cancelled = append(c.Cancelled, po.send.Req)
							}
							if po.recv != nil {
								ord.cancel(po.recv.pi)
								c.Cancelled = append(c.Cancelled, po.recv.Req)
							}
							continue
						}
						if po.isRma {
							rare = true
							c.RmaDone = append(c.RmaDone, po.rma)
							continue
						}
						if po.isIo {
							rare = true
							d := po.io
							if p.flags&(FLocal|FRecv) == FLocal {
								d.Bytes = p.rbytes // what the status tells
							}
							c.IoDone = append(c.IoDone, d)
							continue
						}
						if po.coll != nil {
							rare = true
							c.CollDone = append(c.CollDone, *po.coll)
							continue
						}
						if po.send != nil {
							c.SendDone = append(c.SendDone, *po.send)
						}
						if po.recv == nil {
							continue
						}
						m := *po.recv
						// The status tells a receive's source, tag and size,
						// except for MPI_Isendrecv, whose status MPICH 4.0
						// leaves unset: there the posted source and tag stand,
						// and the posted size.
						isr := po.send != nil && m.Peer >= 0 && m.Tag >= 0
						if p.flags&FRecv != 0 && p.rpeer >= 0 && !isr {
							src := int(p.rpeer)
							if p.flags&FLocal != 0 {
								src = -1
								if m.Comm != nil && int(p.rpeer) < len(m.Comm.World) {
									src = m.Comm.World[p.rpeer]
								}
							}
							m.Peer, m.Tag, m.Bytes = src, int(p.rtag), p.rbytes
						}
						if m.Peer < 0 {
							ord.cancel(m.pi)
							continue // MPI_PROC_NULL or cancelled
						}
						m.Flow = recvFlow(m.Comm, m.Peer, m.Tag, m.pi)
						c.RecvDone = append(c.RecvDone, m)
					}
					for _, mt := range matched {
						pool.put(mt.po) // copied into the call: free
					}
				}
				tw.pend = tw.pend[:0]
				calls++
				if err = v.Call(c); err != nil {
					break events
				}
			}
		}
		if err != nil {
			return err
		}
		done += uint64(len(evs))
		if blockEnd && w.opt.Progress != nil {
			w.opt.Progress(me, done)
		}
		return nil
	})
}

// maxWaiting bounds the completions, and the persistent requests
// started, that wait for their call on one thread: the library records 256
// completions a call at most (MS_TSAVE); an MPI_Startall starts as many
// requests as it is given, this many would be far more than any program
// starts at once.
const maxWaiting = 1 << 16

// cplEv is a completion waiting for its call: what the matching reads of
// its event (32 bytes instead of the event's 80).
type cplEv struct {
	req         uint64
	rbytes      int64
	rpeer, rtag int32
	flags       uint8
}

// threadWaits are a thread's completions and persistent starts waiting
// for their call (the next call event of the thread).
type threadWaits struct {
	pend  []cplEv
	start []Event
}

// scanPart is how many events of a block the walk takes at once: their
// decoded form (80 bytes each) stays in the cache until the walk reads it.
const scanPart = 1024

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// firstReq orders posts by the id of their first message (unknown last).
func firstReq(p *post) uint64 {
	switch {
	case p.send != nil && p.recv != nil:
		return min(p.send.Req, p.recv.Req)
	case p.send != nil:
		return p.send.Req
	case p.recv != nil:
		return p.recv.Req
	case p.coll != nil:
		return p.coll.Req
	case p.isRma:
		return p.rma.ID
	case p.isIo:
		return p.io.ID
	}
	return math.MaxUint64
}

// repair makes the clocks agree with the messages: after the offset and
// drift correction, a message between hosts faster than half the best
// clock-sample round trip can still seem to be received before it was
// sent. A first pass over the events takes, for each ordered pair of hosts,
// the smallest slack (receive completed minus send begun) of their
// messages; each host's clock is then shifted by a constant, rank 0's host
// staying put, so that every slack is at least zero (difference
// constraints, Bellman-Ford). Ranks on one host keep one clock. Memory: one
// entry per message between hosts whose other end has not been read yet,
// at most MaxOpen (later messages are then used only when they close an
// entry), so that memory stays bounded however long the trace.
func (w *Walker) repair(hostClock map[*Rank]*Rank) {
	node := map[*Rank]int{} // host representative -> node
	of := make([]int, len(w.Job.Ranks))
	nodeOf := map[int]int{} // world rank -> node
	anchor := 0
	for i, r := range w.Job.Ranks {
		h := hostClock[r]
		n, ok := node[h]
		if !ok {
			n = len(node)
			node[h] = n
		}
		of[i] = n
		nodeOf[r.Header.Rank] = n
		if r.Header.Rank == 0 {
			anchor = n
		}
	}
	if len(node) < 2 {
		return
	}
	type end struct {
		t    float64
		node int
		send bool
	}
	open := map[uint64]end{}
	slack := map[[2]int]float64{} // (sender node, receiver node) -> min slack
	note := func(flow uint64, e end, peer int) {
		if pn, ok := nodeOf[peer]; ok && pn == e.node {
			return // both ends on one host: one clock, nothing to repair
		}
		o, ok := open[flow]
		if !ok {
			if len(open) < w.maxOpen() {
				open[flow] = e
			}
			return
		}
		delete(open, flow)
		if o.send == e.send || o.node == e.node {
			return
		}
		s, r := o, e
		if e.send {
			s, r = e, o
		}
		k := [2]int{s.node, r.node}
		if v, ok := slack[k]; !ok || r.t-s.t < v {
			slack[k] = r.t - s.t
		}
	}
	progress := w.opt.Progress
	w.opt.Progress = nil
	for i, r := range w.Job.Ranks {
		n := of[i]
		v := callVisitor(func(c *Call) error {
			if c.Send != nil && c.Send.Flow != 0 {
				note(c.Send.Flow, end{c.T0, n, true}, c.Send.Peer)
			}
			for _, m := range c.StartSend {
				if m.Flow != 0 {
					note(m.Flow, end{c.T0, n, true}, m.Peer)
				}
			}
			if c.Recv != nil && c.Recv.Flow != 0 {
				note(c.Recv.Flow, end{c.T1, n, false}, c.Recv.Peer)
			}
			for _, m := range c.RecvDone {
				if m.Flow != 0 {
					note(m.Flow, end{c.T1, n, false}, m.Peer)
				}
			}
			return nil
		})
		if err := w.walkRank(i, r, v); err != nil {
			continue // the real walk reports it
		}
	}
	w.opt.Progress, w.End, w.Unmatched, w.Calls = progress, 0, 0, 0
	// d[s] - d[r] <= slack(s->r) for every pair; start from 0 and relax.
	d := make([]float64, len(node))
	for it := 0; ; it++ {
		changed := false
		for k, v := range slack {
			if d[k[1]]+v < d[k[0]] {
				d[k[0]] = d[k[1]] + v
				changed = true
			}
		}
		if !changed {
			break
		}
		if it >= len(d) {
			w.Warning = "the clocks cannot be made consistent with every message (drift between the samples?): times are corrected for offset and drift only"
			return
		}
	}
	for i := range w.Job.Ranks {
		w.Clocks[i].Shift = d[of[i]] - d[anchor]
	}
}

// DefaultMaxOpen is the clock repair's bound on open messages: about
// 50 MB.
const DefaultMaxOpen = 1 << 20

func (w *Walker) maxOpen() int {
	if w.opt.MaxOpen > 0 {
		return w.opt.MaxOpen
	}
	return DefaultMaxOpen
}

// callVisitor is a Visitor that sees calls only.
type callVisitor func(c *Call) error

func (f callVisitor) Call(c *Call) error                         { return f(c) }
func (callVisitor) Region(int, int, bool, string, float64) error { return nil }
func (callVisitor) Mark(int, int, string, float64) error         { return nil }
