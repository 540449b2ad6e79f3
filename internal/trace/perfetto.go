package trace

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"strconv"
)

// PerfettoWriter is a Visitor writing the Chrome Trace Event JSON format
// that Perfetto (ui.perfetto.dev) and chrome://tracing open: one process
// per rank (pid = rank), one track per thread (tid = thread index), MPI
// calls as complete ("X") slices with their arguments, regions as "B"/"E"
// slices, user events as instant events, and each point-to-point message
// as a flow ("s" at the send, "f" at the matching receive, id derived from
// the channel and the message's sequence number on it, so both ends compute
// it without seeing each other).
type PerfettoWriter struct {
	w   io.Writer
	err error  // the first write error: later writes are dropped
	out []byte // written to w when it holds limit bytes
	n   int
	// dropSep: every record starts with its separator (",\n"); the
	// sequential writer drops the first one, after the document's head,
	// at its first flush (ConvertPerfetto drops it in its output).
	dropSep bool
	// chunks: ConvertPerfetto's rank writer hands p.out over in chunks
	// (perfetto_chunks.go) instead of writing to w; each chunk starts
	// with its first record's separator.
	chunks *chunkSink
	limit  int // p.out is flushed when it holds this many bytes
	// rec is where the last record begun starts in p.out; carry holds a
	// record that moves to the next chunk (perfetto_chunks.go).
	rec     int
	carry   []byte
	named   map[[2]int]bool
	q       map[string]string
	pq      map[**Source]string // callctx.go
	Records uint64
	// Quoted names cached by what the walk hands over: the function by
	// its id (checked against its name: ids are per rank), the
	// communicator and the callsite by pointer (the walk keeps one object
	// each).
	fnName, fnQ []string
	lastComm    *GComm
	lastCommQ   lit // `,"args":{"comm":"NAME"`
	src         map[*Source][2]string
	sites       [256]site
	tails       [3][256]tail // by kind, then a direct-mapped cache by peer (tail)
	lastTrack   [2]int
	// heads[FnID]: a slice's bytes up to its "ts" value for the track
	// and function it was made for (perfetto_fast.go); whereB is
	// `","pid":R,"tid":T,"ts":` of lastTrack.
	heads  []head
	whereB []byte
	whereL lit // whereB
	litTmp lit // a head not cached
	// The last time's milliseconds (ts): their value, their digits
	// (little-endian, the first in the lowest byte) and how many.
	tsMs uint64
	tsD  [2]uint64
	tsN  int
}

const (
	perfettoHead = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
	perfettoTail = "\n]}\n"
	flushAt      = 1 << 16
)

// NewPerfettoWriter starts the JSON array.
func NewPerfettoWriter(w io.Writer) *PerfettoWriter {
	p := newPerfettoFragment(w)
	p.out = append(p.out, perfettoHead...)
	p.dropSep = true
	return p
}

// newPerfettoFragment writes events each after a separator (",\n"),
// without the document's head and tail (one rank's part:
// ConvertPerfetto).
func newPerfettoFragment(w io.Writer) *PerfettoWriter {
	return &PerfettoWriter{w: w, limit: flushAt, out: make([]byte, 0, flushAt+4096), named: map[[2]int]bool{}, q: map[string]string{},
		src: map[*Source][2]string{}}
}

// jq quotes s as a JSON string.
func jq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// begin starts a record in p.out: the separator, counted.
func (p *PerfettoWriter) begin() {
	p.rec = len(p.out)
	p.out = append(p.out, ",\n"...)
	p.n++
	p.Records++
}

// openLit starts a record in p.out with l, its start after the
// separator (",\n"), counted.
func (p *PerfettoWriter) openLit(l *lit) []byte {
	p.rec = len(p.out)
	p.n++
	p.Records++
	return appendLit(p.out, l)
}

// appendFrom appends l without its first k bytes (the comma before a
// first argument).
//
//go:noinline
func appendFrom(b []byte, l *lit, k int) []byte {
	return append(b, l.String()[k:]...)
}

// end ends a record: p.out goes to the writer once it holds p.limit
// bytes (a chunk: see full).
func (p *PerfettoWriter) end() {
	if len(p.out) >= p.limit {
		p.full()
	}
}

// flush writes p.out (or hands it over as a chunk).
func (p *PerfettoWriter) flush() error {
	if p.chunks != nil {
		return p.handOver()
	}
	if p.dropSep {
		// The first record's separator, after the head: once per
		// writer, a copy of what p.out holds.
		if h := len(perfettoHead); p.n > 0 && len(p.out) >= h+2 {
			p.out = append(p.out[:h], p.out[h+2:]...)
		}
		p.dropSep = false
	}
	if p.err == nil && len(p.out) > 0 {
		_, p.err = p.w.Write(p.out)
	}
	p.out = p.out[:0]
	return p.err
}

func (p *PerfettoWriter) emit(b []byte) {
	p.begin()
	p.out = append(p.out, b...)
	p.end()
}

func (p *PerfettoWriter) track(rank, thread int) {
	k := [2]int{rank, thread}
	if p.lastTrack == k && p.n > 0 {
		return
	}
	p.lastTrack = k
	p.whereB = appendWhere(p.whereB[:0], rank, thread)
	p.whereL = makeLit(string(p.whereB))
	if p.named[k] {
		return
	}
	p.named[k] = true
	if !p.named[[2]int{rank, -1}] {
		p.named[[2]int{rank, -1}] = true
		p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"process_name","pid":%d,"tid":0,"args":{"name":"rank %d"}}`, rank, rank)))
		p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"process_sort_index","pid":%d,"tid":0,"args":{"sort_index":%d}}`, rank, rank)))
	}
	p.emit([]byte(fmt.Sprintf(`{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":"thread %d"}}`, rank, thread, thread)))
}

func commName(g *GComm) string {
	if g == nil {
		return ""
	}
	if g.Key == "world" {
		return "MPI_COMM_WORLD"
	}
	return g.Key
}

func (p *PerfettoWriter) flow(ph byte, c *Call, m *Msg, t float64) {
	if m.Flow == 0 {
		return
	}
	h := &flowS
	if ph == 'f' {
		h = &flowF
	}
	b := p.openLit(h)
	b = appendHex16(b, m.Flow)
	b = appendLit(b, &p.whereL)
	b = p.ts(b, t)
	if ph == 'f' {
		b = append(b, `,"bp":"e"`...)
	}
	p.out = append(b, '}')
	p.end()
}

// flowS and flowF start a flow record ("s", "f"), its separator first,
// up to its id's digits.
var (
	flowS = makeLit(",\n" + `{"ph":"s","cat":"msg","name":"message","id":"0x`)
	flowF = makeLit(",\n" + `{"ph":"f","cat":"msg","name":"message","id":"0x`)
)

// appendHex16 appends v in 16 lower-case hexadecimal digits.
func appendHex16(b []byte, v uint64) []byte {
	b = room(b, 16)
	n := len(b)
	o := b[:n+16]
	binary.LittleEndian.PutUint64(o[n:], hex8(uint32(v>>32)))
	binary.LittleEndian.PutUint64(o[n+8:], hex8(uint32(v)))
	return o
}

// hex8 returns the 8 hexadecimal digits of x, the first in the lowest
// byte.
func hex8(x uint32) uint64 {
	// One nibble per byte, the least significant in the lowest byte,
	// then reversed.
	v := uint64(x)
	v = (v | v<<16) & 0x0000ffff_0000ffff
	v = (v | v<<8) & 0x00ff00ff_00ff00ff
	v = (v | v<<4) & 0x0f0f0f0f_0f0f0f0f
	v = bits.ReverseBytes64(v)
	// 'a'-'0'-10 more for the nibbles from 10: their byte + 6 carries
	// into bit 4.
	letters := (v + 0x06060606_06060606) >> 4 & 0x01010101_01010101
	return v + 0x30303030_30303030 + letters*('a'-'0'-10)
}

// quote returns s as a JSON string, cached (function and communicator
// names repeat on every event).
func (p *PerfettoWriter) quote(s string) string {
	q, ok := p.q[s]
	if !ok {
		q = jq(s)
		p.q[s] = q
	}
	return q
}

// args appends the arguments of a slice: "key":value pairs.
type args struct {
	b   []byte
	sep bool
}

func (a *args) key(k string) {
	if a.sep {
		a.b = append(a.b, ',')
	}
	a.sep = true
	a.b = append(a.b, '"')
	a.b = append(a.b, k...)
	a.b = append(a.b, `":`...)
}

// keyN starts the argument "<k>_<i>".
func (a *args) keyN(k string, i int) {
	if a.sep {
		a.b = append(a.b, ',')
	}
	a.sep = true
	a.b = append(a.b, '"')
	a.b = append(a.b, k...)
	a.b = append(a.b, '_')
	a.b = appendInt(a.b, int64(i))
	a.b = append(a.b, `":`...)
}

// pre starts an argument given as `,"<k>":` (the comma dropped before
// the first).
func (a *args) pre(kc string) {
	if a.sep {
		a.b = append(a.b, kc...)
	} else {
		a.b = append(a.b, kc[1:]...)
	}
	a.sep = true
}

func (a *args) intK(kc string, v int64) {
	a.pre(kc)
	a.b = appendInt(a.b, v)
}

func (a *args) quotedK(kc, q string) {
	a.pre(kc)
	a.b = append(a.b, q...)
}

func (a *args) int(k string, v int64) {
	a.key(k)
	a.b = appendInt(a.b, v)
}

func (a *args) quoted(k, q string) {
	a.key(k)
	a.b = append(a.b, q...)
}

// msgKeys returns `,"<what>_<i>":"request ` for i < 16 (args.msgs).
func msgKeys(what string) []lit {
	var k []lit
	for i := 0; i < 16; i++ {
		k = append(k, makeLit(`,"`+what+"_"+strconv.Itoa(i)+`":"request `))
	}
	return k
}

var (
	keysStartedSend   = msgKeys("started_send")
	keysStartedRecv   = msgKeys("started_recv")
	keysCompletedRecv = msgKeys("completed_recv")
	keysCompletedSend = msgKeys("completed_send")
)

// msgs appends one argument per message: "<what>_<i>": "request R
// to/from P tag T[ B bytes]", what follows R from p's cache (tail).
func (a *args) msgs(p *PerfettoWriter, keys []lit, what string, kind int, ms []Msg) {
	for i := range ms {
		m := &ms[i]
		if i < len(keys) {
			// a.pre for a lit
			if a.sep {
				a.b = appendLit(a.b, &keys[i])
			} else {
				a.b, a.sep = appendFrom(a.b, &keys[i], 1), true
			}
		} else {
			a.keyN(what, i)
			a.b = append(a.b, `"request `...)
		}
		a.b = appendUint(a.b, m.Req)
		a.b = appendLit(a.b, p.tail(kind, m))
	}
}

// The kinds of a message's description after its request id (tail).
const (
	tailTo       = iota // ` to P tag T B bytes"`
	tailFrom            // ` from P tag T B bytes"`
	tailFromPost        // ` from P tag T"` (a posted receive: no size yet)
)

// tail is a message's description after its request id, the closing
// quote included, for its peer, tag and size.
type tail struct {
	peer, tag int
	bytes     int64
	l         lit
}

// tail returns m's description after its request id, cached per kind in
// a direct-mapped table of 256 entries keyed by the peer (a rank's
// messages go to a few peers with a few tags and sizes, mostly one each;
// the table's size does not depend on the job's ranks): an entry holds the
// last description made for a peer of its slot.
func (p *PerfettoWriter) tail(kind int, m *Msg) *lit {
	nb := m.Bytes
	if kind == tailFromPost {
		nb = 0
	}
	e := &p.tails[kind][uint32(m.Peer)*0x9e3779b1>>24]
	if e.l.n != 0 && e.peer == m.Peer && e.tag == m.Tag && e.bytes == nb {
		return &e.l
	}
	b := []byte(" to ")
	if kind != tailTo {
		b = []byte(" from ")
	}
	b = appendInt(b, int64(m.Peer))
	b = append(b, " tag "...)
	b = appendInt(b, int64(m.Tag))
	if kind != tailFromPost {
		b = append(b, ' ')
		b = appendInt(b, m.Bytes)
		b = append(b, " bytes"...)
	}
	b = append(b, '"')
	*e = tail{peer: m.Peer, tag: m.Tag, bytes: nb, l: makeLit(string(b))}
	return &e.l
}

// pre appends an argument's start given as `,"<k>":`, the comma dropped
// before the first argument (sep false).
func pre(b []byte, sep bool, kc string) []byte {
	if sep {
		return append(b, kc...)
	}
	return append(b, kc[1:]...)
}

// Call implements Visitor.
func (p *PerfettoWriter) Call(c *Call) error {
	if c.Rank != p.lastTrack[0] || c.Thread != p.lastTrack[1] || p.n == 0 {
		p.track(c.Rank, c.Thread)
	}
	b := p.openLit(p.head(c))
	b = p.ts(b, c.T0)
	b = append(b, `,"dur":`...)
	b = appendUs(b, c.T1-c.T0)
	// The arguments most calls have are appended here, the comma after
	// the first known where it is written; the others through args.
	sep := c.Comm != nil
	if sep {
		if c.Comm != p.lastComm {
			p.lastComm, p.lastCommQ = c.Comm, makeLit(`,"args":{"comm":`+p.quote(commName(c.Comm)))
		}
		b = appendLit(b, &p.lastCommQ)
	} else {
		b = append(b, `,"args":{`...)
	}
	if m := c.Send; m != nil {
		b = pre(b, sep, `,"dest":`)
		b = appendInt(b, int64(m.Peer))
		b = append(b, `,"tag":`...)
		b = appendInt(b, int64(m.Tag))
		b = append(b, `,"bytes":`...)
		b = appendInt(b, m.Bytes)
		if m.Req != 0 {
			b = append(b, `,"request":`...)
			b = appendInt(b, int64(m.Req))
		}
		sep = true
	}
	if m := c.Recv; m != nil {
		b = pre(b, sep, `,"source":`)
		b = appendInt(b, int64(m.Peer))
		b = append(b, `,"recv_tag":`...)
		b = appendInt(b, int64(m.Tag))
		b = append(b, `,"recv_bytes":`...)
		b = appendInt(b, m.Bytes)
		sep = true
	}
	if m := c.RecvPost; m != nil {
		b = pre(b, sep, `,"source":`)
		b = appendInt(b, int64(m.Peer))
		b = append(b, `,"tag":`...)
		b = appendInt(b, int64(m.Tag))
		b = append(b, `,"request":`...)
		b = appendInt(b, int64(m.Req))
		sep = true
	}
	a := args{b: b, sep: sep}
	if len(c.StartSend) > 0 {
		a.msgs(p, keysStartedSend, "started_send", tailTo, c.StartSend)
	}
	if len(c.StartRecv) > 0 {
		a.msgs(p, keysStartedRecv, "started_recv", tailFromPost, c.StartRecv)
	}
	if len(c.RecvDone) > 0 {
		a.msgs(p, keysCompletedRecv, "completed_recv", tailFrom, c.RecvDone)
	}
	if len(c.SendDone) > 0 {
		a.msgs(p, keysCompletedSend, "completed_send", tailTo, c.SendDone)
	}
	if c.Coll {
		a.b = pre(a.b, a.sep, `,"bytes":`)
		a.b = appendInt(a.b, c.CollBytes)
		a.sep = true
		if c.Root >= 0 {
			a.b = append(a.b, `,"root":`...)
			a.b = appendInt(a.b, int64(c.Root))
		}
		if c.CollReq != 0 {
			a.b = append(a.b, `,"request":`...)
			a.b = appendInt(a.b, int64(c.CollReq))
		}
	}
	if len(c.StartColl)|len(c.CollDone)|len(c.Cancelled)|len(c.RmaDone)|len(c.IoDone) != 0 || c.Rma != nil || c.Io != nil {
		p.rareArgs(&a, c)
	}
	if s := p.site(c); a.sep {
		a.b = appendLit(a.b, s)
	} else {
		a.b, a.sep = appendFrom(a.b, s, 1), true
	}
	if c.Src != nil && len(c.Path) > 0 {
		a.quotedK(`,"path":`, p.pathArg(c.Path))
	}
	p.out = append(a.b, `}}`...)
	p.end()
	// Flow ends bind to the enclosing slice: place them inside it.
	mid := c.T0 + (c.T1-c.T0)/2
	if c.Send != nil {
		p.flow('s', c, c.Send, mid)
	}
	for i := range c.StartSend {
		p.flow('s', c, &c.StartSend[i], mid)
	}
	if c.Recv != nil {
		p.flow('f', c, c.Recv, mid)
	}
	for i := range c.RecvDone {
		p.flow('f', c, &c.RecvDone[i], mid)
	}
	return p.err
}

// rareArgs appends the arguments of nonblocking collectives, one-sided
// and MPI-IO calls, cancelled requests (most calls have none: one test
// in Call).
func (p *PerfettoWriter) rareArgs(a *args, c *Call) {
	for i, x := range c.StartColl {
		a.quoted("started_coll_"+strconv.Itoa(i), jq(collDesc(&x)))
	}
	for i, x := range c.CollDone {
		a.quoted("completed_coll_"+strconv.Itoa(i), jq(collDesc(&x)))
	}
	if r := c.Rma; r != nil {
		a.quotedK(`,"window":`, p.quote(winName(r.Win)))
		if r.Target >= 0 {
			a.intK(`,"target":`, int64(r.Target))
		}
		if r.SBytes > 0 && r.Kind.IsComm() {
			a.intK(`,"bytes":`, r.SBytes)
		}
		if r.RBytes > 0 && r.Kind.IsComm() {
			a.intK(`,"recv_bytes":`, r.RBytes)
		}
		if r.ID != 0 {
			a.intK(`,"rma_op":`, int64(r.ID))
		}
		if r.Kind == RmaLock {
			a.quotedK(`,"lock":`, map[bool]string{true: `"shared"`, false: `"exclusive"`}[r.Shared])
		}
		if r.Kind == RmaPost || r.Kind == RmaStart || r.Kind == RmaComplete || r.Kind == RmaWait {
			a.quotedK(`,"group":`, jq(fmt.Sprint(r.Group)))
		}
	}
	for i, id := range c.Cancelled {
		a.int("cancelled_request_"+strconv.Itoa(i), int64(id))
	}
	for i, x := range c.RmaDone {
		a.int("completed_rma_op_"+strconv.Itoa(i), int64(x.ID))
	}
	if x := c.Io; x != nil {
		a.quotedK(`,"file":`, p.quote(x.File.Name))
		if x.Kind == IoRead || x.Kind == IoWrite {
			if !x.End {
				a.intK(`,"bytes":`, x.Bytes)
			}
			if x.ID != 0 {
				a.intK(`,"io_op":`, int64(x.ID))
			}
		}
	}
	for i, x := range c.IoDone {
		a.quoted("completed_io_op_"+strconv.Itoa(i), jq(fmt.Sprintf("%d: %d bytes", x.ID, x.Bytes)))
	}
}

// fnQuote is the call's function name as a JSON string.
func (p *PerfettoWriter) fnQuote(c *Call) string {
	if c.FnID >= 0 && c.FnID < len(p.fnName) && p.fnName[c.FnID] == c.Fn {
		return p.fnQ[c.FnID]
	}
	q := p.quote(c.Fn)
	if c.FnID >= 0 && c.FnID < 1<<16 {
		for len(p.fnName) <= c.FnID {
			p.fnName, p.fnQ = append(p.fnName, ""), append(p.fnQ, "")
		}
		p.fnName[c.FnID], p.fnQ[c.FnID] = c.Fn, q
	}
	return q
}

// collDesc describes a nonblocking or persistent collective.
func collDesc(x *CollOp) string {
	s := fmt.Sprintf("request %d %s on %s, %d bytes", x.Req, x.Fn, commName(x.Comm), x.Bytes)
	if x.Root >= 0 {
		s += fmt.Sprintf(", root %d", x.Root)
	}
	return s
}

// Region implements Visitor.
func (p *PerfettoWriter) Region(rank, thread int, enter bool, name string, t float64) error {
	p.track(rank, thread)
	ph := "E"
	if enter {
		ph = "B"
	}
	p.begin()
	b := append(p.out, `{"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","cat":"region","name":`...)
	b = append(b, p.quote(name)...)
	b = append(b[:len(b)-1], p.whereB...) // whereB starts after a quote
	b = p.ts(b, t)
	p.out = append(b, '}')
	p.end()
	return p.err
}

// Mark implements Visitor.
func (p *PerfettoWriter) Mark(rank, thread int, text string, t float64) error {
	p.track(rank, thread)
	p.begin()
	b := append(p.out, `{"ph":"i","s":"t","cat":"event","name":`...)
	b = append(b, p.quote(text)...)
	b = append(b[:len(b)-1], p.whereB...) // whereB starts after a quote
	b = p.ts(b, t)
	p.out = append(b, '}')
	p.end()
	return p.err
}

// Close ends the JSON document.
func (p *PerfettoWriter) Close() error {
	p.out = append(p.out, perfettoTail...)
	return p.flush()
}
