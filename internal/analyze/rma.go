package analyze

// Wait states of one-sided communication (MPI RMA), after the definitions
// of Scalasca's pattern documentation (the code is mpiscope's own):
//
//   - wait at fence: in MPI_Win_fence (collective over the window's
//     group), the time until the last member entered;
//   - early fence: the part of a wait at fence until the end of the last
//     RMA operation of the fence epoch (since the previous fence) that
//     another origin issued to this rank: the fence waited for those
//     operations to complete (a part of wait at fence, as in Scalasca's
//     hierarchy, not added to it);
//   - late post: in an access epoch of general active target
//     synchronization (MPI_Win_start, its RMA operations to the target,
//     MPI_Win_complete), the time in those calls before the target
//     entered the matching MPI_Win_post;
//   - early wait: in MPI_Win_wait, the time until the last origin of the
//     exposure epoch entered its MPI_Win_complete;
//   - late complete: the part of an early wait between the end of that
//     origin's last RMA operation of the epoch (or of its MPI_Win_start)
//     and its MPI_Win_complete: time the origin could have completed
//     earlier (a part of early wait, as in Scalasca's hierarchy, not
//     added to it);
//   - lock contention: in a passive target epoch (MPI_Win_lock, its RMA
//     operations and flushes to the target, MPI_Win_unlock), the time in
//     those calls before another origin holding a conflicting lock on the
//     same target (one of the two exclusive) entered its MPI_Win_unlock.
//     An implementation may acquire the lock in MPI_Win_lock, the first
//     operation, a flush or the unlock, and release it before its unlock
//     returns: which of two epochs held the lock first is the one that
//     can have released it (entered its unlock) before the other surely
//     held it (the end of its first flush, else of its unlock); when
//     either can, the one that entered its unlock first. An
//     MPI_Win_lock_all epoch is a shared lock epoch on every target of
//     the window's group (MPI_Win_lock_all and MPI_Win_unlock_all belong
//     to each, an operation or flush to those of its targets): it
//     conflicts with another origin's exclusive lock on the same target,
//     either waiting for the other.
//
// A rank's one-sided calls give records (rmaRec) of instances: a fence
// (the k-th fence of a window), a pair of epochs (the n-th access epoch of
// an origin to a target and the target's n-th exposure epoch to that
// origin), a target's lock epochs (all of them, per window and target).
// Offline all records are matched at once; in the job each goes to the
// rank its instance hashes to (rmaInJob), and the wait candidates back to
// the ranks of their calls. Beyond their share of the memory bound, both
// in rounds of instances (rmamem.go). Windows are known by their communicator and
// creation order; a window created before tracing started is left out.

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// rmaRole is what a record is in its instance.
type rmaRole uint8

const (
	rmaFence    rmaRole = iota + 1
	rmaStart            // origin: MPI_Win_start
	rmaAccess           // origin: an RMA operation of an access epoch
	rmaComplete         // origin: MPI_Win_complete (aux: the epoch's last operation's end)
	rmaPost             // target: MPI_Win_post
	rmaWait             // target: MPI_Win_wait
	rmaLock             // origin: MPI_Win_lock (excl)
	rmaLockOp           // origin: an RMA operation of a lock epoch
	rmaUnlock           // origin: MPI_Win_unlock
	rmaFlush            // origin: a flush of a lock epoch (the lock is held when it returns)
	rmaFenceOp          // origin: at MPI_Win_fence, its RMA operations of the fence epoch to one target (epoch: the target, aux: the last one's end)
	rmaRoles
)

// rmaRec is one rank's part of an RMA instance.
type rmaRec struct {
	inst   uint64 // the instance (a hash of its identity)
	role   rmaRole
	excl   bool // lock epochs: an exclusive lock
	idx    int32
	key    int32
	call   uint32
	epoch  uint32 // lock epochs: the origin's epoch number on the target; fences: this rank's rank in the window's group (rmaFenceOp: the target's)
	t0, t1 float64
	aux    float64 // complete: the epoch's last operation's end; fence: the window's group size; rmaFenceOp: see there
}

// winID is a window of the job: its communicator's ID and creation order.
type winID struct{ comm, seq int }

type peerID struct {
	w    winID
	peer int // a rank of the window's communicator
}

type accEpoch struct {
	targets []int
	insts   []uint64
	last    float64 // the end of the epoch's last RMA operation (or of MPI_Win_start)
}

type lockEpoch struct {
	inst  uint64
	epoch uint32
	excl  bool
	all   bool // one target of an MPI_Win_lock_all epoch
}

// rmaState is a rank's one-sided calls during its walk.
type rmaState struct {
	recs    []rmaRec
	fences  map[winID]uint32
	starts  map[peerID]uint32 // access epochs per (window, target)
	posts   map[peerID]uint32 // exposure epochs per (window, origin)
	acc     map[winID]*accEpoch
	exp     map[winID][]uint64 // the open exposure epoch's instances
	locks   map[peerID]*lockEpoch
	lockN   map[peerID]uint32
	local   map[*trace.GComm]int
	fops    map[winID]map[int]float64 // the fence epoch's operations: target -> the last one's end
	bound   *rmaBound                 // nil: the records stay in memory (rmamem.go)
	counted int                       // records of recs counted against bound
}

// rmaInst hashes an instance's identity.
func rmaInst(kind byte, w winID, a, b int, n uint32) uint64 {
	h := mix64(uint64(kind)<<56 ^ uint64(uint32(w.comm))<<24 ^ uint64(uint32(w.seq)) ^ 0x5851f42d4c957f2d)
	h = mix64(h ^ uint64(uint32(a))<<32 ^ uint64(uint32(b)))
	return mix64(h ^ uint64(n))
}

// me is this rank's rank in g (-1 not a member).
func (s *rmaState) me(g *trace.GComm, world int) int {
	if l, ok := s.local[g]; ok {
		return l
	}
	l := -1
	for i, x := range g.World {
		if x == world {
			l = i
			break
		}
	}
	s.local[g] = l
	return l
}

// call notes one-sided call c of rank p (call number n, key k).
func (s *rmaState) call(p *rankPass, c *trace.Call, n uint32, k func() int32) {
	s.account(int32(p.idx)) // the records of the calls before
	op := c.Rma
	if op.Win.Comm == nil || op.Win.Seq < 0 {
		return // created before tracing started: not the same on every member
	}
	if s.fences == nil {
		s.fences, s.starts, s.posts = map[winID]uint32{}, map[peerID]uint32{}, map[peerID]uint32{}
		s.acc, s.exp, s.locks, s.lockN = map[winID]*accEpoch{}, map[winID][]uint64{}, map[peerID]*lockEpoch{}, map[peerID]uint32{}
		s.local = map[*trace.GComm]int{}
		s.fops = map[winID]map[int]float64{}
	}
	w := winID{op.Win.Comm.ID, op.Win.Seq}
	add := func(inst uint64, role rmaRole) *rmaRec {
		s.recs = append(s.recs, rmaRec{inst: inst, role: role, idx: int32(p.idx), key: k(), call: n, t0: c.T0, t1: c.T1})
		return &s.recs[len(s.recs)-1]
	}
	switch op.Kind {
	case trace.RmaCreate, trace.RmaAllocate, trace.RmaFree:
		delete(s.fences, w)
		delete(s.acc, w)
		delete(s.exp, w)
		delete(s.fops, w)
		for pk := range s.locks {
			if pk.w == w {
				delete(s.locks, pk)
			}
		}
	case trace.RmaFence:
		inst := rmaInst('F', w, 0, 0, s.fences[w])
		r := add(inst, rmaFence)
		r.epoch, r.aux = uint32(s.me(op.Win.Comm, p.rank)), float64(len(op.Win.Comm.World))
		ts := make([]int, 0, len(s.fops[w]))
		for t := range s.fops[w] {
			ts = append(ts, t)
		}
		slices.Sort(ts)
		for _, t := range ts {
			r := add(inst, rmaFenceOp)
			r.epoch, r.aux = uint32(t), s.fops[w][t]
		}
		delete(s.fops, w)
		s.fences[w]++
	case trace.RmaStart:
		me := s.me(op.Win.Comm, p.rank)
		e := &accEpoch{last: c.T1}
		for _, t := range op.Group {
			pk := peerID{w, t}
			inst := rmaInst('G', w, me, t, s.starts[pk])
			s.starts[pk]++
			e.targets, e.insts = append(e.targets, t), append(e.insts, inst)
			add(inst, rmaStart)
		}
		s.acc[w] = e
	case trace.RmaComplete:
		if e := s.acc[w]; e != nil {
			for _, inst := range e.insts {
				add(inst, rmaComplete).aux = e.last
			}
			delete(s.acc, w)
		}
	case trace.RmaPost:
		me := s.me(op.Win.Comm, p.rank)
		var insts []uint64
		for _, o := range op.Group {
			pk := peerID{w, o}
			inst := rmaInst('G', w, o, me, s.posts[pk])
			s.posts[pk]++
			insts = append(insts, inst)
			add(inst, rmaPost)
		}
		s.exp[w] = insts
	case trace.RmaWait:
		for _, inst := range s.exp[w] {
			add(inst, rmaWait)
		}
		delete(s.exp, w)
	case trace.RmaLock:
		pk := peerID{w, op.Target}
		l := &lockEpoch{inst: rmaInst('L', w, 0, op.Target, 0), epoch: s.lockN[pk], excl: !op.Shared}
		s.lockN[pk]++
		s.locks[pk] = l
		r := add(l.inst, rmaLock)
		r.epoch, r.excl = l.epoch, l.excl
	case trace.RmaLockAll: // a shared lock epoch on every target
		for t := range op.Win.Comm.World {
			pk := peerID{w, t}
			l := &lockEpoch{inst: rmaInst('L', w, 0, t, 0), epoch: s.lockN[pk], all: true}
			s.lockN[pk]++
			s.locks[pk] = l
			add(l.inst, rmaLock).epoch = l.epoch
		}
	case trace.RmaUnlockAll:
		for t := range op.Win.Comm.World {
			pk := peerID{w, t}
			if l := s.locks[pk]; l != nil && l.all {
				add(l.inst, rmaUnlock).epoch = l.epoch
				delete(s.locks, pk)
			}
		}
	case trace.RmaUnlock, trace.RmaFlush:
		pk := peerID{w, op.Target}
		if l := s.locks[pk]; l != nil && (op.Kind == trace.RmaFlush || !l.all) {
			role := rmaFlush
			if strings.HasPrefix(c.Fn, "MPI_Win_flush_local") {
				role = rmaLockOp // completes at the origin only: no proof the lock is held
			}
			if op.Kind == trace.RmaUnlock {
				role = rmaUnlock
				delete(s.locks, pk)
			}
			r := add(l.inst, role)
			r.epoch, r.excl = l.epoch, l.excl
		}
	case trace.RmaFlushAll:
		for t := range op.Win.Comm.World {
			pk := peerID{w, t}
			if l := s.locks[pk]; l != nil {
				role := rmaFlush
				if strings.HasPrefix(c.Fn, "MPI_Win_flush_local") {
					role = rmaLockOp
				}
				r := add(l.inst, role)
				r.epoch, r.excl = l.epoch, l.excl
			}
		}
	default:
		if !op.Kind.IsComm() {
			return
		}
		e := s.acc[w]
		if e != nil {
			if i := slices.Index(e.targets, op.Target); i >= 0 {
				add(e.insts[i], rmaAccess)
			}
			e.last = c.T1
		}
		l := s.locks[peerID{w, op.Target}]
		if l != nil {
			r := add(l.inst, rmaLockOp)
			r.epoch, r.excl = l.epoch, l.excl
		}
		if e == nil && l == nil && s.fences[w] > 0 && op.Target >= 0 { // an operation of the fence epoch
			m := s.fops[w]
			if m == nil {
				m = map[int]float64{}
				s.fops[w] = m
			}
			m[op.Target] = max(m[op.Target], c.T1)
		}
	}
}

// maxLockScan bounds how many earlier lock epochs on one target are
// looked at for each epoch (heavily overlapping shared locks).
const maxLockScan = 4096

// RMAStats counts the one-sided synchronizations matched across ranks.
type RMAStats struct {
	Fences uint64 `json:"fences_matched"`      // MPI_Win_fence instances with every member of the window's group
	Epochs uint64 `json:"pscw_epochs_matched"` // pairs of an access epoch (start/complete) and an exposure epoch (post/wait)
	Locks  uint64 `json:"lock_epochs"`         // lock epochs with their unlock, per target (MPI_Win_lock_all: one per target)
	// Unmatched: fences some member of whose group has no part (not
	// traced, or its trace damaged), epochs of general active target
	// synchronization without the other side, lock epochs without their
	// unlock (tracing ended within them).
	Unmatched uint64 `json:"unmatched"`
}

func (a *RMAStats) add(b RMAStats) {
	a.Fences += b.Fences
	a.Epochs += b.Epochs
	a.Locks += b.Locks
	a.Unmatched += b.Unmatched
}

// matchRMA groups the records by instance and gives the wait candidates
// (the parts of others: late complete's, LateComplete: waitReady the
// origin's MPI_Win_complete entry, jumpReady its last operation's end;
// early fence's, EarlyFence: waitReady the end of the last operation to
// the rank, jumpReady the fence's entry), and what was matched.
func matchRMA(recs []rmaRec) ([]cand, RMAStats) {
	slices.SortFunc(recs, func(a, b rmaRec) int {
		return cmp.Or(cmp.Compare(a.inst, b.inst), cmp.Compare(a.idx, b.idx), cmp.Compare(a.call, b.call), cmp.Compare(a.role, b.role))
	})
	var out []cand
	var st RMAStats
	wait := func(r, by *rmaRec, p Pattern, ready float64) {
		if ready > r.t0 {
			out = append(out, cand{idx: r.idx, key: r.key, call: r.call, pattern: p, partner: by.idx, pkey: by.key,
				t0: r.t0, t1: r.t1, waitReady: ready, jumpReady: ready})
		}
	}
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].inst == recs[i].inst {
			j++
		}
		g := recs[i:j]
		i = j
		switch g[0].role {
		case rmaFence, rmaFenceOp:
			fenceCands(g, &st, wait, func(c cand) { out = append(out, c) })
		case rmaLock, rmaLockOp, rmaUnlock, rmaFlush:
			lockCands(g, &st, wait)
		default:
			var by [rmaRoles]*rmaRec
			for k := range g {
				if r := &g[k]; r.role < rmaRoles && by[r.role] == nil {
					by[r.role] = r
				}
			}
			if by[rmaPost] == nil && by[rmaWait] == nil || by[rmaStart] == nil && by[rmaComplete] == nil {
				st.Unmatched++ // one side only (the other not traced)
				continue
			}
			st.Epochs++
			if post := by[rmaPost]; post != nil {
				for k := range g {
					if r := g[k].role; r == rmaStart || r == rmaAccess || r == rmaComplete {
						wait(&g[k], post, LatePost, post.t0)
					}
				}
			}
			if w, c := by[rmaWait], by[rmaComplete]; w != nil && c != nil && c.t0 > w.t0 {
				wait(w, c, EarlyWait, c.t0)
				out = append(out, cand{idx: w.idx, key: w.key, call: w.call, pattern: LateComplete, partner: c.idx, pkey: c.key,
					t0: w.t0, t1: w.t1, waitReady: c.t0, jumpReady: c.aux})
			}
		}
	}
	return out, st
}

// fenceCands gives the waits of one fence instance (g): wait at fence
// until the last member entered; early fence, its part until the end of
// the last operation another origin issued to the rank in the epoch the
// fence closes.
func fenceCands(g []rmaRec, st *RMAStats, wait func(r, by *rmaRec, p Pattern, ready float64), emit func(cand)) {
	var last *rmaRec
	n, size, ops := 0, 0, 0
	for k := range g {
		switch r := &g[k]; r.role {
		case rmaFence:
			n++
			size = max(size, int(r.aux))
			if last == nil || r.t0 > last.t0 {
				last = r
			}
		case rmaFenceOp:
			ops++
		}
	}
	if n < size || n == 0 {
		st.Unmatched++
	} else {
		st.Fences++
	}
	if n < 2 {
		return
	}
	for k := range g {
		if g[k].role == rmaFence {
			wait(&g[k], last, WaitFence, last.t0)
		}
	}
	if ops == 0 {
		return
	}
	// Per target (its rank in the window's group), the operation that
	// ended last (a rank's own operations to itself end before its fence).
	lastOp := make(map[uint32]*rmaRec, ops)
	for k := range g {
		r := &g[k]
		if o := lastOp[r.epoch]; r.role == rmaFenceOp && (o == nil || r.aux > o.aux) {
			lastOp[r.epoch] = r
		}
	}
	for k := range g {
		r := &g[k]
		if r.role != rmaFence {
			continue
		}
		if o := lastOp[r.epoch]; o != nil {
			if ready := min(o.aux, last.t0); ready > r.t0 {
				emit(cand{idx: r.idx, key: r.key, call: r.call, pattern: EarlyFence, partner: o.idx, pkey: o.key,
					t0: r.t0, t1: r.t1, waitReady: ready, jumpReady: r.t0})
			}
		}
	}
}

type lockEp struct {
	idx    int32
	epoch  uint32
	excl   bool
	lock   *rmaRec
	unlock *rmaRec
	held   float64 // the lock was held by then: the end of the first flush, else of the unlock
	recs   []*rmaRec
}

// before tells whether epoch a can have held the lock before b: a's
// release (in its unlock, not before its entry) before b's acquisition
// (in b's calls, by the end of its first flush or of its unlock). When
// each can have been first, the one that entered its unlock first was.
func (a *lockEp) before(b *lockEp) bool {
	ab, ba := a.unlock.t0 <= b.held, b.unlock.t0 <= a.held
	switch {
	case ab && !ba:
		return true
	case ab && ba:
		return cmp.Or(cmp.Compare(a.unlock.t0, b.unlock.t0), cmp.Compare(a.idx, b.idx), cmp.Compare(a.epoch, b.epoch)) < 0
	}
	return false
}

// lockCands gives the lock contention of one target's lock epochs (g, by
// origin and call), and counts them: an epoch waited, in its calls, until
// the latest entry into MPI_Win_unlock of the conflicting epochs (one of
// the two locks exclusive) that overlap it in time and held the lock
// before it.
func lockCands(g []rmaRec, st *RMAStats, wait func(r, by *rmaRec, p Pattern, ready float64)) {
	var eps []*lockEp
	cur := map[[2]uint32]*lockEp{}
	for k := range g {
		r := &g[k]
		id := [2]uint32{uint32(r.idx), r.epoch}
		e := cur[id]
		if e == nil {
			e = &lockEp{idx: r.idx, epoch: r.epoch, excl: r.excl, held: math.Inf(1)}
			cur[id] = e
			eps = append(eps, e)
		}
		e.recs = append(e.recs, r)
		switch r.role {
		case rmaLock:
			e.lock = r
		case rmaUnlock:
			e.unlock = r
			e.held = min(e.held, r.t1)
		case rmaFlush:
			e.held = min(e.held, r.t1)
		}
	}
	done := eps[:0]
	for _, e := range eps {
		if e.lock != nil && e.unlock != nil {
			done = append(done, e)
		}
	}
	st.Unmatched += uint64(len(eps) - len(done))
	st.Locks += uint64(len(done))
	// By the lock's entry; reach[i]: the latest end of epochs 0..i, so
	// that the scan back stops where no earlier epoch overlaps.
	slices.SortFunc(done, func(a, b *lockEp) int {
		return cmp.Or(cmp.Compare(a.lock.t0, b.lock.t0), cmp.Compare(a.idx, b.idx), cmp.Compare(a.epoch, b.epoch))
	})
	reach := make([]float64, len(done))
	for i, e := range done {
		reach[i] = e.unlock.t1
		if i > 0 {
			reach[i] = max(reach[i], reach[i-1])
		}
	}
	for b, e := range done {
		var by *lockEp
		look := func(o *lockEp) {
			if o.idx == e.idx || !o.excl && !e.excl || o.unlock.t1 <= e.lock.t0 || o.lock.t0 >= e.unlock.t1 || !o.before(e) {
				return
			}
			if by == nil || o.unlock.t0 > by.unlock.t0 {
				by = o
			}
		}
		for a := b - 1; a >= 0 && b-a <= maxLockScan && reach[a] > e.lock.t0; a-- {
			look(done[a])
		}
		for a := b + 1; a < len(done) && a-b <= maxLockScan && done[a].lock.t0 < e.unlock.t1; a++ {
			look(done[a])
		}
		if by == nil {
			continue
		}
		for _, r := range e.recs {
			wait(r, by.unlock, LockContention, by.unlock.t0)
		}
	}
}

// addRMA adds the wait states of a rank's RMA candidates: the parts of
// others (late complete's, a part of early wait; early fence's, a part of
// wait at fence) on their own, once a call (the latest partner decides,
// as for the whole), from jumpReady to waitReady within the call; the
// others as every call's (group).
func (rw *rankWaits) addRMA(cs []cand) {
	if len(cs) == 0 {
		return
	}
	var part []cand
	rest := cs[:0:0]
	for _, c := range cs {
		if c.pattern == LateComplete || c.pattern == EarlyFence {
			part = append(part, c)
		} else {
			rest = append(rest, c)
		}
	}
	rw.group(rest)
	rw.sortJumps()
	slices.SortFunc(part, func(a, b cand) int {
		return cmp.Or(cmp.Compare(a.call, b.call), cmp.Compare(a.pattern, b.pattern), -cmp.Compare(a.waitReady, b.waitReady),
			cmp.Compare(a.partner, b.partner), cmp.Compare(a.pkey, b.pkey), -cmp.Compare(a.jumpReady, b.jumpReady))
	})
	for i := range part {
		c := &part[i]
		if i > 0 && part[i-1].call == c.call && part[i-1].pattern == c.pattern {
			continue // the latest partner's
		}
		if t := min(c.waitReady, c.t1) - max(c.jumpReady, c.t0); t > 0 {
			rw.add(c.pattern, c.key, t)
		}
	}
}

// rmaCands matches the ranks' RMA records offline: the candidates of each
// rank (by index in the job), and what was matched. With b (the records'
// share of the bound) and records beyond it, in rounds (rmamem.go).
func rmaCands(passes []*rankPass, b *rmaBound, warn func(string)) ([][]cand, RMAStats) {
	out := make([][]cand, len(passes))
	var st RMAStats
	add := func(cs []cand) {
		for _, c := range cs {
			if int(c.idx) >= 0 && int(c.idx) < len(out) {
				out[c.idx] = append(out[c.idx], c)
			}
		}
	}
	if b == nil || b.spilled.Load() == 0 && b.err == nil {
		var recs []rmaRec
		for _, p := range passes {
			recs = append(recs, p.rma.recs...)
			p.rma.release()
		}
		cs, rst := matchRMA(recs)
		add(cs)
		return out, rst
	}
	total := uint64(b.spilled.Load())
	for _, p := range passes {
		total += uint64(len(p.rma.recs))
	}
	rounds, most := rmaRounds(total, b.limit), int(2*b.limit/rmaRecMem)
	src := rmaSource{b: b, passes: passes}
	var dropped [2]int
	for k := 0; k < rounds; k++ {
		recs, err := src.roundRecords(k, rounds, most, &dropped)
		if err != nil {
			warn(fmt.Sprintf("RMA records: %v: the one-sided waits are incomplete", err))
			break
		}
		cs, rst := matchRMA(recs)
		add(cs)
		st.add(rst)
	}
	if dropped[0] > 0 {
		warn(droppedWarning(dropped))
	}
	for _, p := range passes {
		p.rma.release()
	}
	return out, st
}

// rmaRecLen is a record's size in the job's exchange.
const rmaRecLen = 8 + 1 + 1 + 4*4 + 8*3

func appendRMARec(b []byte, r *rmaRec) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, r.inst)
	b = append(b, byte(r.role))
	if r.excl {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	for _, v := range [4]uint32{uint32(r.idx), uint32(r.key), r.call, r.epoch} {
		b = le.AppendUint32(b, v)
	}
	for _, f := range [3]float64{r.t0, r.t1, r.aux} {
		b = le.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

// decodeRMARecs appends the records of b to out, those of the instances
// keep holds (nil: all).
func decodeRMARecs(b []byte, out []rmaRec, keep map[uint64]bool) ([]rmaRec, error) {
	if len(b)%rmaRecLen != 0 {
		return out, fmt.Errorf("%d bytes: not whole records", len(b))
	}
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	for ; len(b) > 0; b = b[rmaRecLen:] {
		r := rmaRec{inst: le.Uint64(b), role: rmaRole(b[8]), excl: b[9] != 0, idx: int32(le.Uint32(b[10:])), key: int32(le.Uint32(b[14:])),
			call: le.Uint32(b[18:]), epoch: le.Uint32(b[22:]), t0: f(b[26:]), t1: f(b[34:]), aux: f(b[42:])}
		if r.role == 0 || r.role >= rmaRoles {
			return out, fmt.Errorf("bad record role %d", r.role)
		}
		if keep == nil || keep[r.inst] {
			out = append(out, r)
		}
	}
	return out, nil
}

// rmaInJob is the RMA part of the exchange in the job: this rank's
// records go to the ranks their instances hash to, which match them; the
// candidates come back to the ranks of their calls and are added to rw.
// Every rank calls it (two MPI_Alltoallv a round), with or without
// records. counts are the records of the rank with the most and of all
// (the same on every rank): beyond the bound's share, in rounds, each
// rank receiving at most twice its share in a round (rmamem.go); the
// phase "rma[rounds=R,spilled=N]" (opt.Phase) says how many rounds, and
// how many of this rank's records went to its file. It returns what this
// rank matched.
func rmaInJob(c Comm, p *rankPass, rw *rankWaits, counts [2]uint64, opt Options, warn func(string)) (RMAStats, error) {
	me, size := c.Rank(), c.Size()
	b := p.rma.bound
	if b == nil {
		b = newRMABound(opt.memory()/4, 1)
	}
	defer b.close()
	rounds := rmaRounds(max(counts[0], counts[1]/uint64(max(size, 1))), b.limit)
	defer opt.phase(fmt.Sprintf("rma[rounds=%d,spilled=%d]", rounds, b.spilled.Load()))
	most := int(2 * b.limit / rmaRecMem)
	src := rmaSource{b: b, passes: []*rankPass{p}}
	var st RMAStats
	var mine []cand
	var dropped [2]int
	for k := 0; k < rounds; k++ {
		out := make([][]byte, size)
		if err := b.each(src.passes, func(r *rmaRec) {
			if rounds == 1 || rmaRound(r.inst, rounds) == k {
				d := int(r.inst % uint64(size))
				out[d] = appendRMARec(out[d], r)
			}
		}); err != nil {
			warn(fmt.Sprintf("rank %d: RMA records: %v (left out)", me, err))
		}
		in, err := c.Alltoallv(out)
		if err != nil {
			return st, err
		}
		out = nil
		var keep map[uint64]bool
		if n := receivedRecs(in); n > most {
			count := map[uint64]int{}
			for _, x := range in {
				for ; len(x) >= rmaRecLen; x = x[rmaRecLen:] {
					count[binary.LittleEndian.Uint64(x)]++
				}
			}
			keep = keepFitting(count, most, &dropped)
		}
		var recs []rmaRec
		for s, x := range in {
			if recs, err = decodeRMARecs(x, recs, keep); err != nil {
				warn(fmt.Sprintf("rank %d: RMA records from rank %d: %v (left out)", me, s, err))
			}
			in[s] = nil
		}
		var cs []cand
		var rst RMAStats
		func() {
			defer func() {
				if e := recover(); e != nil {
					warn(fmt.Sprintf("rank %d: the analysis failed in matching RMA epochs (%v): its results are incomplete", me, e))
				}
			}()
			cs, rst = matchRMA(recs)
		}()
		st.add(rst)
		recs = nil
		back := make([][]byte, size)
		for i := range cs {
			if d := int(cs[i].idx); d >= 0 && d < size {
				back[d] = appendCand(back[d], &cs[i])
			}
		}
		cs = nil
		if in, err = c.Alltoallv(back); err != nil {
			return st, err
		}
		for s, x := range in {
			if mine, err = decodeCands(x, mine); err != nil {
				warn(fmt.Sprintf("rank %d: RMA wait candidates from rank %d: %v (left out)", me, s, err))
			}
		}
	}
	p.rma.release()
	if dropped[0] > 0 {
		warn(fmt.Sprintf("rank %d: %s", me, droppedWarning(dropped)))
	}
	rw.addRMA(mine)
	return st, nil
}

// receivedRecs is how many records the buffers hold.
func receivedRecs(in [][]byte) int {
	n := 0
	for _, x := range in {
		n += len(x) / rmaRecLen
	}
	return n
}
