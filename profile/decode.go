package profile

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
)

// MaxEncodedSize is the largest encoding Decode accepts (1 GiB).
const MaxEncodedSize = 1 << 30

// decodeLimit is MaxEncodedSize, lowered by tests.
var decodeLimit int64 = MaxEncodedSize

// FormatError reports a corrupt, truncated or otherwise undecodable encoding.
// Offset is the byte offset in the input at which the problem was detected.
type FormatError struct {
	File   string
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	s := "offset " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
	if e.File != "" {
		s = e.File + ": " + s
	}
	return s
}

// Decode reads a whole encoded profile from r. name is used in errors (for
// example the file name). Malformed input yields a *FormatError; input larger
// than MaxEncodedSize is rejected without being read entirely.
func Decode(r io.Reader, name string) (*Profile, error) {
	data, err := io.ReadAll(io.LimitReader(r, decodeLimit+1))
	if err != nil {
		if name != "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, err
	}
	if int64(len(data)) > decodeLimit {
		return nil, &FormatError{File: name, Offset: decodeLimit,
			Msg: fmt.Sprintf("profile larger than the %d byte limit", decodeLimit)}
	}
	return Unmarshal(data, name)
}

// Unmarshal decodes an encoded profile. name is used in errors. Any malformed
// input yields a *FormatError; Unmarshal never panics and allocates memory
// proportional to len(data) at most.
func Unmarshal(data []byte, name string) (*Profile, error) {
	d := &decoder{data: data, end: len(data), file: name, ctx: "header"}
	p := &Profile{}
	if !d.profile(p) {
		return nil, d.err
	}
	return p, nil
}

// reusingDecoder decodes many profiles in turn with few allocations: each
// decode overwrites the previous result, reusing its slices, and strings
// equal to the previous input's string at the same string-table position are
// shared instead of allocated again (rank files of one job have nearly the
// same string table). Not safe for concurrent use.
type reusingDecoder struct {
	d decoder
	p Profile
}

// unmarshal decodes data like Unmarshal. The result is valid until the next
// call: callers must copy what they keep, except strings and the Meta slices
// (Command, Hosts, Settings), which are never reused.
func (r *reusingDecoder) unmarshal(data []byte, name string) (*Profile, error) {
	r.d = decoder{data: data, end: len(data), file: name, ctx: "header", strs: r.d.strs[:0]}
	if !r.d.profile(&r.p) {
		return nil, r.d.err
	}
	return &r.p, nil
}

// reuse returns a slice of length n, from dst's storage when it is large
// enough (the caller overwrites every element), else newly allocated.
func reuse[T any](dst []T, n int) []T {
	if cap(dst) >= n {
		return dst[:n]
	}
	return make([]T, n)
}

type decoder struct {
	data []byte
	pos  int // absolute offset of the next byte
	end  int // absolute end of the current section
	file string
	ctx  string // what is being decoded, for messages
	strs []string
	err  *FormatError
}

func (d *decoder) fail(off int, format string, args ...any) {
	if d.err == nil {
		d.err = &FormatError{File: d.file, Offset: int64(off), Msg: fmt.Sprintf(format, args...)}
	}
}

func (d *decoder) left() int { return d.end - d.pos }

// uvarint reads an unsigned varint. The one-byte case is inlined.
func (d *decoder) uvarint() uint64 {
	if d.pos < d.end {
		if b := d.data[d.pos]; b < 0x80 {
			d.pos++
			return uint64(b)
		}
	}
	return d.uvarintLong()
}

// uvarintLong decodes varints of up to 9 bytes in a loop and leaves longer
// ones, and all errors, to encoding/binary.
func (d *decoder) uvarintLong() uint64 {
	var x uint64
	end := min(d.end, d.pos+9)
	for i, s := d.pos, uint(0); i < end; i, s = i+1, s+7 {
		b := d.data[i]
		if b < 0x80 {
			d.pos = i + 1
			return x | uint64(b)<<s
		}
		x |= uint64(b&0x7f) << s
	}
	return d.uvarintSlow()
}

func (d *decoder) uvarintSlow() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.data[d.pos:d.end])
	if n <= 0 {
		if n == 0 {
			d.fail(d.pos, "truncated %s", d.ctx)
		} else {
			d.fail(d.pos, "invalid varint in %s", d.ctx)
		}
		return 0
	}
	d.pos += n
	return v
}

// varint reads a zig-zag encoded signed varint (encoding/binary's Varint).
func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) int() int {
	off := d.pos
	v := d.varint()
	if int64(int(v)) != v {
		d.fail(off, "integer %d out of range in %s", v, d.ctx)
		return 0
	}
	return int(v)
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if d.pos >= d.end {
		d.fail(d.pos, "truncated %s", d.ctx)
		return 0
	}
	b := d.data[d.pos]
	d.pos++
	return b
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if d.left() < 8 {
		d.fail(d.pos, "truncated %s", d.ctx)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.data[d.pos:]))
	d.pos += 8
	return v
}

// count reads a record count and checks that the rest of the current section
// can hold that many records of at least minSize bytes each, so that callers
// may allocate count records.
func (d *decoder) count(what string, minSize int) int {
	off := d.pos
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(d.left()/minSize) {
		d.fail(off, "%s count %d exceeds the %d bytes left in %s", what, n, d.left(), d.ctx)
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	off := d.pos
	i := d.uvarint()
	if i == 0 {
		return ""
	}
	if i > uint64(len(d.strs)) {
		d.fail(off, "string reference %d out of range (string table has %d entries) in %s", i, len(d.strs), d.ctx)
		return ""
	}
	return d.strs[i-1]
}

func (d *decoder) strList(what string) []string {
	n := d.count(what, 1)
	if n == 0 {
		return nil
	}
	l := make([]string, n)
	for i := range l {
		l[i] = d.str()
	}
	return l
}

func (d *decoder) spread() Spread {
	off := d.pos
	switch k := d.byte(); k {
	case spreadZero:
		return Spread{}
	case spreadSingle:
		r := d.int()
		v := d.float()
		return Spread{N: 1, Sum: v, SumSq: v * v, Min: v, Max: v, MinRank: r, MaxRank: r}
	case spreadFull:
		var s Spread
		s.N = d.varint()
		s.Sum = d.float()
		s.SumSq = d.float()
		s.Min = d.float()
		s.Max = d.float()
		s.MinRank = d.int()
		s.MaxRank = d.int()
		return s
	default:
		d.fail(off, "invalid spread kind %d in %s", k, d.ctx)
		return Spread{}
	}
}

var sectionNames = [...]string{
	secStrings:   "string table",
	secMeta:      "meta section",
	secRanks:     "ranks section",
	secFuncs:     "funcs section",
	secSites:     "sites section",
	secHists:     "hists section",
	secComms:     "comms section",
	secPeers:     "peers section",
	secRegions:   "regions section",
	secEvents:    "events section",
	secBusy:      "calls-in-progress section",
	secRankOff:   "rank time-off section",
	secWaits:     "wait-states section",
	secAnalysis:  "analysis section",
	secPaths:     "call-paths section",
	secComp:      "compensation section",
	secAnRMA:     "analysis one-sided section",
	secRankFuncs: "rank-functions section",
	secCommPeers: "communicator-peers section",
}

// profile decodes the profile into p, which it first resets; p's slices are
// reused as storage (see reuse). It reports whether decoding succeeded (else
// d.err is set and p holds garbage).
func (d *decoder) profile(p *Profile) bool {
	spare := *p
	*p = Profile{}
	if len(d.data) < len(magic) {
		if string(d.data) == magic[:len(d.data)] {
			d.fail(len(d.data), "truncated header")
		} else {
			d.fail(0, "not an mpiscope profile (bad magic)")
		}
		return false
	}
	if string(d.data[:len(magic)]) != magic {
		d.fail(0, "not an mpiscope profile (bad magic)")
		return false
	}
	d.pos = len(magic)
	verOff := d.pos
	ver := d.uvarint()
	if d.err != nil {
		return false
	}
	if ver == 0 || ver > FormatVersion {
		if ver > FormatVersion {
			d.fail(verOff, "unsupported format version %d (this mpiscope reads version %d; the file was written by a newer mpiscope)", ver, FormatVersion)
		} else {
			d.fail(verOff, "invalid format version %d", ver)
		}
		return false
	}
	lenOff := d.pos
	bodyLen := d.uvarint()
	if d.err != nil {
		return false
	}
	rest := uint64(len(d.data) - d.pos)
	if rest < crcSize || bodyLen > rest-crcSize {
		d.fail(len(d.data), "truncated file: header at offset %d declares %d body bytes plus a %d byte checksum, only %d bytes follow", lenOff, bodyLen, crcSize, rest)
		return false
	}
	bodyEnd := d.pos + int(bodyLen)
	if extra := rest - crcSize - bodyLen; extra > 0 {
		d.fail(bodyEnd+crcSize, "%d bytes of trailing data after the checksum", extra)
		return false
	}
	stored := binary.LittleEndian.Uint32(d.data[bodyEnd:])
	if sum := crc32.ChecksumIEEE(d.data[:bodyEnd]); sum != stored {
		d.fail(bodyEnd, "checksum mismatch: stored %08x, computed %08x (file corrupt)", stored, sum)
		return false
	}

	last := uint64(0)
	for d.err == nil && d.pos < bodyEnd {
		d.end = bodyEnd
		d.ctx = "section header"
		tagOff := d.pos
		tag := d.uvarint()
		n := d.uvarint()
		if d.err != nil {
			break
		}
		if tag <= last {
			d.fail(tagOff, "section %d out of order or repeated (after section %d)", tag, last)
			break
		}
		last = tag
		name := "section " + strconv.FormatUint(tag, 10)
		if tag < uint64(len(sectionNames)) {
			name = sectionNames[tag]
		}
		if n > uint64(d.left()) {
			d.fail(d.pos, "truncated %s: declares %d bytes, %d left in body", name, n, d.left())
			break
		}
		d.end = d.pos + int(n)
		d.ctx = name
		switch tag {
		case secStrings:
			d.strings()
		case secMeta:
			d.meta(&p.Meta)
		case secRanks:
			p.Ranks = d.ranks(spare.Ranks)
		case secFuncs:
			p.Funcs = d.funcs(spare.Funcs)
		case secSites:
			p.Sites = d.sites(spare.Sites)
		case secHists:
			p.Hists = d.hists(spare.Hists)
		case secComms:
			p.Comms = d.comms(spare.Comms)
		case secPeers:
			p.Peers = d.peers(spare.Peers)
		case secRegions:
			p.Regions = d.regions(spare.Regions)
		case secEvents:
			p.Events = d.events(spare.Events)
		case secBusy:
			p.Busy = d.busy(spare.Busy)
		case secRankOff:
			d.rankOff(p.Ranks)
		case secWaits:
			p.Waits = d.waits(spare.Waits)
		case secAnalysis:
			p.Analysis = d.analysis()
		case secPaths:
			p.Paths = d.paths(spare.Paths)
		case secComp:
			d.comp(p)
		case secAnRMA:
			if p.Analysis == nil {
				d.fail(d.pos, "%s without an analysis section", name)
				break
			}
			p.Analysis.RMA = d.analysisRMA()
		case secRankFuncs:
			p.RankFuncBlock, p.RankFuncs = d.rankFuncs(spare.RankFuncs)
		case secCommPeers:
			p.CommPeerBlock, p.CommPeers = d.commPeers(spare.CommPeers)
		default:
			// A section added by a later revision of this version:
			// readers skip what they do not know.
			d.pos = d.end
		}
		if d.err == nil && d.pos != d.end {
			d.fail(d.pos, "%d unexpected bytes at end of %s", d.end-d.pos, name)
		}
	}
	return d.err == nil
}

func (d *decoder) strings() {
	n := d.count("string", 1)
	if n == 0 {
		return
	}
	// Beyond its length, d.strs may hold the string table of a previous
	// input (see reusingDecoder): an entry equal to the new one is kept
	// rather than allocated again.
	if cap(d.strs) >= n {
		d.strs = d.strs[:n]
	} else {
		d.strs = append(d.strs[:cap(d.strs)], make([]string, n-cap(d.strs))...)
	}
	for i := range d.strs {
		off := d.pos
		l := d.uvarint()
		if d.err != nil {
			return
		}
		if l > uint64(d.left()) {
			d.fail(off, "truncated string table: string %d declares %d bytes, %d left", i+1, l, d.left())
			return
		}
		if b := d.data[d.pos : d.pos+int(l)]; d.strs[i] != string(b) {
			d.strs[i] = string(b)
		}
		d.pos += int(l)
	}
}

func (d *decoder) meta(m *Meta) {
	m.Command = d.strList("command argument")
	m.NumRanks = d.int()
	m.Hosts = d.strList("host")
	m.MPILibrary = d.str()
	m.MPIVersion = d.str()
	m.Family = d.str()
	m.Tool = d.str()
	m.Timer = d.str()
	m.StartNs = d.varint()
	m.StopNs = d.varint()
	if n := d.count("setting", 2); n > 0 {
		m.Settings = make([]Setting, n)
		for i := 0; i < n && d.err == nil; i++ {
			m.Settings[i] = Setting{Name: d.str(), Value: d.str()}
		}
	}
	m.Snapshot = d.int()
	off := d.pos
	switch b := d.byte(); b {
	case 0:
	case 1:
		m.Partial = true
	default:
		d.fail(off, "invalid boolean %d in %s", b, d.ctx)
	}
}

func (d *decoder) ranks(dst []Rank) []Rank {
	n := d.count("rank", 9)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		r := &l[i]
		r.Rank = d.int()
		r.Host = d.str()
		r.PID = d.int()
		r.AppNs = d.varint()
		r.MPINs = d.varint()
		r.Calls = d.varint()
		r.Threads = d.int()
		r.State = d.str()
		r.Dropped = d.varint()
		r.OffNs = 0 // the rank time-off section, if any, sets it
	}
	return l
}

func (d *decoder) funcs(dst []Func) []Func {
	n := d.count("func", 8)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		f := &l[i]
		f.Name = d.str()
		f.Class = d.str()
		f.Calls = d.varint()
		f.TimeNs = d.varint()
		f.MinCallNs = d.varint()
		f.MaxCallNs = d.varint()
		f.Bytes = d.varint()
		f.RankTime = d.spread()
	}
	return l
}

func (d *decoder) sites(dst []Site) []Site {
	n := d.count("site", 13)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		s := &l[i]
		s.Func = d.str()
		s.Loc.Module = d.str()
		s.Loc.Offset = d.uvarint()
		s.Loc.Function = d.str()
		s.Loc.File = d.str()
		s.Loc.Line = d.int()
		s.Region = d.str()
		s.Calls = d.varint()
		s.TimeNs = d.varint()
		s.MinNs = d.varint()
		s.MaxNs = d.varint()
		s.Bytes = d.varint()
		s.RankTime = d.spread()
	}
	return l
}

func (d *decoder) hists(dst []Hist) []Hist {
	n := d.count("hist", 2)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		h := &l[i]
		h.Func = d.str()
		nb := d.count("bin", 4)
		if nb == 0 {
			h.Bins = nil
			continue
		}
		h.Bins = reuse(h.Bins, nb)
		for j := 0; j < nb && d.err == nil; j++ {
			b := &h.Bins[j]
			b.Log2 = d.int()
			b.Calls = d.varint()
			b.Bytes = d.varint()
			b.TimeNs = d.varint()
		}
	}
	return l
}

func (d *decoder) comms(dst []Comm) []Comm {
	n := d.count("comm", 8)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		c := &l[i]
		c.Key = d.str()
		c.Name = d.str()
		c.Size = d.int()
		c.Creator = d.str()
		c.Members = d.varint()
		c.Calls = d.varint()
		c.TimeNs = d.varint()
		c.Bytes = d.varint()
	}
	return l
}

func (d *decoder) peers(dst []Peer) []Peer {
	n := d.count("peer", 6)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	prev := int64(0)
	for i := 0; i < n && d.err == nil; i++ {
		q := &l[i]
		off := d.pos
		rank := prev + d.varint()
		peer := rank + d.varint()
		if int64(int(rank)) != rank || int64(int(peer)) != peer {
			d.fail(off, "rank out of range in %s", d.ctx)
			break
		}
		prev = rank
		q.Rank, q.Peer = int(rank), int(peer)
		q.SentMsgs = d.varint()
		q.SentBytes = d.varint()
		q.RecvMsgs = d.varint()
		q.RecvBytes = d.varint()
	}
	return l
}

func (d *decoder) regions(dst []Region) []Region {
	n := d.count("region", 6)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		r := &l[i]
		r.Path = d.str()
		r.Visits = d.varint()
		r.WallNs = d.varint()
		r.MPINs = d.varint()
		r.Ranks = d.varint()
		r.RankMPI = d.spread()
	}
	return l
}

func (d *decoder) events(dst []Event) []Event {
	n := d.count("event", 3)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		ev := &l[i]
		ev.Text = d.str()
		ev.Count = d.varint()
		ev.Ranks = d.varint()
	}
	return l
}

func (d *decoder) busy(dst []Call) []Call {
	n := d.count("call", 13)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		c := &l[i]
		c.Rank = d.int()
		c.Thread = d.int()
		c.Func = d.str()
		c.Loc.Module = d.str()
		c.Loc.Offset = d.uvarint()
		c.Loc.Function = d.str()
		c.Loc.File = d.str()
		c.Loc.Line = d.int()
		c.Region = d.str()
		c.Comm = d.str()
		c.Peer = d.int()
		c.Tag = d.int()
		c.ElapsedNs = d.varint()
	}
	return l
}

// rankOff sets the OffNs of the ranks decoded before (section 3).
func (d *decoder) rankOff(ranks []Rank) {
	n := d.count("rank time-off entry", 2)
	next := 0
	for i := 0; i < n && d.err == nil; i++ {
		off := d.pos
		delta := d.uvarint()
		v := d.varint()
		if d.err != nil {
			return
		}
		if delta >= uint64(len(ranks)-next) {
			d.fail(off, "rank index %d out of range (%d ranks) in %s", uint64(next)+delta, len(ranks), d.ctx)
			return
		}
		next += int(delta)
		ranks[next].OffNs = v
		next++
	}
}
