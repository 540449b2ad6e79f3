package trace

import (
	"math"
	"strconv"
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
	b            string
}

// head returns the bytes of c's slice up to its "ts" value, after the
// separator: `,\n{"ph":"X","cat":"C","name":"F","pid":R,"tid":T,"ts":`,
// made once per function id and track.
func (p *PerfettoWriter) head(c *Call) string {
	id := c.FnID
	if id >= 0 && id < len(p.heads) {
		h := &p.heads[id]
		if h.rank == c.Rank && h.thread == c.Thread && h.fn == c.Fn && h.b != "" {
			return h.b
		}
	}
	b := append([]byte(nil), ",\n"+`{"ph":"X","cat":"`...)
	b = append(b, c.Class...)
	b = append(b, `","name":`...)
	b = append(b, p.fnQuote(c)...)
	b = appendWhere(b[:len(b)-1], c.Rank, c.Thread) // appendWhere starts after a quote
	if id >= 0 && id < 1<<16 {
		for len(p.heads) <= id {
			p.heads = append(p.heads, head{})
		}
		p.heads[id] = head{rank: c.Rank, thread: c.Thread, fn: c.Fn, b: string(b)}
	}
	return string(b)
}

// appendWhere appends `","pid":R,"tid":T,"ts":`.
func appendWhere(b []byte, rank, thread int) []byte {
	b = append(b, `","pid":`...)
	b = appendInt(b, int64(rank))
	b = append(b, `,"tid":`...)
	b = appendInt(b, int64(thread))
	return append(b, `,"ts":`...)
}

// digits2 holds the two digits of 0 to 99.
const digits2 = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" + "30313233343536373839" +
	"40414243444546474849" + "50515253545556575859" + "60616263646566676869" + "70717273747576777879" +
	"80818283848586878889" + "90919293949596979899"

// appendUint appends v in decimal (strconv.AppendUint's output).
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	if v < 100 {
		return append(b, digits2[2*v], digits2[2*v+1])
	}
	var buf [20]byte
	i := len(buf)
	i = putDigits(buf[:], i, v)
	return append(b, buf[i:]...)
}

// putDigits writes v in decimal into buf, ending before buf[i], and
// returns the index of its first digit.
func putDigits(buf []byte, i int, v uint64) int {
	for v >= 100 {
		q := v / 100
		r := v - q*100
		i -= 2
		buf[i], buf[i+1] = digits2[2*r], digits2[2*r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		buf[i], buf[i+1] = digits2[2*v], digits2[2*v+1]
	} else {
		i--
		buf[i] = byte('0' + v)
	}
	return i
}

// appendInt appends v in decimal (strconv.AppendInt's output).
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		if v == math.MinInt64 {
			return strconv.AppendInt(b, v, 10)
		}
		b = append(b, '-')
		v = -v
	}
	return appendUint(b, uint64(v))
}

// appendUs appends nanoseconds t as microseconds with 3 decimals (t
// rounded to the nanosecond, as strconv's 'f' with 3 digits rounds).
func appendUs(b []byte, t float64) []byte {
	if !(t > -9e15 && t < 9e15) {
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
	// Written backwards: 3 decimals, the point, the integer part.
	var buf [24]byte
	i := len(buf)
	v := uint64(ns)
	q := v / 1000
	f := v - q*1000
	i -= 4
	buf[i] = '.'
	buf[i+1] = byte('0' + f/100)
	buf[i+2], buf[i+3] = digits2[2*(f%100)], digits2[2*(f%100)+1]
	v = q
	i = putDigits(buf[:], i, v)
	return append(b, buf[i:]...)
}

// site is a callsite's arguments: `,"callsite":"file:line","caller":"f"`
// for a resolved one, `,"callsite":"0xADDR"` for an address.
type site struct {
	src  *Source
	rank int
	pc   uint64
	b    string
}

// site returns c's callsite arguments, from a direct-mapped cache keyed by
// the rank and address (which give the walk's Source).
func (p *PerfettoWriter) site(c *Call) string {
	k := c.PC
	e := &p.sites[(k^k>>6^k>>14)&255]
	if e.b != "" && e.src == c.Src && e.pc == c.PC && e.rank == c.Rank {
		return e.b
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
	*e = site{src: c.Src, rank: c.Rank, pc: c.PC, b: string(b)}
	return e.b
}
