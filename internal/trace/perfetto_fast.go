package trace

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"
)

// Per-event formatting of PerfettoWriter: what repeats from one slice to
// the next is made once, numbers are written without strconv's general
// path (a JSON record of about 170 bytes per event, formatted in a few
// tens of nanoseconds).

// head is the start of an "X" slice for one function on one track, up to
// the value of "ts".
type head struct {
	rank, thread int
	fn           string
	l            lit
}

// head returns the bytes of c's slice up to its "ts" value, its
// separator first: `,\n{"ph":"X","cat":"C","name":"F","pid":R,"tid":T,"ts":`,
// made once per function id and track.
func (p *PerfettoWriter) head(c *Call) *lit {
	id := c.FnID
	if id >= 0 && id < len(p.heads) {
		h := &p.heads[id]
		// The walk hands over the same name each time: its pointer
		// first (no call to compare the bytes).
		if h.rank == c.Rank && h.thread == c.Thread && h.l.n != 0 && len(h.fn) == len(c.Fn) &&
			(unsafe.StringData(h.fn) == unsafe.StringData(c.Fn) || h.fn == c.Fn) {
			return &h.l
		}
	}
	b := append([]byte(nil), ",\n"+`{"ph":"X","cat":`...)
	b = append(b, p.quote(c.Class)...) // from the file: any bytes
	b = append(b, `,"name":`...)
	b = append(b, p.fnQuote(c)...)
	b = appendWhere(b[:len(b)-1], c.Rank, c.Thread) // appendWhere starts after a quote
	if id >= 0 && id < 1<<16 {
		for len(p.heads) <= id {
			p.heads = append(p.heads, head{})
		}
		p.heads[id] = head{rank: c.Rank, thread: c.Thread, fn: c.Fn, l: makeLit(string(b))}
		return &p.heads[id].l
	}
	p.litTmp = makeLit(string(b))
	return &p.litTmp
}

// litMax is the longest string a lit holds in its array.
const litMax = 96

// lit is a string the writer appends again and again (a slice's head,
// its communicator and callsite, a flow's track, a message's key and
// description), kept in an array that is appended in one copy of litMax
// bytes (six 16-byte moves inline) where there is room beyond the length:
// no call to memmove, which cost about 35 instructions an append with
// its call.
type lit struct {
	b    [litMax]byte
	n    int
	long string // the string when longer than litMax: appended as usual
}

func makeLit(s string) lit {
	l := lit{n: len(s)}
	if len(s) > litMax {
		l.long = s
	} else {
		copy(l.b[:], s)
	}
	return l
}

// String is l's string.
func (l *lit) String() string {
	if l.long != "" {
		return l.long
	}
	return string(l.b[:l.n])
}

// appendLit appends l; the copy of litMax bytes is inline (the bytes
// past l.n are overwritten by what follows).
func appendLit(b []byte, l *lit) []byte {
	if cap(b)-len(b) < litMax || l.long != "" {
		return appendLitSlow(b, l)
	}
	e := len(b)
	*(*[litMax]byte)(b[e : e+litMax]) = l.b
	return b[:e+l.n]
}

func appendLitSlow(b []byte, l *lit) []byte {
	if l.long != "" {
		return append(b, l.long...)
	}
	return append(b, l.b[:l.n]...)
}

// appendWhere appends `","pid":R,"tid":T,"ts":`.
func appendWhere(b []byte, rank, thread int) []byte {
	b = append(b, `","pid":`...)
	b = appendInt(b, int64(rank))
	b = append(b, `,"tid":`...)
	b = appendInt(b, int64(thread))
	return append(b, `,"ts":`...)
}

// Numbers are written straight into the output, backwards from their
// last digit, their length known first (decLen): no copy through a
// temporary buffer, and what follows a number does not wait for its
// digits.

// digits2 holds the two digits of 0 to 99.
const digits2 = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" + "60616263646566676869" + "70717273747576777879" +
	"80818283848586878889" + "90919293949596979899"

// pow10 holds 10^0 to 10^19.
var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decLen is the number of decimal digits of v (1 for 0).
func decLen(v uint64) int {
	// bits*1233>>12 is floor(bits*log10(2)) for bits up to 64; v|1 has
	// the digits of v, one for 0.
	v |= 1
	n := bits.Len64(v) * 1233 >> 12
	if v >= pow10[n] {
		n++
	}
	return n
}

// room returns b with at least n bytes of capacity beyond its length.
func room(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		b = slices.Grow(b, n)
	}
	return b
}

// dig2 holds the two digits of 0 to 99 as little-endian uint16s: two or
// four digits go out in one store.
var dig2 = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()

// putDigits writes v in decimal into buf, ending before buf[i], and
// returns the index of its first digit.
func putDigits(buf []byte, i int, v uint64) int {
	for v >= 10000 {
		q := v / 10000
		r := uint32(v - q*10000)
		h := r / 100
		i -= 4
		binary.LittleEndian.PutUint32(buf[i:], uint32(dig2[h])|uint32(dig2[r-h*100])<<16)
		v = q
	}
	if v >= 100 {
		q := v / 100
		i -= 2
		binary.LittleEndian.PutUint16(buf[i:], dig2[v-q*100])
		v = q
	}
	if v >= 10 {
		i -= 2
		binary.LittleEndian.PutUint16(buf[i:], dig2[v])
	} else {
		i--
		buf[i] = byte('0' + v)
	}
	return i
}

// appendUint appends v in decimal (strconv.AppendUint's output); one
// digit inline.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	return appendDec(b, v)
}

// appendInt appends v in decimal (strconv.AppendInt's output); one digit
// inline.
func appendInt(b []byte, v int64) []byte {
	if uint64(v) < 10 {
		return append(b, byte('0'+v))
	}
	return appendDec(b, v)
}

// appendDec appends v in decimal: one function for each type, so that an
// integer is one call (up to four digits without decLen and putDigits).
func appendDec[T int64 | uint64](b []byte, v T) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u // math.MinInt64 too: 2^63
	}
	if u < 10 {
		return append(b, byte('0'+u))
	}
	if u < 10000 {
		b = room(b, 4)
		e := len(b)
		if u < 100 {
			o := b[:e+2]
			binary.LittleEndian.PutUint16(o[e:], dig2[u])
			return o
		}
		h := u / 100
		l := dig2[u-h*100]
		if u < 1000 {
			o := b[:e+3]
			o[e] = byte('0' + h)
			binary.LittleEndian.PutUint16(o[e+1:], l)
			return o
		}
		o := b[:e+4]
		binary.LittleEndian.PutUint32(o[e:], uint32(dig2[h])|uint32(l)<<16)
		return o
	}
	if u < 1e8 { // request ids: the high part's 1 to 4 digits, then 4
		q := u / 10000
		r := u - q*10000
		rh := r / 100
		lo := uint32(dig2[rh]) | uint32(dig2[r-rh*100])<<16
		b = room(b, 8)
		e := len(b)
		o := (*[8]byte)(b[e : e+8])
		n := 4
		switch {
		case q < 10:
			o[0], n = byte('0'+q), 1
		case q < 100:
			binary.LittleEndian.PutUint16(o[0:], dig2[q])
			n = 2
		case q < 1000:
			qh := q / 100
			o[0], n = byte('0'+qh), 3
			binary.LittleEndian.PutUint16(o[1:], dig2[q-qh*100])
		default:
			qh := q / 100
			binary.LittleEndian.PutUint32(o[0:], uint32(dig2[qh])|uint32(dig2[q-qh*100])<<16)
		}
		binary.LittleEndian.PutUint32(o[n:], lo)
		return b[:e+n+4]
	}
	n := decLen(u)
	b = room(b, n)
	e := len(b) + n
	b = b[:e]
	putDigits(b, e, u)
	return b
}

// frac3 is ".ddd" for 0 to 999, as a little-endian uint32.
var frac3 = func() (t [1000]uint32) {
	for i := range t {
		t[i] = '.' | uint32('0'+i/100)<<8 | uint32('0'+i/10%10)<<16 | uint32('0'+i%10)<<24
	}
	return t
}()

// appendUs appends nanoseconds t as microseconds with 3 decimals: t
// rounded to the nanosecond, half away from zero (math.Round; strconv's
// 'f' would round t/1000's decimal value, which can differ at half a
// nanosecond); beyond 9e15 ns strconv's 'f', 3 digits; 0 for a time
// that is not finite.
func appendUs(b []byte, t float64) []byte {
	if !(t > -9e15 && t < 9e15) {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return append(b, '0') // JSON has no such number (a damaged calibration)
		}
		return strconv.AppendFloat(b, t/1000, 'f', 3, 64)
	}
	neg := t < 0
	if neg {
		t = -t
	}
	// math.Round(t) (half away from zero), exactly: below 2^53 the
	// difference between t and its integer part is exact.
	ns := int64(t)
	if t-float64(ns) >= 0.5 {
		ns++
	}
	if neg && ns != 0 {
		b = append(b, '-')
	}
	v := uint64(ns)
	us := v / 1000
	f := frac3[v-us*1000]
	if us < 100 { // durations mostly: no loop
		b = room(b, 6)
		e := len(b)
		if us < 10 {
			b = b[:e+5]
			b[e] = byte('0' + us)
			binary.LittleEndian.PutUint32(b[e+1:], f)
			return b
		}
		b = b[:e+6]
		b[e], b[e+1] = digits2[2*us], digits2[2*us+1]
		binary.LittleEndian.PutUint32(b[e+2:], f)
		return b
	}
	n := decLen(us)
	b = room(b, n+4)
	e := len(b) + n
	b = b[:e+4]
	binary.LittleEndian.PutUint32(b[e:], f)
	putDigits(b, e, us)
	return b
}

// ts appends time t (nanoseconds) as appendUs does; the digits of its
// milliseconds, the same in most consecutive records of a rank, are
// those of the last time written when they are unchanged (two 8-byte
// stores), the rest four digits and the fraction's four bytes.
func (p *PerfettoWriter) ts(b []byte, t float64) []byte {
	if !(t >= 1e6 && t < 9e15) {
		return appendUs(b, t)
	}
	// Through int64: one instruction each way (uint64's conversions
	// branch on the sign bit).
	n := int64(t)
	if t-float64(n) >= 0.5 {
		n++
	}
	ns := uint64(n)
	us := ns / 1000
	ms := us / 1000
	if ms != p.tsMs {
		// At most 10 digits below 9e15 ns.
		var d [16]byte
		n := decLen(ms)
		putDigits(d[:], n, ms)
		p.tsMs, p.tsN = ms, n
		p.tsD[0], p.tsD[1] = binary.LittleEndian.Uint64(d[:]), binary.LittleEndian.Uint64(d[8:])
	}
	b = room(b, 24)
	e := len(b)
	o := (*[24]byte)(b[e : e+24]) // one bounds check for the stores
	binary.LittleEndian.PutUint64(o[0:], p.tsD[0])
	binary.LittleEndian.PutUint64(o[8:], p.tsD[1])
	k := p.tsN & 15
	// "ddd" of the microseconds' last three digits (frac3 without its
	// point), then the fraction from the fourth byte: one 8-byte store
	// (its last byte beyond the time, overwritten by what follows).
	binary.LittleEndian.PutUint64(o[k:], uint64(frac3[us-ms*1000]>>8)|uint64(frac3[ns-us*1000])<<24)
	return b[:e+k+7]
}

// site is a callsite's arguments: `,"callsite":"file:line","caller":"f"`
// for a resolved one, `,"callsite":"0xADDR"` for an address.
type site struct {
	src  *Source
	rank int
	pc   uint64
	l    lit
}

// site returns c's callsite arguments, from a direct-mapped cache keyed by
// the rank and address (which give the walk's Source).
func (p *PerfettoWriter) site(c *Call) *lit {
	k := c.PC
	e := &p.sites[(k^k>>6^k>>14)&255]
	if e.l.n != 0 && e.src == c.Src && e.pc == c.PC && e.rank == c.Rank {
		return &e.l
	}
	var b []byte
	if c.Src != nil {
		q, ok := p.src[c.Src]
		if !ok {
			q = [2]string{p.quote(c.Src.String()), p.quote(c.Src.Func)}
			p.src[c.Src] = q
		}
		b = append(append(b, `,"callsite":`...), q[0]...)
		if c.Src.Func != "" {
			b = append(append(b, `,"caller":`...), q[1]...)
		}
	} else {
		b = append(b, `,"callsite":"0x`...)
		b = strconv.AppendUint(b, c.PC, 16)
		b = append(b, '"')
	}
	*e = site{src: c.Src, rank: c.Rank, pc: c.PC, l: makeLit(string(b))}
	return &e.l
}
