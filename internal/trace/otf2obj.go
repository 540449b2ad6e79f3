package trace

import (
	"fmt"
	"strconv"
	"strings"
)

// One-sided (RMA) and MPI-IO records of the OTF2 writer.

const (
	otf2RmaWinCreate    = 0x23
	otf2RmaWinDestroy   = 0x24
	otf2RmaCollBegin    = 0x25
	otf2RmaCollEnd      = 0x26
	otf2RmaGroupSync    = 0x27
	otf2RmaRequestLock  = 0x28
	otf2RmaAcquireLock  = 0x29
	otf2RmaReleaseLock  = 0x2b
	otf2RmaSync         = 0x2c
	otf2RmaPut          = 0x2e
	otf2RmaGet          = 0x2f
	otf2RmaAtomic       = 0x30
	otf2RmaCompleteBlk  = 0x31 // RmaOpCompleteBlocking
	otf2RmaCompleteNBlk = 0x32 // RmaOpCompleteNonBlocking
	otf2IoCreateHandle  = 0x45
	otf2IoDestroyHandle = 0x46
	otf2IoOpBegin       = 0x4b
	otf2IoOpIssued      = 0x4d
	otf2IoOpComplete    = 0x4e

	otf2DefIoParadigm  = 0x08
	otf2DefRmaWin      = 0x18
	otf2DefIoRegFile   = 0x26
	otf2DefIoHandle    = 0x28
	otf2IoParadigmMPI  = 0 // our one I/O paradigm's id
	roleRMA            = 29
	roleFileIO         = 27
	otf2SyncProcMem    = 3 // OTF2_RMA_SYNC_LEVEL_PROCESS | MEMORY
	otf2SyncProc       = 1
	otf2SyncTypeMemory = 0
)

// Collective operations of RMA collective records (OTF2_CollectiveOp).
const (
	otf2OpBarrier       = 0
	otf2OpCreateHandle  = 17
	otf2OpDestroyHandle = 18
	otf2OpCreateAlloc   = 21
)

// otf2Obj holds the RMA windows, their synchronization groups, the I/O
// files and handles a root writer defines.
type otf2Obj struct {
	wins    map[string]uint32
	winDefs []otf2WinDef
	groups  map[string]uint32
	grpDefs [][]int // world ranks
	// groupBase is the first group id after the communicators' (their
	// groups are defined first, at Close, in this order).
	groupBase uint32
	handles   map[string]uint32
	hdlDefs   []otf2HandleDef
	files     map[string]uint32
	fileNms   []string
}

type otf2WinDef struct {
	name string
	comm string // communicator key
}

type otf2HandleDef struct {
	name string
	file uint32
	comm string
}

func winKey(w Win) string {
	k := "?"
	if w.Comm != nil {
		k = w.Comm.Key
	}
	return k + "#" + strconv.Itoa(w.Seq)
}

// win returns window w's OTF2 id (defined at Close).
func (o *OTF2Writer) win(w Win) uint32 {
	if o.root != nil {
		o.root.mu.Lock()
		defer o.root.mu.Unlock()
		return o.root.win(w)
	}
	k := winKey(w)
	if id, ok := o.obj.wins[k]; ok {
		return id
	}
	if o.obj.wins == nil {
		o.obj.wins = map[string]uint32{}
	}
	id := uint32(len(o.obj.winDefs))
	o.obj.wins[k] = id
	comm := ""
	name := fmt.Sprintf("window %d", w.Seq)
	if w.Comm != nil {
		comm = w.Comm.Key
		cn := comm
		if cn == "world" {
			cn = "MPI_COMM_WORLD"
		}
		name += " on " + cn
	}
	o.obj.winDefs = append(o.obj.winDefs, otf2WinDef{name: name, comm: comm})
	return id
}

// rmaGroup returns the OTF2 group of ranks (of communicator g).
func (o *OTF2Writer) rmaGroup(g *GComm, ranks []int) uint32 {
	world := make([]int, 0, len(ranks))
	for _, r := range ranks {
		if g != nil {
			lg := g.LocalGroup()
			if r < len(lg) {
				world = append(world, lg[r])
				continue
			}
		}
		world = append(world, r)
	}
	if o.root != nil {
		o.root.mu.Lock()
		defer o.root.mu.Unlock()
		return o.root.rmaGroupW(world)
	}
	return o.rmaGroupW(world)
}

func (o *OTF2Writer) rmaGroupW(world []int) uint32 {
	k := fmt.Sprint(world)
	if id, ok := o.obj.groups[k]; ok {
		return id
	}
	if o.obj.groups == nil {
		o.obj.groups = map[string]uint32{}
	}
	id := o.obj.groupBase + uint32(len(o.obj.grpDefs))
	o.obj.groups[k] = id
	o.obj.grpDefs = append(o.obj.grpDefs, world)
	return id
}

// handle returns file f's OTF2 I/O handle (and defines its file).
func (o *OTF2Writer) handle(f File) uint32 {
	if o.root != nil {
		o.root.mu.Lock()
		defer o.root.mu.Unlock()
		return o.root.handle(f)
	}
	comm := "?"
	if f.Comm != nil {
		comm = f.Comm.Key
	}
	k := comm + "#" + strconv.Itoa(f.Seq)
	if id, ok := o.obj.handles[k]; ok {
		return id
	}
	if o.obj.handles == nil {
		o.obj.handles, o.obj.files = map[string]uint32{}, map[string]uint32{}
	}
	name := f.Name
	if name == "" {
		name = fmt.Sprintf("file %d", f.Seq)
	}
	fid, ok := o.obj.files[name]
	if !ok {
		fid = uint32(len(o.obj.fileNms))
		o.obj.files[name] = fid
		o.obj.fileNms = append(o.obj.fileNms, name)
	}
	id := uint32(len(o.obj.hdlDefs))
	o.obj.handles[k] = id
	if f.Comm == nil {
		comm = ""
	}
	o.obj.hdlDefs = append(o.obj.hdlDefs, otf2HandleDef{name: name, file: fid, comm: comm})
	return id
}

// rmaAtomic is the OTF2 atomic type of an accumulating kind.
func rmaAtomic(k RmaKind) byte {
	switch k {
	case RmaAcc:
		return 0 // ACCUMULATE
	case RmaCas:
		return 3 // COMPARE_AND_SWAP
	}
	return 7 // FETCH_AND_ACCUMULATE
}

func remote(target int) uint32 {
	if target < 0 {
		return otf2Undef32
	}
	return uint32(target)
}

// rmaBegin writes a one-sided call's records at its start (t0).
func (o *OTF2Writer) rmaBegin(l *otf2Loc, c *Call, t0 uint64) {
	r := c.Rma
	if r == nil {
		return
	}
	win := o.win(r.Win)
	d := o.d[:0]
	switch r.Kind {
	case RmaCreate, RmaAllocate, RmaFree, RmaFence:
		o.ev(l, otf2RmaCollBegin, t0, true, nil)
	case RmaLock, RmaLockAll:
		lt := byte(0)
		if r.Shared || r.Kind == RmaLockAll {
			lt = 1
		}
		d = cu32(d, win)
		d = cu32(d, remote(r.Target))
		d = cu64(d, uint64(remote(r.Target)))
		o.ev(l, otf2RmaRequestLock, t0, true, append(d, lt))
	case RmaPut, RmaGet:
		typ, b := byte(otf2RmaPut), r.SBytes
		if r.Kind == RmaGet {
			typ, b = otf2RmaGet, r.RBytes
		}
		d = cu32(d, win)
		d = cu32(d, remote(r.Target))
		d = cu64(d, uint64(max(b, 0)))
		o.ev(l, typ, t0, true, cu64(d, r.ID))
	case RmaAcc, RmaGetAcc, RmaFetchOp, RmaCas:
		d = cu32(d, win)
		d = cu32(d, remote(r.Target))
		d = append(d, rmaAtomic(r.Kind))
		d = cu64(d, uint64(max(r.SBytes, 0)))
		d = cu64(d, uint64(max(r.RBytes, 0)))
		o.ev(l, otf2RmaAtomic, t0, true, cu64(d, r.ID))
	}
	o.d = d
}

// rmaEnd writes the completions of one-sided communications the call
// finished and the call's records at its end (t1).
func (o *OTF2Writer) rmaEnd(l *otf2Loc, c *Call, t1 uint64) {
	for _, x := range c.RmaDone {
		typ := byte(otf2RmaCompleteNBlk)
		if x.Blocking {
			typ = otf2RmaCompleteBlk
		}
		o.ev(l, typ, t1, true, cu64(cu32(o.d[:0], o.win(x.Win)), x.ID))
	}
	r := c.Rma
	if r == nil {
		return
	}
	win := o.win(r.Win)
	collEnd := func(op byte, level uint32) {
		d := append(o.d[:0], op)
		d = cu32(d, level)
		d = cu32(d, win)
		d = cu32(d, otf2Undef32)
		d = cu64(d, 0)
		d = cu64(d, 0)
		o.d = d
		o.ev(l, otf2RmaCollEnd, t1, true, d)
	}
	switch r.Kind {
	case RmaCreate, RmaAllocate:
		o.ev(l, otf2RmaWinCreate, t1, true, cu32(o.d[:0], win))
		op := byte(otf2OpCreateHandle)
		if r.Kind == RmaAllocate {
			op = otf2OpCreateAlloc
		}
		collEnd(op, otf2SyncProc)
	case RmaFree:
		collEnd(otf2OpDestroyHandle, otf2SyncProc)
		o.ev(l, otf2RmaWinDestroy, t1, true, cu32(o.d[:0], win))
	case RmaFence:
		collEnd(otf2OpBarrier, otf2SyncProcMem)
	case RmaPost, RmaStart, RmaComplete, RmaWait:
		d := cu32(o.d[:0], otf2SyncProcMem)
		d = cu32(d, win)
		o.d = cu32(d, o.rmaGroup(r.Win.Comm, r.Group))
		o.ev(l, otf2RmaGroupSync, t1, true, o.d)
	case RmaLock, RmaLockAll:
		lt := byte(0)
		if r.Shared || r.Kind == RmaLockAll {
			lt = 1
		}
		d := cu32(o.d[:0], win)
		d = cu32(d, remote(r.Target))
		d = cu64(d, uint64(remote(r.Target)))
		o.d = append(d, lt)
		o.ev(l, otf2RmaAcquireLock, t1, true, o.d)
	case RmaUnlock, RmaUnlockAll:
		d := cu32(o.d[:0], win)
		d = cu32(d, remote(r.Target))
		o.d = cu64(d, uint64(remote(r.Target)))
		o.ev(l, otf2RmaReleaseLock, t1, true, o.d)
	case RmaFlush, RmaFlushAll, RmaSync:
		d := cu32(o.d[:0], win)
		d = cu32(d, remote(r.Target))
		o.d = append(d, otf2SyncTypeMemory)
		o.ev(l, otf2RmaSync, t1, true, o.d)
	}
}

// ioMode turns MPI_File_open's access mode (MPI_MODE_* as Open MPI and
// MPICH define them: RDONLY 2, WRONLY 4, RDWR 8, CREATE 1, EXCL 64,
// APPEND 128, DELETE_ON_CLOSE 16) into OTF2's access mode, creation and
// status flags.
func ioMode(amode int) (byte, uint32, uint32) {
	mode := byte(0) // READ_ONLY
	switch {
	case amode&4 != 0:
		mode = 1 // WRITE_ONLY
	case amode&8 != 0:
		mode = 2 // READ_WRITE
	}
	var cre, st uint32
	if amode&1 != 0 {
		cre |= 1 // CREATE
	}
	if amode&64 != 0 {
		cre |= 8 // EXCLUSIVE
	}
	if amode&128 != 0 {
		st |= 2 // APPEND
	}
	if amode&16 != 0 {
		st |= 256 // DELETE_ON_CLOSE
	}
	return mode, cre, st
}

// ioBegin writes an MPI-IO call's records at its start (t0).
func (o *OTF2Writer) ioBegin(l *otf2Loc, c *Call, t0 uint64) {
	x := c.Io
	if x == nil || (x.Kind != IoRead && x.Kind != IoWrite) || x.End {
		return
	}
	mode := byte(0)
	if x.Kind == IoWrite {
		mode = 1
	}
	var flags uint32
	if x.Nonblocking || x.Begin {
		flags |= 1
	}
	if x.Collective {
		flags |= 2
	}
	d := cu32(o.d[:0], o.handle(x.File))
	d = append(d, mode)
	d = cu32(d, flags)
	d = cu64(d, uint64(max(x.Bytes, 0)))
	o.d = cu64(d, x.ID)
	o.ev(l, otf2IoOpBegin, t0, true, o.d)
}

// ioEnd writes the completions of MPI-IO operations the call finished and
// the call's records at its end (t1).
func (o *OTF2Writer) ioEnd(l *otf2Loc, c *Call, t1 uint64) {
	for _, x := range c.IoDone {
		d := cu32(o.d[:0], o.handle(x.File))
		d = cu64(d, uint64(max(x.Bytes, 0)))
		o.d = cu64(d, x.ID)
		o.ev(l, otf2IoOpComplete, t1, true, o.d)
	}
	x := c.Io
	if x == nil {
		return
	}
	h := o.handle(x.File)
	switch x.Kind {
	case IoOpen:
		mode, cre, st := ioMode(x.Mode)
		d := cu32(o.d[:0], h)
		d = append(d, mode)
		d = cu32(d, cre)
		o.d = cu32(d, st)
		o.ev(l, otf2IoCreateHandle, t1, true, o.d)
	case IoClose:
		o.ev(l, otf2IoDestroyHandle, t1, true, cu32(o.d[:0], h))
	case IoRead, IoWrite:
		if x.End {
			return
		}
		if x.Nonblocking || x.Begin {
			o.ev(l, otf2IoOpIssued, t1, true, cu64(cu32(o.d[:0], h), x.ID))
			return
		}
		d := cu32(o.d[:0], h)
		d = cu64(d, uint64(max(x.Bytes, 0)))
		o.d = cu64(d, x.ID)
		o.ev(l, otf2IoOpComplete, t1, true, o.d)
	}
}

// objDefs writes the definitions of windows, their groups, the I/O
// paradigm, files and handles (Close).
func (o *OTF2Writer) objDefs(def func(byte, []byte), str func(string) uint32, group func(uint32, byte, byte, []uint64)) {
	for i, w := range o.obj.winDefs {
		d := cu32(nil, uint32(i))
		d = cu32(d, str(w.name))
		c, ok := o.comms[w.comm]
		if !ok {
			c = otf2Undef32
		}
		d = cu32(d, c)
		d = cu32(d, 1) // CREATE_DESTROY_EVENTS
		def(otf2DefRmaWin, d)
	}
	for i, g := range o.obj.grpDefs {
		ms := make([]uint64, len(g))
		for j, x := range g {
			ms[j] = uint64(max(x, 0))
		}
		group(o.obj.groupBase+uint32(i), 4, 5, ms)
	}
	if len(o.obj.hdlDefs) == 0 {
		return
	}
	d := []byte{otf2IoParadigmMPI}
	d = cu32(d, str("MPI-IO"))
	d = cu32(d, str("MPI I/O"))
	d = append(d, 1) // PARALLEL
	d = cu32(d, 0)
	def(otf2DefIoParadigm, append(d, 0)) // no properties
	for i, n := range o.obj.fileNms {
		d = cu32(nil, uint32(i))
		d = cu32(d, str(n))
		def(otf2DefIoRegFile, cu32(d, 0)) // scope: the job's system tree root
	}
	for i, h := range o.obj.hdlDefs {
		d = cu32(nil, uint32(i))
		d = cu32(d, str(h.name))
		d = cu32(d, h.file)
		d = append(d, otf2IoParadigmMPI)
		d = cu32(d, 0) // flags
		c, ok := o.comms[h.comm]
		if !ok {
			c = otf2Undef32
		}
		d = cu32(d, c)
		def(otf2DefIoHandle, cu32(d, otf2Undef32)) // no parent
	}
}

// objRole is the region role of a one-sided or I/O function.
func objRole(class string) (byte, bool) {
	switch strings.ToLower(class) {
	case "rma":
		return roleRMA, true
	case "io":
		return roleFileIO, true
	}
	return 0, false
}
