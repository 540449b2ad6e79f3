package trace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// A whole-buffer DEFLATE decoder (RFC 1951) for events blocks: the
// compressed stream is one byte slice, the decompressed size is known
// from the block's header, so there is no io.Reader, no sliding window
// and no copy out of one. The bits are read least significant first,
// the next 57 of them by one unaligned 8-byte load at the bit position;
// Huffman codes are decoded by a table indexed by the next bits (10 for
// literals and lengths, 8 for distances) whose entries for longer codes
// point to a subtable indexed by the code's remaining bits; a match whose
// distance is 8 or more is copied 8 bytes a step. (9f51f18 kept a 64-bit
// bit buffer refilled a word at a time: 139 instructions per event of
// BenchmarkDecodeParts against 65 now; docs/performance.md.)
//
// What it accepts is what compress/flate accepts: every tree is complete
// (a Huffman code of one symbol of length 1 excepted; its unused code is
// an error when read), a dynamic block has at most 286 literal/length
// and 30 distance codes, a repeat code 16 needs a previous length, the
// symbols 286, 287 and the distances 30, 31 of the fixed code are
// errors, a distance may not reach before the stream's first byte, and
// the bytes after the final block are ignored.

// Table entries (uint32): bits 0-4 the code's length (the bits the entry
// consumes; for a link, the root's bits), bits 5-7 the kind, bits 8-15
// the extra bits that follow the code (for a link, the subtable's index
// bits), bits 16-31 the value: a literal byte, a length's or a
// distance's base, a subtable's offset in the table.
const (
	hKindShift = 5
	hInvalid   = 0 << hKindShift // no code, or a symbol compress/flate refuses
	hLit       = 1 << hKindShift
	hBase      = 2 << hKindShift // a length or a distance: base + extra bits
	hEnd       = 3 << hKindShift // end of block
	hLink      = 4 << hKindShift // to a subtable
	hKindMask  = 7 << hKindShift

	litRoot  = 10
	distRoot = 8
	clenRoot = 7 // the code lengths' code is at most 7 bits long
)

// hTable is a decoding table: its first 1<<root entries are indexed by
// the next root bits, subtables follow.
type hTable struct {
	t []uint32
}

// inflater keeps a dynamic block's tables from one call to the next (an
// events block's stream allocates nothing once they have grown).
type inflater struct {
	lit, dist, clen hTable
	lens            [286 + 30]uint8
}

// inflateAll decodes the DEFLATE stream src, appending exactly n bytes
// to dst; anything else (a malformed stream, one cut short, one of
// another length) is an error. dst grows as the data arrives, not to n
// at once. (codec_test.go's inflate is a test helper reading a whole
// events block with compress/flate.)
func inflateAll(dst, src []byte, n int) ([]byte, error) {
	var f inflater
	return f.inflate(dst, src, n)
}

// Symbols' entries without their code length: literals and lengths (257
// to 285; 286 and 287 invalid), distances (0 to 29; 30 and 31 invalid),
// code lengths (0 to 18, as literals).
var litSyms, distSyms, clenSyms = symEntries()

func symEntries() (lit [288]uint32, dist [32]uint32, clen [19]uint32) {
	for s := 0; s < 256; s++ {
		lit[s] = hLit | uint32(s)<<16
	}
	lit[256] = hEnd
	base := 3
	for s := 257; s < 285; s++ {
		extra := 0
		if s >= 265 {
			extra = (s - 261) / 4
		}
		lit[s] = hBase | uint32(extra)<<8 | uint32(base)<<16
		base += 1 << extra
	}
	lit[285] = hBase | 258<<16
	base = 1
	for s := 0; s < 30; s++ {
		extra := 0
		if s >= 4 {
			extra = s/2 - 1
		}
		dist[s] = hBase | uint32(extra)<<8 | uint32(base)<<16
		base += 1 << extra
	}
	for s := range clen {
		clen[s] = hLit | uint32(s)<<16
	}
	return
}

// fixedLitLen is the length of literal/length symbol s's code in the fixed
// code (RFC 1951, 3.2.6).
func fixedLitLen(s int) uint8 {
	switch {
	case s < 144:
		return 8
	case s < 256:
		return 9
	case s < 280:
		return 7
	}
	return 8
}

// The fixed code's tables (block type 1).
var fixedLit, fixedDist = fixedTables()

func fixedTables() (lit, dist hTable) {
	var l [288]uint8
	for s := range l {
		l[s] = fixedLitLen(s)
	}
	var d [32]uint8
	for s := range d {
		d[s] = 5
	}
	if !lit.build(l[:], litSyms[:], litRoot) || !dist.build(d[:], distSyms[:], distRoot) {
		panic("trace: the fixed Huffman code is not complete")
	}
	return
}

// build makes the table of the code whose lengths are lens (symbol s has
// entry syms[s]). It reports false for a code compress/flate refuses:
// over-subscribed, or incomplete but for a single code of length 1. A
// code of no symbol builds a table of invalid entries: reading it is an
// error.
func (h *hTable) build(lens []uint8, syms []uint32, root uint) bool {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	// left: the codes of the current length still free (Kraft).
	left, codes, maxLen := 1, 0, 0
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return false
		}
		codes += count[l]
		if count[l] > 0 {
			maxLen = l
		}
	}
	if left != 0 && !(codes == 1 && count[1] == 1) && codes != 0 {
		return false
	}
	h.t = slices.Grow(h.t[:0], 1<<root)[:1<<root]
	clear(h.t)
	if codes == 0 {
		return true
	}
	// The first code of each length (RFC 1951 3.2.2).
	var next [16]int
	c := 0
	for l := 1; l < 16; l++ {
		c = (c + count[l-1]) << 1
		next[l] = c
	}
	mask := 1<<root - 1
	if uint(maxLen) > root {
		// A long code's longest length by its root bits, and those root
		// bits in the order found.
		var subLen [1 << litRoot]uint8
		var subs [1 << litRoot]uint16
		nsubs := 0
		nx := next
		for _, l := range lens {
			if uint(l) <= root {
				if l > 0 {
					nx[l]++
				}
				continue
			}
			r := int(bits.Reverse16(uint16(nx[l]))>>(16-l)) & mask
			nx[l]++
			if subLen[r] == 0 {
				subs[nsubs] = uint16(r)
				nsubs++
			}
			subLen[r] = max(subLen[r], l)
		}
		for _, r := range subs[:nsubs] {
			sb := uint32(subLen[r]) - uint32(root)
			h.t[r] = hLink | sb<<8 | uint32(len(h.t))<<16 | uint32(root)
			h.t = append(h.t, make([]uint32, 1<<sb)...)
		}
	}
	for s, l := range lens {
		if l == 0 {
			continue
		}
		rev := int(bits.Reverse16(uint16(next[l])) >> (16 - l))
		next[l]++
		e := syms[s] | uint32(l)
		if uint(l) <= root {
			for i := rev; i <= mask; i += 1 << l {
				h.t[i] = e
			}
			continue
		}
		link := h.t[rev&mask]
		off, sb := int(link>>16), uint(link>>8&0xff)
		for i := rev >> root; i < 1<<sb; i += 1 << (uint(l) - root) {
			h.t[off+i] = e
		}
	}
	return true
}

// errInflateEOF: the stream ends before its final block does.
var errInflateEOF = errors.New("DEFLATE stream: cut short")

// inflateLenError: the stream holds another number of bytes than
// wanted (got is want+1 when it holds more: decoding stops there).
type inflateLenError struct{ got, want int }

func (e *inflateLenError) Error() string {
	if e.got > e.want {
		return fmt.Sprintf("DEFLATE stream: more than %d bytes", e.want)
	}
	return fmt.Sprintf("DEFLATE stream: %d bytes, %d wanted", e.got, e.want)
}

func inflateErr(at int, format string, a ...any) error {
	return fmt.Errorf("DEFLATE stream: "+format+" (near byte %d)", append(a, at)...)
}

// bitReader reads src's bits least significant first from bit pos on.
// Beyond src the bits are zeros; pos beyond 8*len(src) tells that the
// stream was cut short.
type bitReader struct {
	src []byte
	pos uint
}

// word returns the next 57 bits at least (in the low bits).
func (r *bitReader) word() uint64 {
	return wordAt(r.src, r.pos)
}

// wordAt returns src's next 57 bits at least from bit pos on.
func wordAt(src []byte, pos uint) uint64 {
	if i := int(pos >> 3); i <= len(src)-8 {
		return binary.LittleEndian.Uint64(src[i:]) >> (pos & 7)
	}
	return tailWord(src, pos)
}

// tailWord is wordAt less than 8 bytes from the end.
func tailWord(src []byte, pos uint) uint64 {
	var b [8]byte
	if i := pos >> 3; i < uint(len(src)) {
		copy(b[:], src[i:])
	}
	return binary.LittleEndian.Uint64(b[:]) >> (pos & 7)
}

// take returns the next k bits (k <= 57).
func (r *bitReader) take(k uint) uint64 {
	v := r.word() & (1<<k - 1)
	r.pos += k
	return v
}

// over tells whether the bits used run past the end of src.
func (r *bitReader) over() bool {
	return r.pos > uint(len(r.src))*8
}

// at is the byte offset of the bits read (for errors).
func (r *bitReader) at() int { return int(min(r.pos>>3, uint(len(r.src)))) }

// sym decodes a symbol of h.
func (r *bitReader) sym(h *hTable, root uint) uint32 {
	w := r.word()
	e := h.t[w&(1<<root-1)]
	if e&hKindMask == hLink {
		e = h.t[int(e>>16)+int(w>>root)&(1<<(e>>8&31)-1)]
	}
	r.pos += uint(e & 31)
	return e
}

// inflate is inflateAll with f's tables (evDecoder keeps an inflater).
func (f *inflater) inflate(dst, src []byte, n int) ([]byte, error) {
	start := len(dst)
	if n < 0 || n > maxRaw {
		return dst, fmt.Errorf("DEFLATE stream: %d bytes wanted", n)
	}
	end := start + n
	// out's length is where bytes may go without growing it: its
	// capacity, up to end.
	out := dst[:min(cap(dst), end)]
	op := start
	r := bitReader{src: src}
	for final := false; !final; {
		if r.over() {
			return dst, errInflateEOF
		}
		final = r.take(1) == 1
		var err error
		switch r.take(2) {
		case 0:
			out, op, err = f.stored(&r, out, start, op, end)
		case 1:
			out, op, err = f.codes(&r, &fixedLit, &fixedDist, out, start, op, end)
		case 2:
			if err = f.dynamic(&r); err == nil {
				out, op, err = f.codes(&r, &f.lit, &f.dist, out, start, op, end)
			}
		default:
			err = inflateErr(r.at(), "block type 3")
		}
		if err != nil {
			return dst, err
		}
	}
	if r.over() {
		return dst, errInflateEOF
	}
	if op != end {
		return dst, &inflateLenError{op - start, n}
	}
	return out[:op], nil
}

// growOut makes room in out for k more bytes at op, op+k <= end: the
// capacity doubles (64 KiB at least); the length is the capacity up to
// end.
func growOut(out []byte, op, k, end int) []byte {
	out = slices.Grow(out[:op], min(end, max(op+k, 2*len(out), op+1<<16))-op)
	return out[:min(cap(out), end)]
}

// stored copies a stored block (type 0).
func (f *inflater) stored(r *bitReader, out []byte, start, op, end int) ([]byte, int, error) {
	ip := int((r.pos + 7) >> 3) // to the byte boundary
	if ip+4 > len(r.src) {
		return out, op, errInflateEOF
	}
	ln := int(binary.LittleEndian.Uint16(r.src[ip:]))
	if uint16(ln) != ^binary.LittleEndian.Uint16(r.src[ip+2:]) {
		return out, op, inflateErr(ip, "stored block's length and its complement differ")
	}
	ip += 4
	if ip+ln > len(r.src) {
		return out, op, errInflateEOF
	}
	if op+ln > end {
		return out, op, &inflateLenError{end - start + 1, end - start}
	}
	if op+ln > len(out) {
		out = growOut(out, op, ln, end)
	}
	op += copy(out[op:op+ln], r.src[ip:ip+ln])
	r.pos = uint(ip+ln) * 8
	return out, op, nil
}

// clenOrder is the order of the code lengths' code lengths.
var clenOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// dynamic reads a dynamic block's header (type 2) into f.lit and f.dist.
func (f *inflater) dynamic(r *bitReader) error {
	nlit := int(r.take(5)) + 257
	ndist := int(r.take(5)) + 1
	nclen := int(r.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return inflateErr(r.at(), "%d literal/length codes, %d distance codes", nlit, ndist)
	}
	var cl [19]uint8
	for i := 0; i < nclen; i++ {
		cl[clenOrder[i]] = uint8(r.take(3))
	}
	if !f.clen.build(cl[:], clenSyms[:], clenRoot) {
		return inflateErr(r.at(), "bad code lengths' code")
	}
	lens := f.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if r.over() {
			return errInflateEOF
		}
		e := r.sym(&f.clen, clenRoot)
		if e&hKindMask != hLit {
			return inflateErr(r.at(), "bad code length code")
		}
		x := e >> 16
		if x < 16 {
			lens[i] = uint8(x)
			i++
			continue
		}
		var rep int
		var l uint8
		switch x {
		case 16:
			if i == 0 {
				return inflateErr(r.at(), "code length repeated with none before")
			}
			rep, l = 3+int(r.take(2)), lens[i-1]
		case 17:
			rep = 3 + int(r.take(3))
		default:
			rep = 11 + int(r.take(7))
		}
		if i+rep > len(lens) {
			return inflateErr(r.at(), "code lengths beyond the %d codes", len(lens))
		}
		for ; rep > 0; rep-- {
			lens[i] = l
			i++
		}
	}
	if !f.lit.build(lens[:nlit], litSyms[:], litRoot) || !f.dist.build(lens[nlit:], distSyms[:], distRoot) {
		return inflateErr(r.at(), "bad Huffman code")
	}
	return nil
}

// codes decodes a Huffman-coded block's symbols up to its end: fast
// while 8 bytes of src and 266 bytes of out are left (a match of 258 and
// its last 8-byte step), then symbol by symbol with every check.
func (f *inflater) codes(r *bitReader, lt, dt *hTable, out []byte, start, op, end int) ([]byte, int, error) {
	for {
		var ok bool
		op, r.pos, ok = fastCodes(lt.t, dt.t, r.src, r.pos, out, start, op)
		if ok {
			return out, op, nil
		}
		var err error
		if out, op, ok, err = slowCode(r, lt, dt, out, start, op, end); ok || err != nil {
			return out, op, err
		}
	}
}

// fastCodes decodes symbols while src has 8 bytes left at pos and out
// 266 at op. It reports true at the end of the block; false when it
// stopped short of either end, or at a symbol it leaves to slowCode (a
// bad code or distance).
func fastCodes(lt, dt []uint32, src []byte, pos uint, out []byte, start, op int) (int, uint, bool) {
	for int(pos>>3) <= len(src)-8 && op <= len(out)-266 {
		// The next 57 bits at least: enough for a length, a distance
		// and their extra bits (15+5+15+13).
		w := binary.LittleEndian.Uint64(src[pos>>3:]) >> (pos & 7)
		e := lt[w&(1<<litRoot-1)]
		if e&hKindMask == hLit {
			// A second literal from the same bits (10 used at most).
			out[op] = byte(e >> 16)
			pos += uint(e & 31)
			w >>= e & 31
			e = lt[w&(1<<litRoot-1)]
			if e&hKindMask != hLit {
				op++
				continue
			}
			out[op+1] = byte(e >> 16)
			op += 2
			pos += uint(e & 31)
			continue
		}
		if e&hKindMask == hLink {
			e = lt[int(e>>16)+int(w>>litRoot)&(1<<(e>>8&31)-1)]
			if e&hKindMask == hLit {
				out[op] = byte(e >> 16)
				op++
				pos += uint(e & 31)
				continue
			}
		}
		if e&hKindMask != hBase {
			if e&hKindMask == hEnd {
				return op, pos + uint(e&31), true
			}
			return op, pos, false
		}
		n := uint(e & 31)
		w >>= n
		k := uint(e >> 8 & 31)
		length := int(e>>16) + int(w&(1<<k-1))
		w >>= k
		n += k
		e = dt[w&(1<<distRoot-1)]
		if e&hKindMask == hLink {
			e = dt[int(e>>16)+int(w>>distRoot)&(1<<(e>>8&31)-1)]
		}
		w >>= e & 31
		k = uint(e >> 8 & 31)
		dist := int(e>>16) + int(w&(1<<k-1))
		if e&hKindMask != hBase || dist > op-start {
			return op, pos, false
		}
		pos += n + uint(e&31) + k
		from := op - dist
		if dist >= 8 {
			m := op + length
			for ; op < m; op, from = op+8, from+8 {
				binary.LittleEndian.PutUint64(out[op:op+8], binary.LittleEndian.Uint64(out[from:from+8]))
			}
			op = m
			continue
		}
		for m := op + length; op < m; {
			op += copy(out[op:m], out[from:op])
		}
	}
	return op, pos, false
}

// slowCode decodes one symbol with every check: it reports true at the
// end of the block.
func slowCode(r *bitReader, lt, dt *hTable, out []byte, start, op, end int) ([]byte, int, bool, error) {
	if r.over() {
		return out, op, false, errInflateEOF
	}
	e := r.sym(lt, litRoot)
	switch e & hKindMask {
	case hLit:
		if op >= len(out) {
			if op >= end {
				return out, op, false, &inflateLenError{end - start + 1, end - start}
			}
			out = growOut(out, op, 1, end)
		}
		out[op] = byte(e >> 16)
		return out, op + 1, false, nil
	case hEnd:
		return out, op, true, nil
	case hBase:
	default:
		return out, op, false, inflateErr(r.at(), "bad literal/length code")
	}
	length := int(e>>16) + int(r.take(uint(e>>8&31)))
	e = r.sym(dt, distRoot)
	if e&hKindMask != hBase {
		return out, op, false, inflateErr(r.at(), "bad distance code")
	}
	dist := int(e>>16) + int(r.take(uint(e>>8&31)))
	if dist > op-start {
		return out, op, false, inflateErr(r.at(), "distance %d before the stream's start", dist)
	}
	if op+length > len(out) {
		if op+length > end {
			return out, op, false, &inflateLenError{end - start + 1, end - start}
		}
		out = growOut(out, op, length, end)
	}
	from := op - dist
	for m := op + length; op < m; {
		op += copy(out[op:m], out[from:op])
	}
	return out, op, false, nil
}
