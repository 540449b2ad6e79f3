package trace

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A native OTF2 writer (archive version 3.0 layout): anchor file, global
// definitions, one (empty) local definitions file and one event file per
// location. Only the records mpiscope needs are written: see
// docs/traces.md for the list and what is left out.

const (
	otf2EvtChunk = 1 << 20
	otf2DefChunk = 4 << 20

	otf2ChunkHeader = 0x03
	otf2Endian      = 0x42
	otf2EndOfChunk  = 0x02
	otf2EndOfFile   = 0x01
	otf2Timestamp   = 0x05

	// Event records.
	otf2Enter           = 0x0c
	otf2Leave           = 0x0d
	otf2MpiSend         = 0x0e
	otf2MpiIsend        = 0x0f
	otf2MpiIsendCompl   = 0x10
	otf2MpiIrecvRequest = 0x11
	otf2MpiRecv         = 0x12
	otf2MpiIrecv        = 0x13
	otf2MpiCancelled    = 0x15 // MpiRequestCancelled
	otf2CollBegin       = 0x16
	otf2CollEnd         = 0x17
	otf2NBCRequest      = 0x55 // NonBlockingCollectiveRequest (OTF2 3.0)
	otf2NBCComplete     = 0x56 // NonBlockingCollectiveComplete (OTF2 3.0)
	otf2CCEnter         = 0x42 // CallingContextEnter
	otf2CCLeave         = 0x43 // CallingContextLeave

	// Global definition records.
	otf2DefClock     = 0x05
	otf2DefParadigm  = 0x06
	otf2DefString    = 0x0a
	otf2DefSTN       = 0x0c
	otf2DefLocGroup  = 0x0d
	otf2DefLocation  = 0x0e
	otf2DefRegion    = 0x0f
	otf2DefGroup     = 0x12
	otf2DefComm      = 0x16
	otf2DefSCL       = 0x21 // SourceCodeLocation
	otf2DefCC        = 0x22 // CallingContext
	otf2DefInterComm = 0x2b
	otf2Undef32      = math.MaxUint32
	otf2Undef64      = math.MaxUint64
	otf2ParadigmUser = 1
	otf2ParadigmMPI  = 4
)

// Region roles.
const (
	roleFunction   = 1
	roleCode       = 4
	roleBarrier    = 15
	roleOne2All    = 23
	roleAll2One    = 24
	roleAll2All    = 25
	roleCollOther  = 26
	roleP2P        = 28
	roleArtificial = 31
)

// cu appends an OTF2 compressed unsigned integer: the number of significant
// bytes, then those bytes little-endian; all ones (undefined) is 0xff.
// The value's 8 bytes are stored at once past the count (in the slice's
// spare capacity) and the slice cut after its significant ones.
func cu(b []byte, v uint64, undef uint64) []byte {
	if v == undef {
		return append(b, 0xff)
	}
	n := (bits.Len64(v) + 7) >> 3
	l := len(b)
	if cap(b)-l < 9 {
		b = append(b, make([]byte, 9)...)
	}
	b = b[:l+1+n]
	b[l] = byte(n)
	binary.LittleEndian.PutUint64(b[l+1:l+9], v)
	return b
}

func cu32(b []byte, v uint32) []byte { return cu(b, uint64(v), otf2Undef32) }
func cu64(b []byte, v uint64) []byte { return cu(b, v, otf2Undef64) }

// record appends type, length (one byte, or 0xff and 8 bytes) and data.
func record(b []byte, typ byte, data []byte) []byte {
	b = append(b, typ)
	if len(data) < 0xff {
		b = append(b, byte(len(data)))
	} else {
		b = append(b, 0xff)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(data)))
	}
	return append(b, data...)
}

// otf2File writes chunked OTF2 buffers: full chunks are padded to the chunk
// size; the last one ends with end-of-chunk and end-of-file markers.
//
// An event file's full chunks (1 MiB, a multiple of directAlign) go to
// the file in direct writes (O_DIRECT, where the file system takes them;
// docs/traces.md, "Export"): a location's records are appended in place
// into an aligned buffer of otf2Span chunks, each chunk's first
// otf2HeaderLen bytes its header, so that full chunks are written as they
// are, otf2Span at a time, neither copied into a bufio buffer nor into the
// page cache (measured 2026-11-28: the page cache's copy was 15 % of
// `convert --otf2`'s CPU). The last chunk goes in an ordinary write. A
// location of few records (under otf2FirstCap bytes) takes the buffer
// only when one is free.
//
// The aligned buffers come from the writer's pool (otf2Bufs), where a
// closed location leaves its buffer for the next one: a job's conversion
// allocates one per location open at once, not one per location, and a
// location's first chunk takes a free buffer at once instead of growing
// by appends (which allocated 5 MiB per location on the way to its first
// full chunk: 2026-11-28, 40 of the 54 MB `convert --otf2` allocated on
// the 10^7-event trace, a dozen collections).
type otf2File struct {
	f        *os.File
	path     string
	size     int
	events   bool
	chunk    []byte
	buf      []byte   // aligned, otf2Span chunks (or one): the chunk is slot's past its header (nil until taken)
	slot     int      // the chunk's place in buf; the chunks before it are full, not yet written
	direct   *os.File // the file opened O_DIRECT; nil: ordinary writes
	tried    bool     // direct was opened (or refused)
	off      int64    // bytes written
	first    uint64   // number of the chunk's first event (1-based)
	n        uint64   // events written
	lastTime uint64
	err      error
	closed   bool
	pool     *otf2Bufs // where buf comes from and goes back to (nil: allocated, dropped)
}

// otf2Span is the number of full chunks of an event file written in one
// direct write: a location's buffer holds that many, filled one after the
// other. A write blocks (the device's time, 0.1-1 ms) and the Go runtime
// hands the blocked goroutine's processor off and keeps its monitor
// thread (sysmon) waking every 20 us for the next millisecond or more:
// 2026-11-28, 313 writes of one chunk for the 10^7-event trace, 3,400 to
// 6,200 of sysmon's sleeps, 5 % of the CPU samples in its wakeups.
const otf2Span = 4

// otf2FirstCap is the most a location's first chunk grows to by appends
// before it takes an aligned buffer (when the pool has none free): a
// location of a few records costs a few KiB, not a chunk.
const otf2FirstCap = 64 << 10

// otf2SpanBufs is the most buffers of otf2Span chunks a writer allocates;
// past them (the locations open at once: a rank's threads) a location's
// buffer is one chunk, so that memory grows with the locations by 1 MiB
// each, not 4.
const otf2SpanBufs = 8

// otf2Bufs is a pool of aligned chunk buffers (otf2Span chunks, or one),
// shared by the locations of a writer and its rank writers.
type otf2Bufs struct {
	mu    sync.Mutex
	free  [][]byte
	spans int // buffers of otf2Span chunks allocated
}

// take returns a free buffer of chunks of size bytes, if any (nil: none).
func (p *otf2Bufs) take(size int) []byte {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := len(p.free) - 1; k >= 0; k-- {
		if b := p.free[k]; len(b)%size == 0 {
			p.free[k] = p.free[len(p.free)-1]
			p.free[len(p.free)-1] = nil
			p.free = p.free[:len(p.free)-1]
			return b
		}
	}
	return nil
}

// get returns a free buffer of chunks of size bytes, else a new one: of
// otf2Span chunks, but one chunk past otf2SpanBufs of those.
func (p *otf2Bufs) get(size int) []byte {
	if b := p.take(size); b != nil {
		return b
	}
	n := otf2Span
	if p != nil {
		p.mu.Lock()
		if p.spans < otf2SpanBufs {
			p.spans++
		} else {
			n = 1
		}
		p.mu.Unlock()
	}
	return heapAligned(n * size)
}

// put gives buffer b back (its location is closed).
func (p *otf2Bufs) put(b []byte) {
	if p == nil || b == nil {
		return
	}
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

func newOTF2File(path string, size int, events bool) (*otf2File, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &otf2File{f: f, path: path, size: size, events: events, first: 1}, nil
}

const otf2HeaderLen = 18

// putHeader writes the chunk's header into h (otf2HeaderLen bytes).
func (o *otf2File) putHeader(h []byte, last uint64) {
	h[0], h[1] = otf2ChunkHeader, otf2Endian
	binary.LittleEndian.PutUint64(h[2:], o.first)
	binary.LittleEndian.PutUint64(h[10:], last)
}

// write writes b at the file's end, in a direct write when direct (b
// aligned, its length a multiple of directAlign) and the file system takes
// it, else in an ordinary one.
func (o *otf2File) write(b []byte, direct bool) {
	if o.err != nil {
		return
	}
	if direct && !o.tried {
		o.tried = true
		if oDirect != 0 && o.off%directAlign == 0 {
			if df, err := os.OpenFile(o.path, os.O_WRONLY|oDirect, 0); err == nil {
				o.direct = df
			}
		}
	}
	if direct && o.direct != nil {
		_, err := directWriteAt(o.direct, b, o.off)
		if err == nil {
			o.off += int64(len(b))
			return
		}
		// Refused (alignment, EINVAL): nothing was written; from now
		// on ordinary writes.
		o.direct.Close()
		o.direct = nil
	}
	n, err := o.f.WriteAt(b, o.off)
	o.off += int64(n)
	o.err = err
}

func (o *otf2File) flushChunk(final bool) {
	last := o.n
	if !o.events {
		last = 0
	}
	if final {
		var h [otf2HeaderLen]byte
		o.putHeader(h[:], last)
		if o.buf != nil && o.slot > 0 {
			o.write(o.buf[:o.slot*o.size], true) // the full chunks held
		}
		if s := o.slotBuf(); s != nil && len(o.chunk) > 0 && &o.chunk[0] == &s[otf2HeaderLen] {
			b := append(o.chunk, otf2EndOfChunk, otf2EndOfFile)
			copy(s, h[:])
			o.write(s[:otf2HeaderLen+len(b)], false)
		} else {
			b := make([]byte, 0, otf2HeaderLen+len(o.chunk)+2) // one write
			o.write(append(append(append(b, h[:]...), o.chunk...), otf2EndOfChunk, otf2EndOfFile), false)
		}
		o.chunk = o.chunk[:0]
		o.first = o.n + 1
		return
	}
	if o.events && o.size%directAlign == 0 && otf2HeaderLen+len(o.chunk) <= o.size {
		if o.buf == nil {
			o.buf, o.slot = o.pool.get(o.size), 0
		}
		s := o.slotBuf()
		if len(o.chunk) > 0 && &o.chunk[0] != &s[otf2HeaderLen] {
			copy(s[otf2HeaderLen:], o.chunk) // the first chunk, appended apart
		}
		o.putHeader(s, last)
		clear(s[otf2HeaderLen+len(o.chunk):])
		if o.slot++; o.slot == len(o.buf)/o.size {
			o.write(o.buf, true)
			o.slot = 0
		}
		o.chunk = o.slotBuf()[otf2HeaderLen:otf2HeaderLen]
	} else {
		var h [otf2HeaderLen]byte
		o.putHeader(h[:], last)
		o.write(h[:], false)
		o.write(o.chunk, false)
		o.write(otf2Zeros[:o.size-otf2HeaderLen-len(o.chunk)], false)
		o.chunk = o.chunk[:0]
	}
	o.first = o.n + 1
}

// slotBuf is the chunk's place in buf (size bytes, the header's
// included), nil without buf.
func (o *otf2File) slotBuf() []byte {
	if o.buf == nil {
		return nil
	}
	return o.buf[o.slot*o.size : (o.slot+1)*o.size : (o.slot+1)*o.size]
}

// otf2Zeros pads chunks.
var otf2Zeros [otf2DefChunk]byte

// add appends one record (an event is preceded by its timestamp).
func (o *otf2File) add(rec []byte, ts uint64, isEvent bool) {
	need := len(rec) + 2
	if isEvent {
		need += 9
	}
	if len(o.chunk)+need > cap(o.chunk) || otf2HeaderLen+len(o.chunk)+need > o.size {
		o.room(need)
	}
	if isEvent {
		o.chunk = append(o.chunk, otf2Timestamp)
		o.chunk = binary.LittleEndian.AppendUint64(o.chunk, ts)
		o.n++
	}
	o.chunk = append(o.chunk, rec...)
}

// room makes room for need more bytes in the chunk without appends
// growing it: a full chunk is written out first, then the chunk is moved
// into a larger slice if it has to be. An event file's chunk never has
// more capacity than a chunk's records take (size - otf2HeaderLen): past
// its first growth it is its aligned buffer's, so that ev's one
// comparison with the capacity finds both the chunk full and the slice.
func (o *otf2File) room(need int) {
	if otf2HeaderLen+len(o.chunk)+need > o.size {
		o.flushChunk(false)
	}
	n := len(o.chunk) + need
	if n <= cap(o.chunk) {
		return
	}
	if o.events && o.size%directAlign == 0 && o.buf == nil {
		b := o.pool.take(o.size)
		if b == nil && n > otf2FirstCap {
			b = o.pool.get(o.size)
		}
		if b != nil {
			o.buf, o.slot = b, 0
			k := copy(b[otf2HeaderLen:], o.chunk)
			o.chunk = b[otf2HeaderLen : otf2HeaderLen+k : o.size]
			return
		}
	}
	c := max(2*cap(o.chunk), 4096)
	if o.events {
		c = min(c, o.size-otf2HeaderLen)
	}
	b := make([]byte, len(o.chunk), max(c, n))
	copy(b, o.chunk)
	o.chunk = b
}

func (o *otf2File) close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	o.flushChunk(true)
	o.pool.put(o.buf)
	o.buf, o.chunk = nil, nil
	if o.direct != nil {
		o.direct.Close()
		o.direct = nil
	}
	if o.err != nil {
		o.f.Close()
		return o.err
	}
	return o.f.Close()
}

type otf2Loc struct {
	id     uint64
	rank   int
	thread int
	file   *otf2File
}

// OTF2Writer is a Visitor writing an OTF2 archive.
type OTF2Writer struct {
	dir     string
	w       *Walker
	locs    map[[2]int]*otf2Loc
	order   []*otf2Loc
	regions map[string]int
	rnames  []string
	rroles  []byte
	rpar    []byte
	rec     []byte
	d       []byte
	// comms maps the job's communicators to OTF2 communicator ids (both
	// sides of an intercommunicator share one); defs are those ids'
	// definitions, in id order.
	comms map[string]uint32 // by key
	defs  []otf2CommDef
	// Calling contexts: an MPI function's region at one callsite (a
	// source code location).
	ccs     map[otf2CCKey]uint32
	ccl     []otf2CCKey
	scls    map[Source]uint32
	scll    []Source
	Records uint64
	// A rank's writer (RankWriter) shares the definitions of its root
	// under the root's lock, with caches of its own; its locations are
	// its rank's alone.
	root  *OTF2Writer
	mu    sync.Mutex // of a root: definitions and locations
	lreg  map[string]uint32
	lcc   map[otf2CtxKey]uint32
	lpath map[otf2PathKey]uint32 // callctx.go
	lloc  map[[2]int]*otf2Loc
	// Per-event caches: the last location, the last names looked up
	// (regionCache), the last communicator's id.
	lastLoc   *otf2Loc
	lastLocK  [2]int
	rcache    [8]regionCache
	rnext     int
	lastComm  *GComm
	lastCommI uint32
	ops       map[string]struct {
		op byte
		ok bool
	}
	obj  otf2Obj   // of a root: windows, groups, files (otf2obj.go)
	bufs *otf2Bufs // of a root: its locations' aligned chunk buffers
}

// regionCache is a name's region id and collective operation, so that
// the events of a few functions (a loop's) need no string hashing.
type regionCache struct {
	name        string
	reg         uint32
	hasReg      bool
	op          byte
	isOp, hasOp bool
}

// cached returns the cache entry of name, made if needed.
func (o *OTF2Writer) cached(name string) *regionCache {
	for i := range o.rcache {
		if c := &o.rcache[i]; c.name == name && (c.hasReg || c.hasOp) {
			return c
		}
	}
	c := &o.rcache[o.rnext]
	o.rnext = (o.rnext + 1) % len(o.rcache)
	*c = regionCache{name: name}
	return c
}

type otf2CtxKey struct {
	reg uint32
	src Source
}

// RankWriter returns a writer for one rank's events, to walk ranks
// concurrently (Walker.WalkRanks), each with its own; Merge adds its
// counts to o's when its rank is done. Close is called on o alone.
func (o *OTF2Writer) RankWriter() *OTF2Writer {
	return &OTF2Writer{dir: o.dir, w: o.w, comms: o.comms, root: o,
		lreg: map[string]uint32{}, lcc: map[otf2CtxKey]uint32{}, lloc: map[[2]int]*otf2Loc{}}
}

// Merge adds a rank writer's record count to o's.
func (o *OTF2Writer) Merge(r *OTF2Writer) {
	o.mu.Lock()
	o.Records += r.Records
	r.Records = 0
	o.mu.Unlock()
}

type otf2CCKey struct {
	region, scl, parent uint32 // callctx.go
}

// otf2CommDef is an OTF2 communicator: an intracommunicator (B nil) or an
// intercommunicator between groups A and B (world ranks).
type otf2CommDef struct {
	name string
	a, b []int
}

// NewOTF2Writer creates dir (which must not exist or be empty) and its
// traces/ subdirectory.
func NewOTF2Writer(dir string, w *Walker) (*OTF2Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, "traces"), 0o777); err != nil {
		return nil, err
	}
	o := &OTF2Writer{dir: dir, w: w, locs: map[[2]int]*otf2Loc{}, regions: map[string]int{}, comms: map[string]uint32{},
		ccs: map[otf2CCKey]uint32{}, scls: map[Source]uint32{}, bufs: &otf2Bufs{}}
	for _, c := range w.CommList() {
		if c.Inter && c.Peer != nil {
			if id, ok := o.comms[c.Peer.Key]; ok {
				o.comms[c.Key] = id
				continue
			}
		}
		o.comms[c.Key] = uint32(len(o.defs))
		name := c.Key
		if name == "world" {
			name = "MPI_COMM_WORLD"
		}
		d := otf2CommDef{name: name, a: c.LocalGroup()}
		if c.Inter {
			// A message's peer is a rank of the remote group: B for
			// this side's events, A for the other side's.
			d.b = c.World
		}
		o.defs = append(o.defs, d)
	}
	// Group 0 is MPI_COMM_WORLD's locations; each communicator has one
	// group, an intercommunicator two; RMA synchronization groups follow.
	o.obj.groupBase = 1
	for _, d := range o.defs {
		o.obj.groupBase++
		if d.b != nil {
			o.obj.groupBase++
		}
	}
	return o, nil
}

func locID(rank, thread int) uint64 { return uint64(thread)<<32 | uint64(rank) }

func (o *OTF2Writer) loc(rank, thread int) (*otf2Loc, error) {
	k := [2]int{rank, thread}
	if o.lastLoc != nil && o.lastLocK == k {
		return o.lastLoc, nil
	}
	l, err := o.loc1(k)
	if err == nil {
		o.lastLoc, o.lastLocK = l, k
	}
	return l, err
}

func (o *OTF2Writer) loc1(k [2]int) (*otf2Loc, error) {
	rank, thread := k[0], k[1]
	if o.root != nil {
		if l := o.lloc[k]; l != nil {
			return l, nil
		}
		o.root.mu.Lock()
		l, err := o.root.loc(rank, thread)
		o.root.mu.Unlock()
		if err == nil {
			o.lloc[k] = l
		}
		return l, err
	}
	if l := o.locs[k]; l != nil {
		return l, nil
	}
	l := &otf2Loc{id: locID(rank, thread), rank: rank, thread: thread}
	f, err := newOTF2File(filepath.Join(o.dir, "traces", fmt.Sprintf("%d.evt", l.id)), otf2EvtChunk, true)
	if err != nil {
		return nil, err
	}
	f.pool = o.bufs
	l.file = f
	o.locs[k] = l
	o.order = append(o.order, l)
	return l, nil
}

func (o *OTF2Writer) region(name string, role, paradigm byte) uint32 {
	c := o.cached(name)
	if !c.hasReg {
		c.reg, c.hasReg = o.region1(name, role, paradigm), true
	}
	return c.reg
}

// fnRegion is o.region and o.collOp of an MPI function from one search
// of the cache, its role (fnRole) found only when the name is not cached.
func (o *OTF2Writer) fnRegion(fn, class string) (reg uint32, op byte, isOp bool) {
	c := o.cached(fn)
	if !c.hasReg {
		c.reg, c.hasReg = o.region1(fn, fnRole(fn, class), otf2ParadigmMPI), true
	}
	if !c.hasOp {
		c.op, c.isOp = o.collOp1(fn)
		c.hasOp = true
	}
	return c.reg, c.op, c.isOp
}

func (o *OTF2Writer) region1(name string, role, paradigm byte) uint32 {
	if o.root != nil {
		if id, ok := o.lreg[name]; ok {
			return id
		}
		o.root.mu.Lock()
		id := o.root.region(name, role, paradigm)
		o.root.mu.Unlock()
		o.lreg[name] = id
		return id
	}
	if id, ok := o.regions[name]; ok {
		return uint32(id)
	}
	id := len(o.rnames)
	o.regions[name] = id
	o.rnames = append(o.rnames, name)
	o.rroles = append(o.rroles, role)
	o.rpar = append(o.rpar, paradigm)
	return uint32(id)
}

func ts(t float64) uint64 {
	if !(t > 0) {
		return 0
	}
	return uint64(t + 0.5)
}

// collOps maps collective names (without MPI_ and _c) to OTF2 operations.
var collOps = map[string]byte{
	"Barrier": 0, "Bcast": 1, "Gather": 2, "Gatherv": 3, "Scatter": 4, "Scatterv": 5,
	"Allgather": 6, "Allgatherv": 7, "Alltoall": 8, "Alltoallv": 9, "Alltoallw": 10,
	"Allreduce": 11, "Reduce": 12, "Reduce_scatter": 13, "Scan": 14, "Exscan": 15,
	"Reduce_scatter_block": 16,
}

// collName returns a collective's operation name: without MPI_, _c, the
// I of a nonblocking form and the _init of a persistent one ("MPI_Ibcast",
// "MPI_Bcast_init_c" -> "Bcast").
func collName(fn string) string {
	n := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(fn, "MPI_"), "_c"), "_init")
	if rest, ok := strings.CutPrefix(n, "I"); ok && rest != "" {
		c := strings.ToUpper(rest[:1]) + rest[1:]
		if _, ok := collOps[c]; ok {
			return c
		}
	}
	return n
}

func fnRole(fn, class string) byte {
	if class == "p2p" {
		return roleP2P
	}
	if r, ok := objRole(class); ok {
		return r
	}
	if class != "coll" {
		return roleFunction
	}
	switch collName(fn) {
	case "Barrier":
		return roleBarrier
	case "Bcast", "Scatter", "Scatterv":
		return roleOne2All
	case "Gather", "Gatherv", "Reduce":
		return roleAll2One
	case "Allgather", "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan":
		return roleAll2All
	}
	return roleCollOther
}

func (o *OTF2Writer) ev(l *otf2Loc, typ byte, t uint64, withLen bool, data []byte) {
	f := l.file
	if t < f.lastTime {
		t = f.lastTime // keep each location's time line monotonic
	}
	f.lastTime = t
	// What add does with the record built apart, appended in place.
	n := 1 + len(data) // the record: type, length, data
	if withLen {
		n++
		if len(data) >= 0xff {
			n += 8
		}
	}
	if len(f.chunk)+n+2+9 > cap(f.chunk) { // room's rule: full, or a first chunk to grow
		f.room(n + 2 + 9)
	}
	b := append(f.chunk, otf2Timestamp)
	b = binary.LittleEndian.AppendUint64(b, t)
	f.n++
	if withLen {
		b = record(b, typ, data)
	} else {
		b = append(append(b, typ), data...)
	}
	f.chunk = b
	o.Records++
}

// msgComm returns the OTF2 communicator and the peer's rank in it (of an
// intercommunicator, in the remote group), or ok false when the message
// cannot be expressed (peer or communicator unknown).
func (o *OTF2Writer) msgComm(m *Msg) (uint32, uint32, bool) {
	if m == nil || m.Comm == nil || m.Peer < 0 {
		return 0, 0, false
	}
	id, ok := o.commID(m.Comm)
	p := m.Peer
	if w := m.Comm.World; p >= len(w) || w[p] != p {
		// Not where comm rank and world rank are equal (MPI_COMM_WORLD
		// and its prefixes: no map lookup there).
		p = m.Comm.Local(m.Peer)
	}
	if !ok || p < 0 {
		return 0, 0, false
	}
	return id, uint32(p), true
}

func (o *OTF2Writer) msgData(m *Msg, peer, comm uint32, req bool) []byte {
	d := cu32(o.d[:0], peer)
	d = cu32(d, comm)
	d = cu32(d, uint32(m.Tag))
	d = cu64(d, uint64(max(m.Bytes, 0)))
	if req {
		d = cu64(d, m.Req)
	}
	o.d = d
	return d
}

// commID is o.comms[g.Key], the last one cached.
func (o *OTF2Writer) commID(g *GComm) (uint32, bool) {
	if g == o.lastComm {
		return o.lastCommI, true
	}
	id, ok := o.comms[g.Key]
	if ok {
		o.lastComm, o.lastCommI = g, id
	}
	return id, ok
}

// collData renders the fields MpiCollectiveEnd and
// NonBlockingCollectiveComplete share: operation, communicator, root, bytes
// sent and received (the call's byte count for both).
func (o *OTF2Writer) collData(op byte, g *GComm, root int, bytes int64) []byte {
	b := uint64(max(bytes, 0))
	d := append(o.d[:0], op)
	id, _ := o.commID(g)
	d = cu32(d, id)
	r := uint32(otf2Undef32)
	if root >= 0 {
		r = uint32(root)
	}
	d = cu32(d, r)
	d = cu64(d, b)
	d = cu64(d, b)
	o.d = d
	return d
}

// Call implements Visitor.
func (o *OTF2Writer) Call(c *Call) error {
	l, err := o.loc(c.Rank, c.Thread)
	if err != nil {
		return err
	}
	t0, t1 := ts(c.T0), ts(c.T1)
	reg, op, isColl := o.fnRegion(c.Fn, c.Class)
	// Entered in the calling context of its callsite and path
	// (callctx.go); readers without calling contexts see an Enter of the
	// region.
	cc := o.callContext(reg, c)
	if cc != otf2Undef32 {
		o.ev(l, otf2CCEnter, t0, true, cu32(cu32(o.d[:0], cc), 1))
	} else {
		o.ev(l, otf2Enter, t0, false, cu32(o.d[:0], reg))
	}
	isColl = isColl && c.Coll && c.CollReq == 0 && c.Comm != nil && !c.Comm.Inter
	if isColl {
		o.ev(l, otf2CollBegin, t0, true, nil)
	}
	if c.CollReq != 0 {
		o.ev(l, otf2NBCRequest, t0, true, cu64(o.d[:0], c.CollReq))
	}
	o.rmaBegin(l, c, t0)
	o.ioBegin(l, c, t0)
	for i := range c.StartColl {
		o.ev(l, otf2NBCRequest, t0, true, cu64(o.d[:0], c.StartColl[i].Req))
	}
	if m := c.Send; m != nil {
		if comm, peer, ok := o.msgComm(m); ok {
			if m.Req != 0 {
				o.ev(l, otf2MpiIsend, t0, true, o.msgData(m, peer, comm, true))
			} else {
				o.ev(l, otf2MpiSend, t0, true, o.msgData(m, peer, comm, false))
			}
		}
	}
	if m := c.RecvPost; m != nil {
		o.ev(l, otf2MpiIrecvRequest, t0, false, cu64(o.d[:0], m.Req))
	}
	for i := range c.StartSend {
		m := &c.StartSend[i]
		if comm, peer, ok := o.msgComm(m); ok {
			o.ev(l, otf2MpiIsend, t0, true, o.msgData(m, peer, comm, true))
		}
	}
	for i := range c.StartRecv {
		o.ev(l, otf2MpiIrecvRequest, t0, false, cu64(o.d[:0], c.StartRecv[i].Req))
	}
	for i := range c.SendDone {
		// Completed only when its MpiIsend was written.
		if _, _, ok := o.msgComm(&c.SendDone[i]); ok {
			o.ev(l, otf2MpiIsendCompl, t1, false, cu64(o.d[:0], c.SendDone[i].Req))
		}
	}
	for i := range c.RecvDone {
		m := &c.RecvDone[i]
		if comm, peer, ok := o.msgComm(m); ok {
			o.ev(l, otf2MpiIrecv, t1, true, o.msgData(m, peer, comm, true))
		}
	}
	if m := c.Recv; m != nil {
		if comm, peer, ok := o.msgComm(m); ok {
			o.ev(l, otf2MpiRecv, t1, true, o.msgData(m, peer, comm, false))
		}
	}
	for _, id := range c.Cancelled {
		o.ev(l, otf2MpiCancelled, t1, false, cu64(o.d[:0], id))
	}
	for i := range c.CollDone {
		x := &c.CollDone[i]
		if op, ok := o.collOp(x.Fn); ok && x.Comm != nil && !x.Comm.Inter {
			o.ev(l, otf2NBCComplete, t1, true, cu64(o.collData(op, x.Comm, x.Root, x.Bytes), x.Req))
		}
	}
	if isColl {
		o.ev(l, otf2CollEnd, t1, true, o.collData(op, c.Comm, c.Root, c.CollBytes))
	}
	o.rmaEnd(l, c, t1)
	o.ioEnd(l, c, t1)
	if cc != otf2Undef32 {
		o.ev(l, otf2CCLeave, t1, true, cu32(o.d[:0], cc))
	} else {
		o.ev(l, otf2Leave, t1, false, cu32(o.d[:0], reg))
	}
	return l.file.err
}

// collOp is collOps[collName(fn)], cached per writer (collName
// allocates).
func (o *OTF2Writer) collOp(fn string) (byte, bool) {
	c := o.cached(fn)
	if !c.hasOp {
		c.op, c.isOp = o.collOp1(fn)
		c.hasOp = true
	}
	return c.op, c.isOp
}

func (o *OTF2Writer) collOp1(fn string) (byte, bool) {
	if v, ok := o.ops[fn]; ok {
		return v.op, v.ok
	}
	if o.ops == nil {
		o.ops = map[string]struct {
			op byte
			ok bool
		}{}
	}
	op, ok := collOps[collName(fn)]
	o.ops[fn] = struct {
		op byte
		ok bool
	}{op, ok}
	return op, ok
}

// context returns the calling context of region reg at callsite src.
func (o *OTF2Writer) context(reg uint32, src *Source) uint32 {
	if o.root != nil {
		k := otf2CtxKey{reg, *src}
		if id, ok := o.lcc[k]; ok {
			return id
		}
		o.root.mu.Lock()
		id := o.root.context(reg, src)
		o.root.mu.Unlock()
		o.lcc[k] = id
		return id
	}
	return o.ccNode(reg, o.sclOf(src), otf2Undef32)
}

// Region implements Visitor.
func (o *OTF2Writer) Region(rank, thread int, enter bool, name string, t float64) error {
	l, err := o.loc(rank, thread)
	if err != nil {
		return err
	}
	reg := o.region(name, roleCode, otf2ParadigmUser)
	typ := byte(otf2Leave)
	if enter {
		typ = otf2Enter
	}
	o.ev(l, typ, ts(t), false, cu32(o.d[:0], reg))
	return nil
}

// Mark implements Visitor: a user event becomes a zero-length region named
// "event: <text>".
func (o *OTF2Writer) Mark(rank, thread int, text string, t float64) error {
	l, err := o.loc(rank, thread)
	if err != nil {
		return err
	}
	reg := o.region("event: "+text, roleArtificial, otf2ParadigmUser)
	o.ev(l, otf2Enter, ts(t), false, cu32(o.d[:0], reg))
	o.ev(l, otf2Leave, ts(t), false, cu32(o.d[:0], reg))
	return nil
}

// closeLocs closes the event files of a rank writer's locations.
func (o *OTF2Writer) closeLocs() error {
	for _, l := range o.lloc {
		if err := l.file.close(); err != nil {
			return err
		}
	}
	return nil
}

// Close writes the event files' ends, the local and global definitions and
// the anchor file.
func (o *OTF2Writer) Close() error {
	// Every rank gets a location for its main thread, even without events,
	// so that MPI ranks map to locations.
	size := 0
	for _, r := range o.w.Job.Ranks {
		size = max(size, r.Header.Size)
	}
	for r := 0; r < size; r++ {
		if _, err := o.loc(r, 0); err != nil {
			return err
		}
	}
	sort.Slice(o.order, func(a, b int) bool { return o.order[a].id < o.order[b].id })
	for _, l := range o.order {
		if err := l.file.close(); err != nil {
			return err
		}
		d, err := newOTF2File(filepath.Join(o.dir, "traces", fmt.Sprintf("%d.def", l.id)), otf2DefChunk, false)
		if err != nil {
			return err
		}
		if err := d.close(); err != nil {
			return err
		}
	}
	g, err := newOTF2File(filepath.Join(o.dir, "traces.def"), otf2DefChunk, false)
	if err != nil {
		return err
	}
	ndefs := uint64(0)
	def := func(typ byte, data []byte) {
		g.add(record(nil, typ, data), 0, false)
		ndefs++
	}
	strs := map[string]uint32{}
	str := func(s string) uint32 {
		if id, ok := strs[s]; ok {
			return id
		}
		id := uint32(len(strs))
		strs[s] = id
		def(otf2DefString, append(cu32(nil, id), append([]byte(s), 0)...))
		return id
	}
	var d []byte
	d = cu64(nil, 1e9)
	d = cu64(d, 0)
	d = cu64(d, ts(o.w.End)+1)
	d = cu64(d, uint64(max(o.w.RealOrigin, 0))) // the date of time 0 (OTF2 3.0)
	def(otf2DefClock, d)
	str("")
	def(otf2DefParadigm, append(cu32([]byte{otf2ParadigmMPI}, str("MPI")), 0))
	// System tree: the job, then one node per host with its ranks.
	d = cu32(nil, 0)
	d = cu32(d, str("job"))
	d = cu32(d, str("machine"))
	d = cu32(d, otf2Undef32)
	def(otf2DefSTN, d)
	ranks := map[int]*Rank{}
	hosts := map[string]uint32{}
	for _, r := range o.w.Job.Ranks {
		ranks[r.Header.Rank] = r
		if h := r.Header.Host; h != "" {
			if _, ok := hosts[h]; !ok {
				hosts[h] = uint32(len(hosts) + 1)
				d = cu32(nil, hosts[h])
				d = cu32(d, str(h))
				d = cu32(d, str("node"))
				d = cu32(d, 0)
				def(otf2DefSTN, d)
			}
		}
	}
	for r := 0; r < size; r++ {
		name := fmt.Sprintf("rank %d", r)
		node := uint32(0)
		if rk := ranks[r]; rk != nil && rk.Header.Host != "" {
			name += " (" + rk.Header.Host + ")"
			node = hosts[rk.Header.Host]
		}
		d = cu32(nil, uint32(r))
		d = cu32(d, str(name))
		d = append(d, 1) // process
		d = cu32(d, node)
		d = cu32(d, otf2Undef32)
		def(otf2DefLocGroup, d)
	}
	for _, l := range o.order {
		d = cu64(nil, l.id)
		d = cu32(d, str(fmt.Sprintf("thread %d", l.thread)))
		d = append(d, 1) // CPU thread
		d = cu64(d, l.file.n)
		d = cu32(d, uint32(l.rank))
		def(otf2DefLocation, d)
	}
	for i, n := range o.rnames {
		s := str(n)
		d = cu32(nil, uint32(i))
		d = cu32(d, s)   // name
		d = cu32(d, 0)   // description ""
		d = append(d, 0) // region type (old field)
		d = cu32(d, 0)   // source file ""
		d = cu32(d, 0)   // begin line
		d = cu32(d, 0)   // end line
		d = cu32(d, s)   // canonical name
		d = append(d, o.rroles[i], o.rpar[i])
		d = cu32(d, 0) // flags
		def(otf2DefRegion, d)
	}
	for i, src := range o.scll {
		d = cu32(nil, uint32(i))
		d = cu32(d, str(src.File))
		d = cu32(d, uint32(src.Line))
		def(otf2DefSCL, d)
	}
	for i, k := range o.ccl {
		d = cu32(nil, uint32(i))
		d = cu32(d, k.region)
		d = cu32(d, k.scl)
		d = cu32(d, k.parent)
		def(otf2DefCC, d)
	}
	group := func(id uint32, oldType, typ byte, members []uint64) {
		d := cu32(nil, id)
		d = cu32(d, 0)
		d = append(d, oldType)
		d = cu32(d, uint32(len(members)))
		for _, m := range members {
			d = cu64(d, m)
		}
		d = append(d, typ, otf2ParadigmMPI)
		d = cu32(d, 0)
		def(otf2DefGroup, d)
	}
	locs := make([]uint64, size)
	for r := range locs {
		locs[r] = locID(r, 0)
	}
	group(0, 6, 4, locs) // MPI_COMM_WORLD rank -> location
	ngroups := uint32(1)
	commGroup := func(world []int) uint32 {
		ms := make([]uint64, 0, len(world))
		for _, x := range world {
			ms = append(ms, uint64(max(x, 0)))
		}
		group(ngroups, 4, 5, ms)
		ngroups++
		return ngroups - 1
	}
	for id, c := range o.defs {
		ga := commGroup(c.a)
		d = cu32(nil, uint32(id))
		d = cu32(d, str(c.name))
		d = cu32(d, ga)
		if c.b != nil {
			d = cu32(d, commGroup(c.b))
			d = cu32(d, otf2Undef32) // common communicator
			d = cu32(d, 0)           // flags
			def(otf2DefInterComm, d)
			continue
		}
		d = cu32(d, otf2Undef32) // parent
		d = cu32(d, 0)           // flags
		def(otf2DefComm, d)
	}
	o.objDefs(def, str, group)
	if err := g.close(); err != nil {
		return err
	}
	// Anchor file.
	a := []byte{otf2ChunkHeader, otf2Endian}
	a = append(a, "OTF2\x00"...)
	a = append(a, 3, 2, 3, 0, 2)
	a = binary.LittleEndian.AppendUint64(a, otf2EvtChunk)
	a = binary.LittleEndian.AppendUint64(a, otf2DefChunk)
	a = append(a, 1, 1) // POSIX files, no compression
	a = binary.LittleEndian.AppendUint64(a, uint64(len(o.order)))
	a = binary.LittleEndian.AppendUint64(a, ndefs)
	a = append(a, 0) // machine name ""
	a = append(a, "mpiscope\x00"...)
	a = append(a, 0)          // description ""
	a = append(a, 0, 0, 0, 0) // properties
	var id [8]byte
	rand.Read(id[:])
	a = append(a, id[:]...)
	a = append(a, 0, 0, 0, 0, 0, 0, 0, 0) // snapshots, thumbnails
	a = append(a, otf2EndOfChunk, otf2EndOfFile, 0)
	return os.WriteFile(filepath.Join(o.dir, "traces.otf2"), a, 0o666)
}
