package trace

import (
	"math/bits"
	"strconv"
	"strings"
)

// RmaKind is what a one-sided call does.
type RmaKind uint8

// One-sided calls, by what they do.
const (
	RmaNone      RmaKind = iota
	RmaCreate            // MPI_Win_create, MPI_Win_create_dynamic
	RmaAllocate          // MPI_Win_allocate, MPI_Win_allocate_shared
	RmaFree              // MPI_Win_free
	RmaFence             // MPI_Win_fence
	RmaPost              // MPI_Win_post (Group)
	RmaStart             // MPI_Win_start (Group)
	RmaComplete          // MPI_Win_complete
	RmaWait              // MPI_Win_wait
	RmaTest              // MPI_Win_test
	RmaLock              // MPI_Win_lock (Target, Shared)
	RmaUnlock            // MPI_Win_unlock (Target)
	RmaLockAll           // MPI_Win_lock_all
	RmaUnlockAll         // MPI_Win_unlock_all
	RmaFlush             // MPI_Win_flush, MPI_Win_flush_local (Target)
	RmaFlushAll          // MPI_Win_flush_all, MPI_Win_flush_local_all
	RmaSync              // MPI_Win_sync
	RmaPut               // MPI_Put, MPI_Rput
	RmaGet               // MPI_Get, MPI_Rget
	RmaAcc               // MPI_Accumulate, MPI_Raccumulate
	RmaGetAcc            // MPI_Get_accumulate, MPI_Rget_accumulate
	RmaFetchOp           // MPI_Fetch_and_op
	RmaCas               // MPI_Compare_and_swap
)

var rmaKinds = map[string]RmaKind{
	"MPI_Win_create": RmaCreate, "MPI_Win_create_dynamic": RmaCreate, "MPI_Win_allocate": RmaAllocate,
	"MPI_Win_allocate_shared": RmaAllocate, "MPI_Win_free": RmaFree, "MPI_Win_fence": RmaFence,
	"MPI_Win_post": RmaPost, "MPI_Win_start": RmaStart, "MPI_Win_complete": RmaComplete, "MPI_Win_wait": RmaWait,
	"MPI_Win_test": RmaTest, "MPI_Win_lock": RmaLock, "MPI_Win_unlock": RmaUnlock, "MPI_Win_lock_all": RmaLockAll,
	"MPI_Win_unlock_all": RmaUnlockAll, "MPI_Win_flush": RmaFlush, "MPI_Win_flush_local": RmaFlush,
	"MPI_Win_flush_all": RmaFlushAll, "MPI_Win_flush_local_all": RmaFlushAll, "MPI_Win_sync": RmaSync,
	"MPI_Put": RmaPut, "MPI_Rput": RmaPut, "MPI_Get": RmaGet, "MPI_Rget": RmaGet, "MPI_Accumulate": RmaAcc,
	"MPI_Raccumulate": RmaAcc, "MPI_Get_accumulate": RmaGetAcc, "MPI_Rget_accumulate": RmaGetAcc,
	"MPI_Fetch_and_op": RmaFetchOp, "MPI_Compare_and_swap": RmaCas,
}

// IsComm tells whether the kind moves data (put, get, atomics).
func (k RmaKind) IsComm() bool { return k >= RmaPut }

// Win is a window of the job, the same on every member: the Seq-th window
// created on communicator Comm (windows are created collectively, so in
// the same order on every member).
type Win struct {
	Comm *GComm
	Seq  int
}

// RmaOp is a one-sided call resolved.
type RmaOp struct {
	Kind           RmaKind
	Win            Win
	Target         int // a rank of Win.Comm, -1 none (or every rank: the _all forms)
	SBytes, RBytes int64
	Shared         bool  // MPI_Win_lock: a shared lock
	Group          []int // MPI_Win_post/start: ranks of Win.Comm
	ID             uint64
	Nonblocking    bool // MPI_Rput...: completed by a Wait/Test
}

// RmaDone is a one-sided communication completed: at the origin by a
// synchronization call (Blocking: a fence, MPI_Win_complete, an unlock,
// a flush, MPI_Win_free), or by the Wait/Test of its request.
type RmaDone struct {
	Win      Win
	ID       uint64
	Blocking bool
}

// IoKind is what an MPI-IO call does.
type IoKind uint8

// MPI-IO calls, by what they do.
const (
	IoNone IoKind = iota
	IoOpen
	IoClose
	IoRead
	IoWrite
)

// File is a file handle of the job: the Seq-th file opened on
// communicator Comm (MPI_File_open is collective), Name as opened.
type File struct {
	Comm *GComm
	Seq  int
	Name string
}

// IoOp is an MPI-IO call resolved.
type IoOp struct {
	Kind  IoKind
	File  File
	Bytes int64 // requested
	Mode  int   // MPI_File_open's access mode
	// How a read or write accesses the file.
	Collective, Nonblocking, Shared, Ordered, Explicit bool
	Begin, End                                         bool // a split collective's two calls
	ID                                                 uint64
}

// IoDone is an MPI-IO operation completed (the Wait/Test of its request,
// or the _end call of a split collective), with the bytes transferred.
type IoDone struct {
	File  File
	ID    uint64
	Bytes int64
}

// ioOp classifies an MPI-IO function (without _c).
func ioOp(fn string) (IoOp, bool) {
	op, ok := strings.CutPrefix(strings.TrimSuffix(fn, "_c"), "MPI_File_")
	if !ok {
		return IoOp{}, false
	}
	var o IoOp
	switch {
	case op == "open":
		o.Kind = IoOpen
	case op == "close":
		o.Kind = IoClose
	case strings.Contains(op, "read"):
		o.Kind = IoRead
	case strings.Contains(op, "write"):
		o.Kind = IoWrite
	default:
		return o, false
	}
	o.Nonblocking = strings.HasPrefix(op, "i")
	o.Collective = strings.Contains(op, "_all") || strings.Contains(op, "ordered")
	o.Shared = strings.Contains(op, "shared") || strings.Contains(op, "ordered")
	o.Ordered = strings.Contains(op, "ordered")
	o.Explicit = strings.Contains(op, "_at")
	o.Begin = strings.HasSuffix(op, "_begin")
	o.End = strings.HasSuffix(op, "_end")
	return o, true
}

// groupOf decodes an MPI_Win_post/start group, its members as bits of lo
// (ranks 0-63) and hi (64-127). (The event's RTag holds the group's size,
// which may be larger: members from rank 128 on are not recorded.)
func groupOf(lo, hi int64, out []int) []int {
	for b := uint64(lo); b != 0; b &= b - 1 {
		out = append(out, bits.TrailingZeros64(b))
	}
	for b := uint64(hi); b != 0; b &= b - 1 {
		out = append(out, 64+bits.TrailingZeros64(b))
	}
	return out
}

// objState is a rank's windows and files during a walk.
type objState struct {
	wins    map[int32]Win
	files   map[int32]File
	seq     map[string]int // windows created per communicator key
	fseq    map[string]int // files opened per communicator key
	pending map[int32][]rmaPending
	groups  map[int32]*[2][]int // a window's post and start groups
	split   map[int32]uint64    // a file's split collective in progress: its ID
	splitB  map[int32]int64
	fnK     map[int]RmaKind
	fnIo    map[int]IoOp
}

type rmaPending struct {
	id     uint64
	target int
}

func newObjState() *objState {
	return &objState{wins: map[int32]Win{}, files: map[int32]File{}, seq: map[string]int{}, fseq: map[string]int{},
		pending: map[int32][]rmaPending{}, groups: map[int32]*[2][]int{}, split: map[int32]uint64{},
		splitB: map[int32]int64{}, fnK: map[int]RmaKind{}, fnIo: map[int]IoOp{}}
}

// rmaKind classifies function fn of rank r (cached).
func (s *objState) rmaKind(r *Rank, fn int) RmaKind {
	k, ok := s.fnK[fn]
	if !ok {
		k = rmaKinds[strings.TrimSuffix(r.FnName(fn), "_c")]
		s.fnK[fn] = k
	}
	return k
}

func (s *objState) ioKind(r *Rank, fn int) (IoOp, bool) {
	o, ok := s.fnIo[fn]
	if !ok {
		var known bool
		o, known = ioOp(r.FnName(fn))
		if !known {
			o.Kind = IoNone
		}
		s.fnIo[fn] = o
	}
	return o, o.Kind != IoNone
}

// rma resolves a KRma event into op (the call's communicator g); done
// gets the communications the call completes at the origin. nextID
// numbers communications.
func (s *objState) rma(r *Rank, e *Event, g *GComm, op *RmaOp, done []RmaDone, nextID func() uint64) ([]RmaDone, bool) {
	k := s.rmaKind(r, int(e.Fn))
	if k == RmaNone {
		return done, false
	}
	id := e.STag
	*op = RmaOp{Kind: k, Target: -1, Group: op.Group[:0]}
	if k == RmaCreate || k == RmaAllocate {
		key := ""
		if g != nil {
			key = g.Key
		}
		s.wins[id] = Win{Comm: g, Seq: s.seq[key]}
		s.seq[key]++
		delete(s.pending, id)
		delete(s.groups, id)
	}
	w, ok := s.wins[id]
	if !ok {
		w = Win{Comm: g, Seq: -1 - int(id)} // created before tracing: known by its local id only
		s.wins[id] = w
	}
	op.Win = w
	if e.SPeer >= 0 && w.Comm != nil {
		op.Target = w.Comm.Local(int(e.SPeer))
	}
	grp := s.groups[id]
	if grp == nil {
		grp = &[2][]int{}
		s.groups[id] = grp
	}
	completeAll := func(target int) {
		p := s.pending[id]
		keep := p[:0]
		for _, x := range p {
			if target < 0 || x.target == target {
				done = append(done, RmaDone{Win: w, ID: x.id, Blocking: true})
			} else {
				keep = append(keep, x)
			}
		}
		s.pending[id] = keep
	}
	switch k {
	case RmaPost, RmaStart:
		op.Group = groupOf(e.SBytes, e.RBytes, op.Group)
		i := 0
		if k == RmaStart {
			i = 1
		}
		grp[i] = append(grp[i][:0], op.Group...)
	case RmaComplete:
		op.Group = append(op.Group, grp[1]...)
		completeAll(-1)
	case RmaWait, RmaTest:
		op.Group = append(op.Group, grp[0]...)
	case RmaLock:
		op.Shared = e.RTag == 1
	case RmaUnlock, RmaFlush:
		completeAll(op.Target)
	case RmaFence, RmaUnlockAll, RmaFlushAll, RmaFree:
		completeAll(-1)
	}
	if k == RmaFree {
		delete(s.wins, id)
		delete(s.pending, id)
		delete(s.groups, id)
	}
	if k.IsComm() {
		op.SBytes, op.RBytes = e.SBytes, e.RBytes
		op.ID = nextID()
		op.Nonblocking = e.Flags&FReq != 0
		if !op.Nonblocking {
			s.pending[id] = append(s.pending[id], rmaPending{op.ID, op.Target})
		}
	}
	return done, true
}

// io resolves a KIo event into op; done gets a split collective's
// completion (its _end call).
func (s *objState) io(r *Rank, e *Event, g *GComm, op *IoOp, done []IoDone, nextID func() uint64) ([]IoDone, bool) {
	o, ok := s.ioKind(r, int(e.Fn))
	if !ok {
		return done, false
	}
	id := e.STag
	*op = o
	if o.Kind == IoOpen {
		key := ""
		if g != nil {
			key = g.Key
		}
		s.files[id] = File{Comm: g, Seq: s.fseq[key], Name: r.Files[int(id)]}
		s.fseq[key]++
		op.Mode = int(e.RTag)
	}
	f, ok := s.files[id]
	if !ok {
		f = File{Comm: g, Seq: -1 - int(id), Name: r.Files[int(id)]}
		s.files[id] = f
	}
	op.File = f
	switch o.Kind {
	case IoRead:
		op.Bytes = e.RBytes
	case IoWrite:
		op.Bytes = e.SBytes
	case IoClose:
		delete(s.files, id)
	}
	if o.Kind == IoRead || o.Kind == IoWrite {
		if o.End {
			if sid, ok := s.split[id]; ok {
				done = append(done, IoDone{File: f, ID: sid, Bytes: s.splitB[id]})
				delete(s.split, id)
				delete(s.splitB, id)
			}
			op.ID = 0
			return done, true
		}
		op.ID = nextID()
		if o.Begin {
			s.split[id] = op.ID
			s.splitB[id] = op.Bytes
		}
	}
	return done, true
}

// winName names a window for readers: "window <seq> on <communicator>".
func winName(w Win) string {
	n := "window " + strconv.Itoa(w.Seq)
	if w.Comm != nil {
		n += " on " + commName(w.Comm)
	}
	return n
}
