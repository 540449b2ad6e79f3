// Package trace is mpiscope's event-trace model: the per-rank trace file
// (.mst) written while the application runs, its checked reader, clock
// correction across ranks, and the exporters (OTF2, Chrome/Perfetto JSON).
// It depends on the standard library only; docs/traces.md describes the
// format, the directory layout and the policies.
package trace

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
)

// Magic starts every trace file; the last byte is the format version
// (Version): 6 since events (E) blocks keep each event's shape in a
// dictionary (AppendEvents: a repeated event is a slot and its times), 5
// since raw blocks may hold posts records (rawposts.go: a run of
// nonblocking posts of one shape is one record), 4 since they may hold
// completions records (raw.go: a completion call of several requests
// writes its completions as one record), 3 since records may hold a call
// path's key where the callsite is (paths.go). Version 2 to 5 files are
// read as they are.
const Magic = "MSTRACE\x06"

// Version is the format version this package writes.
const Version = 6

// Event kinds.
const (
	KCall     = 1 // an MPI call: T0..T1
	KComplete = 2 // a request completed inside the call that follows (Wait/Test families)
	KEnter    = 3 // region enter (Pcontrol 4): Fn = region id
	KLeave    = 4 // region leave (Pcontrol -4): Fn = region id
	KMark     = 5 // user event (Pcontrol 5): Fn = text id
	KPost     = 6 // a persistent request started inside the call that follows (MPI_Start, MPI_Startall): FSend or FRecv, FReq; or FColl|FReq, a persistent collective: Fn its _init function, STag its root, SBytes its bytes
	KRma      = 7 // a one-sided call: STag its window's id (per rank, in creation order), Comm the window's communicator, SPeer the target (world rank, -1 none), SBytes/RBytes the bytes sent/received, RTag MPI_Win_lock's lock type (0 exclusive, 1 shared) or an MPI_Win_post/start group's size, whose members (ranks of the window's communicator) are bits of SBytes (0-63) and RBytes (64-127); FReq: Req the request of MPI_Rput...
	KIo       = 8 // an MPI-IO call: STag its file's id (per rank, in opening order), Comm the file's communicator, SBytes/RBytes the bytes written/read as requested, RTag MPI_File_open's access mode; FReq: Req the request of MPI_File_iread...
)

// Event flags.
const (
	FSend  = 1  // SPeer, STag, SBytes describe a message sent (or posted)
	FRecv  = 2  // RPeer, RTag, RBytes describe a message received (or posted)
	FReq   = 4  // nonblocking: Req is the request handle the post created
	FColl  = 8  // collective: SBytes is the call's byte count, STag its root (-1 none); with FReq nonblocking
	FLocal = 16 // KComplete: RPeer is a rank of the posting communicator, not of MPI_COMM_WORLD; without FRecv, an MPI-IO request's completion with the bytes its status tells in RBytes
)

// Event is one record. Times are the rank's timer ticks; peers are
// MPI_COMM_WORLD ranks (-1: none, -2: MPI_ANY_SOURCE not yet known) unless
// FLocal is set; Comm is the rank's communicator id (-1: none).
type Event struct {
	Kind   uint8
	Flags  uint8
	Fn     uint16
	Comm   int32
	T0, T1 uint64
	PC     uint64
	Req    uint64
	SPeer  int32
	STag   int32
	RPeer  int32
	RTag   int32
	SBytes int64
	RBytes int64
	Path   uint32 // the call's path (Rank.PathFrames; 0: none), set when a rank is read
}

// IsCall tells whether the event is an MPI call (KCall, and the one-sided
// and MPI-IO calls KRma and KIo).
func (v *Event) IsCall() bool { return v.Kind == KCall || v.Kind == KRma || v.Kind == KIo }

// sendFields tells whether the event's SPeer, STag and SBytes say
// something: a message sent, a collective, a one-sided or I/O call.
func (v *Event) sendFields() bool {
	return v.Flags&(FSend|FColl) != 0 || v.Kind == KRma || v.Kind == KIo
}

// recvFields tells whether the event's RPeer, RTag and RBytes say
// something: a message received, a one-sided or I/O call, an I/O
// completion (FLocal alone).
func (v *Event) recvFields() bool {
	return v.Flags&FRecv != 0 || v.Kind == KRma || v.Kind == KIo || (v.Kind == KComplete && v.Flags&FLocal != 0)
}

// Cancelled is a completion's RPeer when its request was cancelled
// (MPI_Cancel): the request is marked, matched to no message.
const Cancelled = -3

// Block kinds.
const (
	BHeader = 'H'
	BCalib  = 'K' // timer calibration: ticks -> local CLOCK_MONOTONIC ns
	BSync   = 'S' // clock sample against rank 0
	BComm   = 'C' // communicator definition
	BRegion = 'R' // region definition
	BText   = 'M' // user-event text definition
	BFile   = 'I' // a file's name, by its id (MPI_File_open)
	BEvents = 'E' // compressed events of one thread
	BRaw    = 'W' // one thread's buffer as recorded (12- to 72-byte records, raw.go), packed into E at finalize
	BGap    = 'G' // events dropped on one thread (writer behind)
	BFinal  = 'F' // clean end
	BPad    = 'P' // padding (zeros) that aligns the next block for a direct write; readers skip it
	BMaps   = 'L' // the process's file mappings (/proc/self/maps): callsite addresses -> module + offset; the last one wins
)

// Header is the first block of a rank's file.
type Header struct {
	Rank, Size int
	PID        int
	Host       string
	Family     string
	Tool       string
	Timer      string
	RealNs     int64 // CLOCK_REALTIME at init
	FnNames    []string
	FnClasses  []string
}

// Calib converts ticks to the rank's CLOCK_MONOTONIC nanoseconds:
// ns = Ns0 + (ticks - Tick0) * NsPerTick.
type Calib struct {
	Tick0, Ns0 uint64
	NsPerTick  float64
}

// Ns converts ticks.
func (c Calib) Ns(t uint64) float64 {
	return float64(c.Ns0) + (float64(t)-float64(c.Tick0))*c.NsPerTick
}

// Sync is one clock measurement: at local time LocalNs, rank 0's clock read
// LocalNs + OffsetNs, measured with a round trip of RTTNs.
type Sync struct {
	LocalNs  uint64
	OffsetNs int64
	RTTNs    uint64
}

// CommDef defines one of the rank's communicators.
type CommDef struct {
	ID    int
	Key   string // the same on every member (profile Comm.Key)
	Size  int
	World []int // comm rank -> MPI_COMM_WORLD rank (-1 unknown); for an intercommunicator, the remote group
	Inter bool
}

// Mapping is one file mapping of the process: addresses [Start, End)
// come from offset Offset of the file at Path.
type Mapping struct {
	Start, End, Offset uint64
	Path               string
}

// Final closes a complete file.
type Final struct {
	Events, Dropped uint64
}

// ---- encoding helpers ----

type enc struct{ b []byte }

func (e *enc) u(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)  { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) s(v string) { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) f(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

// errShort marks a payload that ends early.
var errShort = errors.New("payload too short")

type dec struct {
	b   []byte
	err error
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

// n reads a count no larger than max.
func (d *dec) n(max int) int {
	v := d.u()
	if v > uint64(max) {
		if d.err == nil {
			d.err = fmt.Errorf("count %d exceeds %d", v, max)
		}
		return 0
	}
	return int(v)
}

func (d *dec) s() string {
	v := d.u()
	if d.err == nil && v > uint64(len(d.b)) { // the bytes left after the length
		d.err = fmt.Errorf("count %d exceeds %d", v, len(d.b))
	}
	if d.err != nil {
		return ""
	}
	str := string(d.b[:v])
	d.b = d.b[v:]
	return str
}

func (d *dec) f() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

// ---- payloads ----

// EncodeHeader returns the payload of a header block.
func EncodeHeader(h *Header) []byte {
	var e enc
	e.u(1) // payload version
	e.u(uint64(h.Rank))
	e.u(uint64(h.Size))
	e.u(uint64(h.PID))
	e.s(h.Host)
	e.s(h.Family)
	e.s(h.Tool)
	e.s(h.Timer)
	e.i(h.RealNs)
	e.u(uint64(len(h.FnNames)))
	for i, n := range h.FnNames {
		e.s(n)
		c := ""
		if i < len(h.FnClasses) {
			c = h.FnClasses[i]
		}
		e.s(c)
	}
	return e.b
}

func decodeHeader(p []byte) (*Header, error) {
	d := dec{b: p}
	if v := d.u(); d.err == nil && v != 1 {
		return nil, fmt.Errorf("header version %d not supported", v)
	}
	h := &Header{}
	h.Rank = d.n(1 << 31)
	h.Size = d.n(1 << 31)
	h.PID = d.n(1 << 40)
	h.Host, h.Family, h.Tool, h.Timer = d.s(), d.s(), d.s(), d.s()
	h.RealNs = d.i()
	n := d.n(len(d.b) / 2)
	for i := 0; i < n && d.err == nil; i++ {
		h.FnNames = append(h.FnNames, d.s())
		h.FnClasses = append(h.FnClasses, d.s())
	}
	if d.err == nil && h.Rank >= h.Size {
		d.err = fmt.Errorf("rank %d not below size %d", h.Rank, h.Size)
	}
	return h, d.err
}

// EncodeCalib returns the payload of a calibration block.
func EncodeCalib(c Calib) []byte {
	var e enc
	e.u(c.Tick0)
	e.u(c.Ns0)
	e.f(c.NsPerTick)
	return e.b
}

func decodeCalib(p []byte) (Calib, error) {
	d := dec{b: p}
	c := Calib{Tick0: d.u(), Ns0: d.u(), NsPerTick: d.f()}
	if d.err == nil && (!(c.NsPerTick > 0) || math.IsInf(c.NsPerTick, 0)) {
		d.err = fmt.Errorf("bad ns per tick %v", c.NsPerTick)
	}
	return c, d.err
}

// EncodeSync returns the payload of a clock-sample block.
func EncodeSync(s Sync) []byte {
	var e enc
	e.u(s.LocalNs)
	e.i(s.OffsetNs)
	e.u(s.RTTNs)
	return e.b
}

func decodeSync(p []byte) (Sync, error) {
	d := dec{b: p}
	s := Sync{LocalNs: d.u(), OffsetNs: d.i(), RTTNs: d.u()}
	return s, d.err
}

// EncodeComm returns the payload of a communicator block.
func EncodeComm(c *CommDef) []byte {
	var e enc
	e.u(uint64(c.ID))
	e.s(c.Key)
	e.u(uint64(c.Size))
	inter := uint64(0)
	if c.Inter {
		inter = 1
	}
	e.u(inter)
	e.u(uint64(len(c.World)))
	for _, w := range c.World {
		e.i(int64(w))
	}
	return e.b
}

func decodeComm(p []byte) (*CommDef, error) {
	d := dec{b: p}
	c := &CommDef{ID: d.n(1 << 20), Key: d.s(), Size: d.n(1 << 31), Inter: d.u() != 0}
	n := d.n(len(d.b))
	for i := 0; i < n && d.err == nil; i++ {
		c.World = append(c.World, int(d.i()))
	}
	return c, d.err
}

// EncodeMaps returns the payload of a mappings block.
func EncodeMaps(ms []Mapping) []byte {
	var e enc
	e.u(uint64(len(ms)))
	for _, m := range ms {
		e.u(m.Start)
		e.u(m.End)
		e.u(m.Offset)
		e.s(m.Path)
	}
	return e.b
}

func decodeMaps(p []byte) ([]Mapping, error) {
	d := dec{b: p}
	n := d.n(len(d.b) / 4)
	ms := make([]Mapping, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		m := Mapping{Start: d.u(), End: d.u(), Offset: d.u(), Path: d.s()}
		if d.err == nil && m.End < m.Start {
			d.err = fmt.Errorf("mapping %d ends (%#x) before it starts (%#x)", i, m.End, m.Start)
		}
		ms = append(ms, m)
	}
	return ms, d.err
}

// EncodeName returns the payload of a region or text block.
func EncodeName(id int, name string) []byte {
	var e enc
	e.u(uint64(id))
	e.s(name)
	return e.b
}

func decodeName(p []byte) (int, string, error) {
	d := dec{b: p}
	id := d.n(1 << 20)
	s := d.s()
	return id, s, d.err
}

// EncodeFinal returns the payload of the final block.
func EncodeFinal(f Final) []byte {
	var e enc
	e.u(f.Events)
	e.u(f.Dropped)
	return e.b
}

// EncodeGap returns the payload of a gap block.
func EncodeGap(tid int, dropped uint64) []byte {
	var e enc
	e.u(uint64(tid))
	e.u(dropped)
	return e.b
}

// ---- events ----

func zz(prev, cur uint64) int64 { return int64(cur - prev) }

// Events (E) blocks. The payload: thread id, event count, byte count of
// the encoded events (uvarints), then their DEFLATE stream. Format
// version 6 encodes each event as
//
//	t0 - previous t1 (zigzag) | t1 - t0 | slot | [shape] | [request - previous request (zigzag)]
//
// Slot s > 0 is the shape in the block's dictionary slot s: the event's
// kind, flags, function, communicator, callsite, peers, tags and bytes
// (all but its times and request). Slot 0 announces a shape written in
// full (kind, flags, function, then zigzag: communicator, callsite -
// previous full shape's callsite, and the send peer, tag, bytes and the
// receive peer, tag, bytes when the kind and flags give them), which
// takes the next slot while the dictionary holds fewer than maxShapes.
// The request follows when the shape's flags have FReq or its kind is
// KComplete. The dictionary starts empty with each block (each block
// decodes on its own). Versions 2 to 5 write each event in full
// (appendEventsV5).

// maxShapes bounds an events block's dictionary (format version 6): a
// block of more shapes writes the others in full each time.
const maxShapes = 1 << 14

// hasReq tells whether an events block holds the event's request.
func (v *Event) hasReq() bool { return v.Flags&FReq != 0 || v.Kind == KComplete }

// shape appends v's shape in full (format version 6); pc is the callsite
// of the previous shape written in full.
func (e *enc) shape(v *Event, pc uint64) {
	e.b = append(e.b, v.Kind, v.Flags)
	e.u(uint64(v.Fn))
	e.i(int64(v.Comm))
	e.i(zz(pc, v.PC))
	e.msg(v)
}

// msg appends the send and receive fields v's kind and flags give (the
// layout msgFields reads, in every version).
func (e *enc) msg(v *Event) {
	if v.sendFields() {
		e.i(int64(v.SPeer))
		e.i(int64(v.STag))
		e.i(v.SBytes)
	}
	if v.recvFields() {
		e.i(int64(v.RPeer))
		e.i(int64(v.RTag))
		e.i(v.RBytes)
	}
}

// AppendEvents encodes events of one thread (format version 6: shapes in
// a dictionary, times as deltas, varints) and compresses them with
// DEFLATE: the payload of an events block.
func AppendEvents(dst []byte, tid int, evs []Event, fw *flate.Writer, scratch *bytes.Buffer) ([]byte, error) {
	var e enc
	e.b = make([]byte, 0, len(evs)*6+64)
	// A shape's slot: from a small direct-mapped cache (by callsite,
	// function and peers) when it holds the shape, else from the map.
	slots := make(map[Event]uint32, 64)
	var shapes []Event // by slot - 1
	var cache [256]uint32
	var pt, ppc, preq uint64
	for i := range evs {
		v := &evs[i]
		e.i(zz(pt, v.T0))
		e.u(v.T1 - v.T0)
		pt = v.T1
		key := *v
		key.T0, key.T1, key.Req, key.Path = 0, 0, 0, 0
		h := (v.PC ^ uint64(v.Fn)<<40 ^ uint64(uint32(v.SPeer))<<16 ^ uint64(uint32(v.RPeer))<<24 ^ uint64(v.Flags)<<48) * 0x9e3779b97f4a7c15 >> 56
		if s := cache[h]; s != 0 && shapes[s-1] == key {
			e.u(uint64(s))
		} else if s, ok := slots[key]; ok {
			cache[h] = s
			e.u(uint64(s))
		} else {
			e.b = append(e.b, 0)
			e.shape(v, ppc)
			ppc = v.PC
			if len(slots) < maxShapes {
				shapes = append(shapes, key)
				slots[key] = uint32(len(shapes))
				cache[h] = uint32(len(shapes))
			}
		}
		if v.hasReq() {
			e.i(zz(preq, v.Req))
			preq = v.Req
		}
	}
	return appendEventsBlock(dst, tid, len(evs), e.b, fw, scratch)
}

// appendEventsV5 encodes events as format versions 2 to 5 did (each
// event in full: kind, flags, function, communicator, t0 - previous t1,
// t1 - t0, callsite - previous callsite, then the request and the send
// and receive fields when the kind and flags give them). It writes the
// version 5 synthetic traces (SynthSpec.Version) and the tests' older
// files.
func appendEventsV5(dst []byte, tid int, evs []Event, fw *flate.Writer, scratch *bytes.Buffer) ([]byte, error) {
	var e enc
	e.b = make([]byte, 0, len(evs)*24)
	var pt, ppc uint64
	for i := range evs {
		v := &evs[i]
		e.b = append(e.b, v.Kind, v.Flags)
		e.u(uint64(v.Fn))
		e.i(int64(v.Comm))
		e.i(zz(pt, v.T0))
		e.u(v.T1 - v.T0)
		e.i(zz(ppc, v.PC))
		pt, ppc = v.T1, v.PC
		if v.hasReq() {
			e.u(v.Req)
		}
		e.msg(v)
	}
	return appendEventsBlock(dst, tid, len(evs), e.b, fw, scratch)
}

// appendEventsBlock appends an events block's payload: its header and the
// encoded events raw compressed.
func appendEventsBlock(dst []byte, tid, n int, raw []byte, fw *flate.Writer, scratch *bytes.Buffer) ([]byte, error) {
	var h enc
	h.b = dst
	h.u(uint64(tid))
	h.u(uint64(n))
	h.u(uint64(len(raw)))
	scratch.Reset()
	fw.Reset(scratch)
	if _, err := fw.Write(raw); err != nil {
		return nil, err
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	return append(h.b, scratch.Bytes()...), nil
}

// maxRaw bounds the decompressed size of one events block (a buffer of
// 1 GiB at most).
const maxRaw = 1 << 30

// minEvent is the size of the smallest encoded event of format version 6:
// three one-byte varints (t0 delta, duration, slot), a cheap call
// repeated in a loop; minEventV5 that of versions 2 to 5: kind, flags and
// five one-byte varints (function, communicator, t0 delta, duration, call
// site delta).
const (
	minEvent   = 3
	minEventV5 = 7
)

// DecodeEvents decodes an events block payload of the current format
// version (6), appending to evs.
func DecodeEvents(p []byte, evs []Event) (tid int, out []Event, err error) {
	var st evDecoder
	return st.decode(p, evs)
}

// evDecoder decodes events blocks one after the other, reusing its
// decompressor, buffer and dictionary (a reader of many blocks allocates
// nothing per block). A block is decoded whole (decode) or in parts
// (start, then next until left is 0), which keeps a large block's events
// out of memory (a part stays in the cache while its reader goes through
// it).
type evDecoder struct {
	inf inflater
	raw []byte
	// ver is the file's format version: 2 to 5 decode as those versions
	// wrote, 0 and 6 as version 6.
	ver int
	// The block being decoded: its records left, the events decoded and
	// in all, the previous end time, callsite and request (deltas), its
	// dictionary of shapes (version 6; each slot's Req is 1 when its
	// events hold a request, else 0).
	b             []byte
	i, n          int
	pt, ppc, preq uint64
	dict          []Event
	// tagged: the block's events may hold a call path's key where the
	// callsite is (PathTag): in version 6 when a shape of the block does,
	// in versions 2 to 5 always (Rank.resolvePaths is then needed).
	tagged bool
}

// v5 tells whether the decoder reads blocks of format versions 2 to 5.
func (st *evDecoder) v5() bool { return eventsV5(st.ver) }

// eventsV5 tells whether an events block of format version ver (0: the
// current one) has version 5's layout (versions 2 to 5) rather than
// version 6's dictionary of shapes.
func eventsV5(ver int) bool { return ver != 0 && ver < 6 }

func (st *evDecoder) decode(p []byte, evs []Event) (tid int, out []Event, err error) {
	if tid, err = st.start(p); err != nil {
		return 0, evs, err
	}
	out, err = st.next(evs, st.left())
	if err != nil {
		return 0, out, err
	}
	return tid, out, nil
}

// left is the number of events of the block not decoded yet.
func (st *evDecoder) left() int { return st.n - st.i }

// start reads a block's header and decompresses its records; next decodes
// them.
func (st *evDecoder) start(p []byte) (tid int, err error) {
	st.b, st.i, st.n = nil, 0, 0
	minEv := minEvent
	if st.v5() {
		minEv = minEventV5
	}
	d := dec{b: p}
	tid = d.n(1 << 31)
	n := d.n(maxRaw / minEv)
	rawLen := d.n(maxRaw)
	if d.err != nil {
		return 0, d.err
	}
	if n > rawLen/minEv {
		return 0, fmt.Errorf("%d events cannot fit in %d bytes", n, rawLen)
	}
	if rawLen > len(d.b)*1100+64 {
		// DEFLATE expands at most about 1032:1.
		return 0, fmt.Errorf("%d bytes cannot come from %d compressed bytes", rawLen, len(d.b))
	}
	// inflateAll allocates what decompression yields, not what the
	// header claims: the buffer grows as data arrives (and is kept for
	// the next block).
	raw, err := st.inf.inflate(st.raw[:0], d.b, rawLen)
	if le := (*inflateLenError)(nil); errors.As(err, &le) {
		return 0, fmt.Errorf("decompressing events: %d bytes, header says %d", le.got, rawLen)
	} else if err != nil {
		return 0, fmt.Errorf("decompressing events: %v", err)
	}
	st.raw = raw
	st.b, st.n, st.pt, st.ppc, st.preq, st.dict = raw, n, 0, 0, 0, st.dict[:0]
	st.tagged = st.v5()
	return tid, nil
}

// xCut is the offset the varint readers return for a varint cut short
// (and keep once returned): beyond any block's bytes (maxRaw), so that
// every bounds test fails on it.
const xCut = 1 << 31

// next decodes up to k more events of the block, appending to evs.
func (st *evDecoder) next(evs []Event, k int) ([]Event, error) {
	if st.v5() {
		return st.nextV5(evs, k)
	}
	k = min(k, st.left())
	evs = slices.Grow(evs, k) // k <= len(raw)/minEvent: what the data holds
	b, pt, ppc, preq, n, dict := st.b, st.pt, st.ppc, st.preq, st.n, st.dict
	// Varints inline: a one-byte value (most of them) costs a compare, a
	// two-byte one two, longer ones uvAtSlow; x is xCut once one is cut
	// short.
	x := 0
	defer func() { st.b, st.pt, st.ppc, st.preq = b[min(x, len(b)):], pt, ppc, preq }()
	var u, s uint64
	for end := st.i + k; st.i < end; st.i++ {
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		t0 := pt + uint64(unzz(u))
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		pt = t0 + u
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			s, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			s, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			s, x = uvAtSlow(b, x)
		}
		evs = evs[:len(evs)+1]
		v := &evs[len(evs)-1]
		if s-1 < uint64(len(dict)) {
			*v = dict[s-1]
		} else if x > len(b) {
			return evs[:len(evs)-1], fmt.Errorf("event %d of %d: %v", st.i, n, errShort)
		} else if s != 0 {
			return evs[:len(evs)-1], fmt.Errorf("event %d of %d: slot %d of a dictionary of %d", st.i, n, s, len(dict))
		} else {
			var err error
			if x, err = st.shape(v, b, x, &ppc); err != nil {
				return evs[:len(evs)-1], fmt.Errorf("event %d of %d: %v", st.i, n, err)
			}
			dict = st.dict
		}
		if v.Req != 0 {
			if uint(x) < uint(len(b)) && b[x] < 0x80 {
				u, x = uint64(b[x]), x+1
			} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
				u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
			} else {
				u, x = uvAtSlow(b, x)
			}
			preq += uint64(unzz(u))
			v.Req = preq
		}
		v.T0, v.T1 = t0, pt
		if x > len(b) {
			return evs[:len(evs)-1], fmt.Errorf("event %d of %d: %v", st.i, n, errShort)
		}
	}
	return evs, nil
}

// shape reads a shape written in full at b[x:] (format version 6) into
// v, its Req 1 when its events hold a request, and puts it in the
// dictionary unless that is full; *ppc is the previous full shape's
// callsite. It returns the offset after the shape.
func (st *evDecoder) shape(v *Event, b []byte, x int, ppc *uint64) (int, error) {
	if len(b)-x < 2 {
		return xCut, errShort
	}
	kind, flags := b[x], b[x+1]
	x += 2
	if kind < KCall || kind > KIo {
		return xCut, fmt.Errorf("unknown kind %d", kind)
	}
	*v = Event{Kind: kind, Flags: flags, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	var u uint64
	u, x = uvAt(b, x)
	if u > math.MaxUint16 && x <= len(b) {
		return xCut, fmt.Errorf("function %d exceeds %d", u, math.MaxUint16)
	}
	v.Fn = uint16(u)
	u, x = uvAt(b, x)
	v.Comm = int32(unzz(u))
	u, x = uvAt(b, x)
	*ppc += uint64(unzz(u))
	v.PC = *ppc
	if v.PC&PathTag != 0 {
		st.tagged = true
	}
	x = v.msgFields(b, x)
	if x > len(b) {
		return xCut, errShort
	}
	if v.hasReq() {
		v.Req = 1
	}
	if len(st.dict) < maxShapes {
		st.dict = append(st.dict, *v)
	}
	return x, nil
}

// nextV5 is next for blocks of format versions 2 to 5.
func (st *evDecoder) nextV5(evs []Event, k int) ([]Event, error) {
	k = min(k, st.left())
	evs = slices.Grow(evs, k) // k <= len(raw)/minEventV5: what the data holds
	b, pt, ppc, n := st.b, st.pt, st.ppc, st.n
	// Varints inline: a one-byte value (most of them) costs a compare, a
	// two-byte one two, longer ones uvAtSlow; x is xCut once one is cut
	// short.
	x := 0
	defer func() { st.b, st.pt, st.ppc = b[min(x, len(b)):], pt, ppc }()
	var u uint64
	for end := st.i + k; st.i < end; st.i++ {
		i := st.i
		if len(b)-x < 2 {
			return evs, fmt.Errorf("event %d of %d: %v", i, n, errShort)
		}
		kind, flags := b[x], b[x+1]
		x += 2
		if kind < KCall || kind > KIo {
			return evs, fmt.Errorf("event %d of %d: unknown kind %d", i, n, kind)
		}
		evs = evs[:len(evs)+1]
		v := &evs[len(evs)-1]
		*v = Event{Kind: kind, Flags: flags, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		var fn uint64
		x0 := x
		if uint(x0) < uint(len(b)) && b[x0] < 0x80 {
			fn, x0 = uint64(b[x0]), x0+1
		} else if uint(x0)+1 < uint(len(b)) && b[x0+1] < 0x80 {
			fn, x0 = uint64(b[x0]&0x7f)|uint64(b[x0+1])<<7, x0+2
		} else {
			fn, x0 = uvAtSlow(b, x0)
		}
		if fn > math.MaxUint16 && x0 <= len(b) {
			return evs[:len(evs)-1], fmt.Errorf("event %d of %d: count %d exceeds %d", i, n, fn, math.MaxUint16)
		}
		v.Fn = uint16(fn)
		x = x0
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		v.Comm = int32(unzz(u))
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		v.T0 = pt + uint64(unzz(u))
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		v.T1 = v.T0 + u
		if uint(x) < uint(len(b)) && b[x] < 0x80 {
			u, x = uint64(b[x]), x+1
		} else if uint(x)+1 < uint(len(b)) && b[x+1] < 0x80 {
			u, x = uint64(b[x]&0x7f)|uint64(b[x+1])<<7, x+2
		} else {
			u, x = uvAtSlow(b, x)
		}
		v.PC = ppc + uint64(unzz(u))
		pt, ppc = v.T1, v.PC
		if v.hasReq() {
			v.Req, x = uvAt(b, x)
		}
		x = v.msgFields(b, x)
		if x > len(b) {
			return evs[:len(evs)-1], fmt.Errorf("event %d of %d: %v", i, n, errShort)
		}
	}
	return evs, nil
}

// msgFields reads the send and receive fields the flags announce, from
// b at x, in both versions' layout (each field a zigzag varint); it
// returns the offset after them (past len(b) when cut short).
func (v *Event) msgFields(b []byte, x int) int {
	var u uint64
	if v.sendFields() {
		u, x = uvAt(b, x)
		v.SPeer = int32(unzz(u))
		u, x = uvAt(b, x)
		v.STag = int32(unzz(u))
		u, x = uvAt(b, x)
		v.SBytes = unzz(u)
	}
	if v.recvFields() {
		u, x = uvAt(b, x)
		v.RPeer = int32(unzz(u))
		u, x = uvAt(b, x)
		v.RTag = int32(unzz(u))
		u, x = uvAt(b, x)
		v.RBytes = unzz(u)
	}
	return x
}

// uvAt reads the varint at b[x:] and returns it and the offset after it;
// x beyond b (xCut: an earlier varint cut short) returns xCut, as does a
// varint cut short here.
func uvAt(b []byte, x int) (uint64, int) {
	if uint(x) < uint(len(b)) && b[x] < 0x80 {
		return uint64(b[x]), x + 1
	}
	return uvAtSlow(b, x)
}

// uvAtSlow reads the varint at b[x:] of two bytes or more (next has the
// shorter cases inline) and returns it and the offset after it; x beyond
// b (xCut: an earlier varint cut short) returns xCut, as does a varint cut
// short here.
func uvAtSlow(b []byte, x int) (uint64, int) {
	if x < 0 || x > len(b) {
		return 0, xCut
	}
	if x+1 < len(b) && b[x+1] < 0x80 { // two bytes (b[x] >= 0x80 here)
		return uint64(b[x]&0x7f) | uint64(b[x+1])<<7, x + 2
	}
	if x+3 < len(b) { // three or four bytes (request ids, callsite deltas)
		if c := b[x+2]; c < 0x80 {
			return uint64(b[x]&0x7f) | uint64(b[x+1]&0x7f)<<7 | uint64(c)<<14, x + 3
		}
		if d := b[x+3]; d < 0x80 {
			return uint64(b[x]&0x7f) | uint64(b[x+1]&0x7f)<<7 | uint64(b[x+2]&0x7f)<<14 | uint64(d)<<21, x + 4
		}
	}
	v, k := binary.Uvarint(b[x:])
	if k <= 0 {
		return 0, xCut
	}
	return v, x + k
}

// unzz undoes the zigzag coding of a signed varint.
func unzz(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// firstT0 returns the first event's t0 from the first bytes of an events
// block's decoded stream, of format version ver (0: the current one).
func firstT0(raw []byte, ver int) (uint64, error) {
	b, k := raw, 1 // version 6: t0 first, a delta from 0
	if eventsV5(ver) {
		// kind, flags, function, communicator, then t0
		if len(b) < 2 {
			return 0, errShort
		}
		b, k = b[2:], 3
	}
	var t uint64
	for range k {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errShort
		}
		b = b[n:]
		t = uint64(unzz(v))
	}
	return t, nil
}

// ---- blocks ----

// BlockWriter writes blocks to a file.
type BlockWriter struct {
	w   *bufio.Writer
	hdr []byte
	off int64 // bytes written, with Skip
}

// NewBlockWriter writes the magic and returns a writer.
func NewBlockWriter(w io.Writer) (*BlockWriter, error) {
	return newBlockWriterVersion(w, Version)
}

// newBlockWriterVersion is NewBlockWriter for a file of format version
// ver (the version 5 synthetic traces, the tests' older files).
func newBlockWriterVersion(w io.Writer, ver int) (*BlockWriter, error) {
	bw := &BlockWriter{w: bufio.NewWriterSize(w, 1<<16)}
	n, err := bw.w.WriteString(Magic[:len(Magic)-1] + string(rune(ver)))
	bw.off = int64(n)
	return bw, err
}

// Offset is the file offset of the next block (buffered blocks included).
func (bw *BlockWriter) Offset() int64 { return bw.off }

// Skip counts n bytes written to the file past the writer (a direct write
// at Offset; the caller moves the file's position).
func (bw *BlockWriter) Skip(n int64) { bw.off += n }

// MinPad is the size of the smallest padding block.
const MinPad = 7

// PadBlock fills b (at least MinPad and at most 16,390 bytes) with one
// padding block of exactly len(b) bytes: kind, a two-byte length, zeros
// and the CRC.
func PadBlock(b []byte) {
	ln := len(b) - MinPad
	b[0] = BPad
	b[1] = byte(ln&0x7f) | 0x80
	b[2] = byte(ln >> 7)
	z := b[3 : 3+ln]
	clear(z)
	binary.LittleEndian.PutUint32(b[3+ln:], BlockCRC(BPad, z))
}

// Align writes a padding block so that the next block starts at a multiple
// of align bytes, and flushes.
func (bw *BlockWriter) Align(align int64) error {
	if r := -bw.off & (align - 1); r != 0 {
		if r < MinPad {
			r += align
		}
		p := make([]byte, r)
		PadBlock(p)
		bw.w.Write(p)
		bw.off += r
	}
	return bw.w.Flush()
}

// Block writes one block: kind, uvarint length, payload, CRC-32 (IEEE) of
// kind and payload, little-endian. The payload is the concatenation of
// parts (so a large buffer is written without being copied).
func (bw *BlockWriter) Block(kind byte, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	bw.hdr = AppendBlockHead(bw.hdr[:0], kind, n)
	bw.w.Write(bw.hdr)
	for _, p := range parts {
		bw.w.Write(p)
	}
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], BlockCRC(kind, parts...))
	_, err := bw.w.Write(c[:])
	bw.off += int64(len(bw.hdr) + n + 4)
	return err
}

// AppendBlockHead appends the head of a block: its kind and the uvarint
// length n of its payload.
func AppendBlockHead(dst []byte, kind byte, n int) []byte {
	return binary.AppendUvarint(append(dst, kind), uint64(n))
}

// BlockCRC is the CRC-32 (IEEE) that ends a block: of its kind and its
// payload, the concatenation of parts.
func BlockCRC(kind byte, parts ...[]byte) uint32 {
	crc := crc32.ChecksumIEEE([]byte{kind})
	for _, p := range parts {
		crc = crc32.Update(crc, crc32.IEEETable, p)
	}
	return crc
}

// Flush flushes buffered blocks to the file.
func (bw *BlockWriter) Flush() error { return bw.w.Flush() }

// maxBlock bounds a block's payload.
const maxBlock = 1 << 30

// CorruptError reports a damaged file: where and what.
type CorruptError struct {
	File   string
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: corrupt trace at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// TruncatedError reports a file that ends inside a block: everything before
// Offset was read; Lost bytes after it were not.
type TruncatedError struct {
	File   string
	Offset int64
	Lost   int64
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("%s: truncated trace: last %d bytes (from offset %d) are an incomplete block and were ignored", e.File, e.Lost, e.Offset)
}

// BlockReader reads blocks.
type BlockReader struct {
	r     *bufio.Reader
	name  string
	off   int64
	start int64 // of the block Next returned last
	buf   []byte
	ver   int
}

// NewBlockReader checks the magic.
func NewBlockReader(r io.Reader, name string) (*BlockReader, error) {
	br := &BlockReader{r: bufio.NewReaderSize(r, 1<<16), name: name}
	var m [len(Magic)]byte
	n, err := io.ReadFull(br.r, m[:])
	if err != nil {
		if n == 0 && err == io.EOF {
			return nil, &CorruptError{name, 0, errors.New("empty file")}
		}
		if string(m[:n]) == Magic[:n] {
			return nil, &TruncatedError{name, 0, int64(n)}
		}
	}
	if n < len(Magic) || string(m[:7]) != Magic[:7] || m[7] < 2 || m[7] > Magic[7] {
		if string(m[:7]) == Magic[:7] {
			return nil, &CorruptError{name, 7, fmt.Errorf("trace format version %d not supported (this mpiscope reads 2 to %d)", m[7], Magic[7])}
		}
		return nil, &CorruptError{name, 0, errors.New("not an mpiscope trace (bad magic)")}
	}
	br.off = int64(len(Magic))
	br.ver = int(m[7])
	return br, nil
}

// Version is the file's format version (2 to Version): how its events
// blocks are encoded.
func (br *BlockReader) Version() int { return br.ver }

// Offset is the offset of the next block.
func (br *BlockReader) Offset() int64 { return br.off }

// Start is the offset of the block Next returned last.
func (br *BlockReader) Start() int64 { return br.start }

// Next returns the next block, skipping padding. At a clean end it returns
// io.EOF; a block cut short gives *TruncatedError, a damaged one
// *CorruptError. The payload is valid until the next call.
func (br *BlockReader) Next() (byte, []byte, error) {
	for {
		br.start = br.off
		kind, p, err := br.next()
		if err != nil || kind != BPad {
			return kind, p, err
		}
	}
}

func (br *BlockReader) next() (byte, []byte, error) {
	start := br.off
	kind, err := br.r.ReadByte()
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, &CorruptError{br.name, start, err}
	}
	read := int64(1)
	trunc := func() error {
		// Count what is left to tell how much was lost.
		rest, _ := io.Copy(io.Discard, br.r)
		return &TruncatedError{br.name, start, read + rest}
	}
	var ln uint64
	var shift uint
	for i := 0; ; i++ {
		b, err := br.r.ReadByte()
		if err == io.EOF {
			return 0, nil, trunc()
		}
		read++
		if i >= binary.MaxVarintLen64 {
			return 0, nil, &CorruptError{br.name, start, errors.New("bad block length")}
		}
		ln |= uint64(b&0x7f) << shift
		shift += 7
		if b < 0x80 {
			break
		}
	}
	if ln > maxBlock {
		return 0, nil, &CorruptError{br.name, start, fmt.Errorf("block length %d too large", ln)}
	}
	if uint64(cap(br.buf)) < ln+4 {
		// Grow in steps, so a bogus length in a short file costs no more
		// than the file's size.
		br.buf = make([]byte, 0, min(ln+4, 1<<20))
	}
	br.buf = br.buf[:0]
	need := int(ln + 4)
	for len(br.buf) < need {
		if len(br.buf) == cap(br.buf) {
			nb := make([]byte, len(br.buf), min(2*cap(br.buf)+1, need))
			copy(nb, br.buf)
			br.buf = nb
		}
		n, err := br.r.Read(br.buf[len(br.buf):min(cap(br.buf), need)])
		br.buf = br.buf[:len(br.buf)+n]
		read += int64(n)
		if err == io.EOF && len(br.buf) < need {
			return 0, nil, &TruncatedError{br.name, start, read}
		}
		if err != nil && err != io.EOF {
			return 0, nil, &CorruptError{br.name, start, err}
		}
	}
	payload := br.buf[:ln]
	want := binary.LittleEndian.Uint32(br.buf[ln:])
	if got := crc32.Update(crc32.ChecksumIEEE([]byte{kind}), crc32.IEEETable, payload); got != want {
		return 0, nil, &CorruptError{br.name, start, fmt.Errorf("checksum mismatch in block %q", kind)}
	}
	br.off += read
	return kind, payload, nil
}
