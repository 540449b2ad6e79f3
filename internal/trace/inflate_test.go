package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// flateDecode is compress/flate's reading of src, the reference.
func flateDecode(src []byte) ([]byte, error) {
	return io.ReadAll(flate.NewReader(bytes.NewReader(src)))
}

// checkInflate checks that inflateAll decodes src to want (nil: what
// compress/flate decodes it to, which must succeed), appending to a
// prefix without touching the capacity beyond, and that it refuses one
// byte more or less.
func checkInflate(t *testing.T, name string, src, want []byte) {
	t.Helper()
	ref, err := flateDecode(src)
	if err != nil {
		t.Fatalf("%s: compress/flate: %v", name, err)
	}
	if want == nil {
		want = ref
	} else if !bytes.Equal(ref, want) {
		t.Fatalf("%s: compress/flate decodes %d bytes, want %d", name, len(ref), len(want))
	}
	got, err := inflateAll(nil, src, len(want))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from compress/flate's %d (first at %d)", name, len(got), len(want), firstDiff(got, want))
	}
	// Appended to a prefix, the capacity beyond the n bytes untouched.
	dst := make([]byte, 3, 3+len(want)+64)
	for i := range dst[:cap(dst)] {
		dst[:cap(dst)][i] = 0xee
	}
	got, err = inflateAll(dst, src, len(want))
	if err != nil || !bytes.Equal(got[:3], []byte{0xee, 0xee, 0xee}) || !bytes.Equal(got[3:], want) {
		t.Fatalf("%s: appended to 3 bytes: %v", name, err)
	}
	for i, c := range got[:cap(got)][3+len(want):] {
		if c != 0xee {
			t.Fatalf("%s: byte %d after the data written (%#x)", name, i, c)
		}
	}
	if _, err := inflateAll(nil, src, len(want)+1); err == nil {
		t.Fatalf("%s: decoded as %d bytes", name, len(want)+1)
	}
	if len(want) > 0 {
		if _, err := inflateAll(nil, src, len(want)-1); err == nil {
			t.Fatalf("%s: decoded as %d bytes", name, len(want)-1)
		}
	}
}

// checkBad checks that compress/flate and inflateAll both refuse src.
func checkBad(t *testing.T, name string, src []byte) {
	t.Helper()
	part, err := flateDecode(src)
	if err == nil {
		t.Fatalf("%s: compress/flate decodes it (%d bytes)", name, len(part))
	}
	for _, n := range []int{len(part), len(part) + 1, 0, 1 << 16} {
		if got, err := inflateAll(nil, src, n); err == nil {
			t.Fatalf("%s: decoded as %d bytes (compress/flate: %v)", name, len(got), err)
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// compressed is data written by compress/flate at level, with a Flush
// (an empty stored block) in the middle.
func compressed(t testing.TB, data []byte, level int) []byte {
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, level)
	if err != nil {
		t.Fatal(err)
	}
	h := len(data) / 2
	w.Write(data[:h])
	if len(data) >= 1000 {
		w.Flush()
	}
	w.Write(data[h:])
	w.Close()
	return b.Bytes()
}

// synthRaw is the encoded events (before compression) of a synthetic
// job of 2 ranks, 200,000 events: 1.15 MB.
func synthRaw(t *testing.T) []byte {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 2, Events: 200_000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	for r := 0; r < 2; r++ {
		for _, p := range eventsPayloads(t, RankPath(dir, r)) {
			_, _, b := inflate(t, p)
			raw = append(raw, b...)
		}
	}
	return raw
}

// eventsPayloads returns the payloads of a rank file's events (E) blocks,
// in order.
func eventsPayloads(tb testing.TB, path string) [][]byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	br, err := NewBlockReader(f, filepath.Base(path))
	if err != nil {
		tb.Fatal(err)
	}
	var ps [][]byte
	for {
		kind, p, err := br.Next()
		if err == io.EOF {
			return ps
		}
		if err != nil {
			tb.Fatal(err)
		}
		if kind == BEvents {
			ps = append(ps, slices.Clone(p))
		}
	}
}

// TestInflateLevels: streams compress/flate writes at every level
// (HuffmanOnly, then 1 to 9) of random, repetitive and event data, 0 to
// 1 MiB, decode to the same bytes.
func TestInflateLevels(t *testing.T) {
	const size = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, size)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	// Repetitive: runs of one byte, phrases repeated at distances up to
	// 40,000, and a few random bytes.
	var rep []byte
	for len(rep) < size {
		switch rng.IntN(4) {
		case 0:
			rep = append(rep, bytes.Repeat([]byte{byte(rng.IntN(4))}, 1+rng.IntN(600))...)
		case 1, 2:
			if len(rep) > 10 {
				from := rng.IntN(len(rep) - 1)
				from = max(from, len(rep)-40000)
				rep = append(rep, rep[from:min(len(rep), from+3+rng.IntN(300))]...)
			}
		default:
			rep = append(rep, byte(rng.Uint32()), byte(rng.Uint32()))
		}
	}
	events := synthRaw(t)
	if len(events) < size {
		t.Fatalf("%d bytes of events", len(events))
	}
	lengths := []int{0, 1, 2, 3, 7, 8, 9, 100, 258, 259, 1000, 32767, 32768, 32769, 65535, 65536, 65537, 300_000, size}
	for _, d := range []struct {
		name string
		b    []byte
	}{{"random", random}, {"repetitive", rep}, {"zeros", make([]byte, size)}, {"events", events}} {
		for _, level := range []int{flate.HuffmanOnly, 1, 2, 3, 4, 5, 6, 7, 8, 9} {
			for _, n := range lengths {
				data := d.b[:n]
				checkInflate(t, fmt.Sprintf("%s level %d, %d bytes", d.name, level, n), compressed(t, data, level), data)
			}
		}
	}
}

// A DEFLATE writer for hand-made streams.
type bitWriter struct {
	b   []byte
	acc uint64
	n   uint
}

// bits writes v's k low bits, least significant first.
func (w *bitWriter) bits(v uint64, k uint) {
	w.acc |= (v & (1<<k - 1)) << w.n
	w.n += k
	for w.n >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// code writes a Huffman code of k bits, most significant first.
func (w *bitWriter) code(c uint64, k uint) {
	for i := int(k) - 1; i >= 0; i-- {
		w.bits(c>>uint(i)&1, 1)
	}
}

func (w *bitWriter) align() {
	if w.n > 0 {
		w.bits(0, 8-w.n)
	}
}

func (w *bitWriter) bytes() []byte {
	w.align()
	return w.b
}

// The length and distance symbols of RFC 1951 3.2.5.
var (
	tLenBase  = []int{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	tLenExtra = []uint{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	tDistBase = []int{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
		1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	tDistExtra = []uint{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

// symOf is the symbol (index in base) of v and its extra bits' value.
func symOf(base []int, v int) (int, int) {
	s := len(base) - 1
	for base[s] > v {
		s--
	}
	return s, v - base[s]
}

// A token of a hand-made block: a literal (dist 0), a match, or the end
// of block (lit -1).
type token struct{ lit, length, dist int }

// tCode is a canonical Huffman code: the codes of symbols by lengths.
type tCode struct {
	lens  []int
	codes []uint64
}

func canonical(lens []int) tCode {
	c := tCode{lens: lens, codes: make([]uint64, len(lens))}
	code := uint64(0)
	for l := 1; l <= 15; l++ {
		for s, sl := range lens {
			if sl == l {
				c.codes[s] = code
				code++
			}
		}
		code <<= 1
	}
	return c
}

func (c tCode) put(w *bitWriter, s int) {
	if c.lens[s] == 0 {
		panic(fmt.Sprintf("symbol %d has no code", s))
	}
	w.code(c.codes[s], uint(c.lens[s]))
}

// putTokens writes tokens with the codes lit and dist (an end of block
// after them).
func putTokens(w *bitWriter, lit, dist tCode, toks []token) {
	for _, tk := range toks {
		if tk.dist == 0 {
			lit.put(w, tk.lit)
			continue
		}
		s, x := symOf(tLenBase, tk.length)
		if tk.length == 258 {
			s, x = 28, 0
		}
		lit.put(w, 257+s)
		w.bits(uint64(x), tLenExtra[s])
		s, x = symOf(tDistBase, tk.dist)
		dist.put(w, s)
		w.bits(uint64(x), tDistExtra[s])
	}
	lit.put(w, 256)
}

// fixedCodes is block type 1's code.
func fixedCodes() (lit, dist tCode) {
	l := make([]int, 288)
	for s := range l {
		l[s] = int(fixedLitLen(s))
	}
	d := make([]int, 32)
	for s := range d {
		d[s] = 5
	}
	return canonical(l), canonical(d)
}

// putDynamic writes a dynamic block's header for the code lengths lit
// (257 to 286 of them) and dist (1 to 30), each length written with the
// code lengths' code of 16 codes of 4 bits (0 to 15; no repeats).
func putDynamic(w *bitWriter, final bool, lit, dist []int) {
	w.bits(map[bool]uint64{true: 1, false: 0}[final], 1)
	w.bits(2, 2)
	w.bits(uint64(len(lit)-257), 5)
	w.bits(uint64(len(dist)-1), 5)
	w.bits(19-4, 4)
	for _, s := range clenOrder {
		w.bits(map[bool]uint64{true: 4, false: 0}[s < 16], 3)
	}
	for _, l := range append(slices.Clone(lit), dist...) {
		w.code(uint64(l), 4)
	}
}

// play is what tokens decode to after out.
func play(out []byte, toks []token) []byte {
	for _, tk := range toks {
		if tk.dist == 0 {
			out = append(out, byte(tk.lit))
			continue
		}
		for i := 0; i < tk.length; i++ {
			out = append(out, out[len(out)-tk.dist])
		}
	}
	return out
}

// randomTokens: literals and matches of every length and distance the
// history allows.
func randomTokens(rng *rand.Rand, have, k int, lits []int) []token {
	var toks []token
	for i := 0; i < k; i++ {
		if have == 0 || rng.IntN(3) == 0 {
			toks = append(toks, token{lit: lits[rng.IntN(len(lits))]})
			have++
			continue
		}
		tk := token{length: 3 + rng.IntN(256), dist: 1 + rng.IntN(min(have, 32768))}
		switch rng.IntN(8) {
		case 0:
			tk.length = 258
		case 1:
			tk.dist = 1 + rng.IntN(min(have, 8))
		case 2:
			tk.dist = min(have, 32768)
		case 3:
			tk.length = 3 + rng.IntN(8)
		}
		toks = append(toks, tk)
		have += tk.length
	}
	return toks
}

// randomLens is a random complete code over the symbols syms (of an
// alphabet of size n), at most 15 bits long: a random binary tree whose
// splits keep a third of the symbols at least on each side.
func randomLens(rng *rand.Rand, n int, syms []int) []int {
	lens := make([]int, n)
	if len(syms) == 1 {
		lens[syms[0]] = 1
		return lens
	}
	var split func(s []int, depth int)
	split = func(s []int, depth int) {
		if len(s) == 1 {
			lens[s[0]] = depth
			return
		}
		lo := max(1, len(s)/3)
		k := lo + rng.IntN(max(1, len(s)-2*lo+1))
		split(s[:k], depth+1)
		split(s[k:], depth+1)
	}
	s := slices.Clone(syms)
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	split(s, 0)
	return lens
}

// TestInflateCodes: random streams of stored, fixed and dynamic blocks
// (random complete codes, single-code distance trees among them) whose
// tokens use every length and distance symbol with random extra bits,
// against the bytes they make by construction.
func TestInflateCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	flit, fdist := fixedCodes()
	for iter := 0; iter < 300; iter++ {
		var w bitWriter
		var want []byte
		nblocks := 1 + rng.IntN(4)
		for b := 0; b < nblocks; b++ {
			final := b == nblocks-1
			switch kind := rng.IntN(3); kind {
			case 0:
				w.bits(map[bool]uint64{true: 1, false: 0}[final], 1)
				w.bits(0, 2)
				w.align()
				k := rng.IntN(2000)
				if rng.IntN(5) == 0 {
					k = 0
				}
				w.bits(uint64(k), 16)
				w.bits(uint64(^uint16(k)), 16)
				for i := 0; i < k; i++ {
					c := byte(rng.Uint32())
					w.bits(uint64(c), 8)
					want = append(want, c)
				}
			case 1:
				w.bits(map[bool]uint64{true: 1, false: 0}[final], 1)
				w.bits(1, 2)
				lits := make([]int, 256)
				for i := range lits {
					lits[i] = i
				}
				toks := randomTokens(rng, len(want), rng.IntN(3000), lits)
				putTokens(&w, flit, fdist, toks)
				want = play(want, toks)
			case 2:
				// The symbols the block has codes for: some literals,
				// the end of block, some lengths; some distances.
				nlit := 257 + rng.IntN(30)
				syms := []int{256}
				var lits []int
				for s := 0; s < nlit; s++ {
					if s != 256 && rng.IntN(3) > 0 {
						syms = append(syms, s)
						if s < 256 {
							lits = append(lits, s)
						}
					}
				}
				if len(lits) == 0 {
					lits = []int{'x'}
					syms = append(syms, 'x')
				}
				toks := randomTokens(rng, len(want), rng.IntN(3000), lits)
				ndist := 1 + rng.IntN(30)
				var dsyms []int
				for _, tk := range toks {
					if tk.dist != 0 {
						s, _ := symOf(tLenBase, tk.length)
						if tk.length == 258 {
							s = 28
						}
						syms = append(syms, 257+s)
						s, _ = symOf(tDistBase, tk.dist)
						dsyms = append(dsyms, s)
						ndist = max(ndist, s+1)
					}
				}
				nlit = max(nlit, slices.Max(syms)+1)
				slices.Sort(syms)
				syms = slices.Compact(syms)
				if rng.IntN(4) > 0 {
					for s := 0; s < ndist; s++ {
						if rng.IntN(2) == 0 {
							dsyms = append(dsyms, s)
						}
					}
				}
				slices.Sort(dsyms)
				dsyms = slices.Compact(dsyms)
				ll := randomLens(rng, nlit, syms)
				dl := make([]int, ndist)
				if len(dsyms) > 0 {
					dl = randomLens(rng, ndist, dsyms)
				}
				putDynamic(&w, final, ll, dl)
				putTokens(&w, canonical(ll), canonical(dl), toks)
				want = play(want, toks)
			}
		}
		src := w.bytes()
		checkInflate(t, fmt.Sprintf("iteration %d", iter), src, want)
		if iter%30 == 0 {
			// Data after the final block is ignored; every prefix is
			// an error.
			checkInflate(t, fmt.Sprintf("iteration %d and more", iter), append(slices.Clone(src), 0xff, 0x00, 0x12), want)
			for k := range len(src) {
				if len(src) > 200 && k%17 != 0 && k < len(src)-16 {
					continue
				}
				checkBad(t, fmt.Sprintf("iteration %d, %d of %d bytes", iter, k, len(src)), src[:k])
			}
		}
	}
}

// TestInflateLongest: codes of 15 bits (literal/length and distance),
// a distance of 32768 and a length of 258, in a dynamic block after
// 32,768 bytes and in a fixed block after stored blocks.
func TestInflateLongest(t *testing.T) {
	// Literals 'A'.. of 1 to 13 bits, length 258 of 14, end of block
	// and 'N' of 15.
	ll := make([]int, 286)
	for i := 0; i < 13; i++ {
		ll['A'+i] = i + 1
	}
	ll[285], ll[256], ll['N'] = 14, 15, 15
	// Distances 0 to 13 of 1 to 14 bits, 28 and 29 of 15.
	dl := make([]int, 30)
	for i := 0; i < 14; i++ {
		dl[i] = i + 1
	}
	dl[28], dl[29] = 15, 15
	var toks []token
	for i := 0; i < 32768; i++ {
		toks = append(toks, token{lit: 'A' + i%14})
	}
	toks = append(toks, token{length: 258, dist: 32768}, token{length: 258, dist: 24577},
		token{length: 258, dist: 16385}, token{length: 258, dist: 20000}, token{lit: 'N'}, token{length: 258, dist: 1})
	var w bitWriter
	putDynamic(&w, true, ll, dl)
	putTokens(&w, canonical(ll), canonical(dl), toks)
	want := play(nil, toks)
	if len(want) != 32768+5*258+1 || want[32768] != want[0] || want[len(want)-1] != 'N' {
		t.Fatalf("the tokens play wrong: %d bytes", len(want))
	}
	checkInflate(t, "15-bit codes", w.bytes(), want)

	// Stored blocks of 32,768 bytes (in two: 65,535 at most each), then
	// a fixed block: length 258 at distance 32768, length 3 at 1, the
	// symbols with the most extra bits at their largest values.
	var f bitWriter
	var data []byte
	for _, k := range []int{30000, 0, 2768} {
		f.bits(0, 3)
		f.align()
		f.bits(uint64(k), 16)
		f.bits(uint64(^uint16(k)), 16)
		for i := 0; i < k; i++ {
			c := byte(i * 7 / 5)
			f.bits(uint64(c), 8)
			data = append(data, c)
		}
	}
	f.bits(1, 1)
	f.bits(1, 2)
	flit, fdist := fixedCodes()
	toks = []token{{length: 258, dist: 32768}, {length: 3, dist: 1}, {length: 257, dist: 32768}, {length: 130, dist: 24576}, {lit: 255}, {lit: 0}}
	putTokens(&f, flit, fdist, toks)
	want = play(data, toks)
	checkInflate(t, "fixed after stored", f.bytes(), want)
}

// TestInflateBad: what compress/flate refuses, inflateAll refuses.
func TestInflateBad(t *testing.T) {
	flit, fdist := fixedCodes()
	// fixedBlock is one final fixed block of toks then more's symbols.
	fixedBlock := func(toks []token, more func(w *bitWriter)) []byte {
		var w bitWriter
		w.bits(1, 1)
		w.bits(1, 2)
		for _, tk := range toks {
			if tk.dist == 0 {
				flit.put(&w, tk.lit)
			}
		}
		if more != nil {
			more(&w)
		}
		flit.put(&w, 256)
		return w.bytes()
	}
	// dyn is a final dynamic block of the code lengths ll and dl with
	// the literals 'a' and, if the codes have them, a match (4, 1).
	dyn := func(ll, dl []int) []byte {
		var w bitWriter
		putDynamic(&w, true, ll, dl)
		c := canonical(ll)
		if ll['a'] > 0 {
			c.put(&w, 'a')
		}
		if ll[256] > 0 {
			c.put(&w, 256)
		}
		return w.bytes()
	}
	lens := func(n int, l map[int]int) []int {
		s := make([]int, n)
		for k, v := range l {
			s[k] = v
		}
		return s
	}
	// A good block of each kind first: the bad ones differ from it in
	// one thing.
	checkInflate(t, "fixed", fixedBlock([]token{{lit: 'a'}}, nil), []byte("a"))
	checkInflate(t, "dynamic", dyn(lens(257, map[int]int{'a': 1, 256: 1}), lens(1, nil)), []byte("a"))
	checkInflate(t, "single distance code", dyn(lens(257, map[int]int{'a': 1, 256: 1}), lens(1, map[int]int{0: 1})), []byte("a"))

	checkBad(t, "block type 3", []byte{0x07, 0, 0})
	checkBad(t, "empty", nil)
	checkBad(t, "stored length's complement", []byte{0x01, 3, 0, 0xfc, 0xfe, 'a', 'b', 'c'})
	checkInflate(t, "stored", []byte{0x01, 3, 0, 0xfc, 0xff, 'a', 'b', 'c'}, []byte("abc"))
	checkBad(t, "stored cut short", []byte{0x01, 3, 0, 0xfc, 0xff, 'a', 'b'})
	checkBad(t, "not final", []byte{0x00, 3, 0, 0xfc, 0xff, 'a', 'b', 'c'})
	checkBad(t, "fixed symbol 286", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 286) }))
	checkBad(t, "fixed symbol 287", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 287) }))
	checkBad(t, "fixed distance 30", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 257); fdist.put(w, 30) }))
	checkBad(t, "fixed distance 31", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 257); fdist.put(w, 31) }))
	checkInflate(t, "fixed distance 1", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 257); fdist.put(w, 0) }), []byte("aaaa"))
	checkBad(t, "distance before the start", fixedBlock([]token{{lit: 'a'}}, func(w *bitWriter) { flit.put(w, 257); fdist.put(w, 1) }))
	checkBad(t, "distance before the start (none)", fixedBlock(nil, func(w *bitWriter) { flit.put(w, 257); fdist.put(w, 0) }))

	two := map[int]int{'a': 1, 256: 1}
	checkBad(t, "literal code over-subscribed", dyn(lens(257, map[int]int{'a': 1, 'b': 1, 256: 1}), lens(1, nil)))
	checkBad(t, "literal code incomplete", dyn(lens(257, map[int]int{'a': 2, 'b': 2, 256: 2}), lens(1, nil)))
	checkBad(t, "literal code of one 2-bit code", dyn(lens(257, map[int]int{256: 2}), lens(1, nil)))
	checkBad(t, "distance code incomplete (unused)", dyn(lens(257, two), lens(3, map[int]int{0: 2, 1: 2})))
	checkBad(t, "distance code over-subscribed (unused)", dyn(lens(257, two), lens(3, map[int]int{0: 1, 1: 1, 2: 1})))
	checkBad(t, "distance code of one 2-bit code", dyn(lens(257, two), lens(3, map[int]int{2: 2})))
	checkBad(t, "no end of block", dyn(lens(257, map[int]int{'a': 1, 'b': 1}), lens(1, nil)))
	checkBad(t, "no literal code", dyn(lens(257, nil), lens(1, nil)))
	checkInflate(t, "end of block alone", func() []byte {
		ll := lens(257, map[int]int{256: 1})
		var w bitWriter
		putDynamic(&w, true, ll, lens(30, nil))
		canonical(ll).put(&w, 256)
		return w.bytes()
	}(), []byte{})

	// A match in a block without distance codes; with a single
	// distance code, its unused code.
	for _, c := range []struct {
		name string
		dl   []int
		bit  uint64
		ok   bool
	}{{"no distance code", lens(1, nil), 0, false}, {"single distance code", lens(1, map[int]int{0: 1}), 0, true},
		{"single distance code's unused code", lens(1, map[int]int{0: 1}), 1, false}} {
		ll := lens(258, map[int]int{'a': 2, 256: 2, 257: 1})
		var w bitWriter
		putDynamic(&w, true, ll, c.dl)
		lc := canonical(ll)
		lc.put(&w, 'a')
		lc.put(&w, 257)
		w.bits(c.bit, 1)
		lc.put(&w, 256)
		if c.ok {
			checkInflate(t, c.name, w.bytes(), []byte("aaaa"))
		} else {
			checkBad(t, c.name, w.bytes())
		}
	}

	// Headers: too many codes, a bad code lengths' code, repeats.
	header := func(hlit, hdist, hclen uint64, clen map[int]uint64, syms func(w *bitWriter)) []byte {
		var w bitWriter
		w.bits(1, 1)
		w.bits(2, 2)
		w.bits(hlit, 5)
		w.bits(hdist, 5)
		w.bits(hclen, 4)
		for _, s := range clenOrder[:hclen+4] {
			w.bits(clen[int(s)], 3)
		}
		syms(&w)
		w.bits(0, 32)
		return w.bytes()
	}
	// The code lengths' code: 1 (1 bit: "0"), 0, 16, 17, 18 (3 bits:
	// "100", "101", "110", "111").
	cl := map[int]uint64{1: 1, 16: 3, 17: 3, 18: 3, 0: 3}
	c1 := func(w *bitWriter) { w.code(0, 1) }
	c16 := func(w *bitWriter, x uint64) { w.code(5, 3); w.bits(x, 2) }
	c17 := func(w *bitWriter, x uint64) { w.code(6, 3); w.bits(x, 3) }
	c18 := func(w *bitWriter, x uint64) { w.code(7, 3); w.bits(x, 7) }
	// 257 literal/length lengths, 1 distance length: 97 zeros, 1 ('a'),
	// 158 zeros, 1 (the end of block), then the distance's.
	lits := func(w *bitWriter) {
		c18(w, 97-11)
		c1(w)
		c18(w, 138-11)
		c18(w, 20-11)
		c1(w)
	}
	// 'a' is "0", the end of block "1".
	data := func(w *bitWriter) {
		w.code(0, 1)
		w.code(1, 1)
	}
	checkInflate(t, "header", header(0, 0, 15, cl, func(w *bitWriter) { lits(w); c1(w); data(w) }), []byte("a"))
	checkBad(t, "header, 4 code lengths' lengths, no code", header(0, 0, 0, map[int]uint64{16: 1, 17: 2, 18: 2}, func(w *bitWriter) {
		// 16: "0", 17: "10", 18: "11"; no length but 0: no code at all.
		w.code(3, 2)
		w.bits(127, 7)
		w.code(3, 2)
		w.bits(120-11, 7)
	}))
	// 30 and 31 more zeros: the header is complete with one more
	// literal/length or distance code of no length.
	zeros30 := func(w *bitWriter) { c17(w, 7); c17(w, 7); c17(w, 7) }
	zeros31 := func(w *bitWriter) { c17(w, 7); c17(w, 7); c18(w, 0) }
	checkInflate(t, "286 literal/length codes", header(29, 0, 15, cl, func(w *bitWriter) { lits(w); c18(w, 29-11); c1(w); data(w) }), []byte("a"))
	checkInflate(t, "30 distance codes", header(0, 29, 15, cl, func(w *bitWriter) { lits(w); c1(w); c18(w, 29-11); data(w) }), []byte("a"))
	checkBad(t, "287 literal/length codes", header(30, 0, 15, cl, func(w *bitWriter) { lits(w); zeros30(w); c1(w); data(w) }))
	checkBad(t, "288 literal/length codes", header(31, 0, 15, cl, func(w *bitWriter) { lits(w); zeros31(w); c1(w); data(w) }))
	checkBad(t, "31 distance codes", header(0, 30, 15, cl, func(w *bitWriter) { lits(w); c1(w); zeros30(w); data(w) }))
	checkBad(t, "32 distance codes", header(0, 31, 15, cl, func(w *bitWriter) { lits(w); c1(w); zeros31(w); data(w) }))
	checkBad(t, "code lengths' code incomplete", header(0, 0, 15, map[int]uint64{1: 1, 16: 3, 17: 3, 18: 3},
		func(w *bitWriter) { lits(w); c1(w); data(w) }))
	checkBad(t, "code lengths' code over-subscribed", header(0, 0, 15, map[int]uint64{1: 1, 16: 1, 17: 3, 18: 3, 0: 3},
		func(w *bitWriter) { lits(w); c1(w); data(w) }))
	checkBad(t, "code lengths' code empty", header(0, 0, 15, map[int]uint64{}, func(w *bitWriter) { lits(w); c1(w); data(w) }))
	checkBad(t, "repeat with no length before", header(0, 0, 15, cl, func(w *bitWriter) { c16(w, 0); lits(w); c1(w); data(w) }))
	checkBad(t, "zeros beyond the codes", header(0, 0, 15, cl, func(w *bitWriter) { lits(w); c17(w, 0); data(w) }))
	checkBad(t, "repeat beyond the codes", header(0, 0, 15, cl, func(w *bitWriter) { lits(w); c16(w, 0); data(w) }))
	// A repeat may cross from the literal/length lengths to the
	// distance lengths: 'a' 1 bit, 255 and the end of block 2 bits
	// ("10", "11"), four distance codes of 2 bits: 97 zeros, 1, 157
	// zeros, 2, then 2 repeated 5 times. The code lengths' code: 1, 2,
	// 18 of 2 bits ("00", "01", "10"), 0 and 16 of 3 ("110", "111").
	checkInflate(t, "repeat across the two codes", header(0, 3, 15, map[int]uint64{1: 2, 2: 2, 18: 2, 0: 3, 16: 3}, func(w *bitWriter) {
		w.code(2, 2)
		w.bits(97-11, 7)
		w.code(0, 2)
		w.code(2, 2)
		w.bits(138-11, 7)
		w.code(2, 2)
		w.bits(19-11, 7)
		w.code(1, 2)
		w.code(7, 3)
		w.bits(5-3, 2)
		w.code(0, 1) // 'a'
		w.code(3, 2) // end of block
	}), []byte("a"))
}

// TestInflateEvents: events blocks decode through inflateAll as through
// compress/flate, and its errors keep the reader's wording.
func TestInflateEvents(t *testing.T) {
	raw := synthRaw(t)[:100_000]
	p := compressed(t, raw, flate.BestSpeed)
	got, err := inflateAll(make([]byte, 0, 10), p, len(raw))
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("%v", err)
	}
	for _, k := range []int{0, 1, len(p) / 2, len(p) - 1} {
		if _, err := inflateAll(nil, p[:k], len(raw)); err == nil {
			t.Fatalf("%d bytes of %d decoded", k, len(p))
		}
	}
	if _, err = inflateAll(nil, []byte{0x01, 3, 0, 0xfc, 0xff, 'a'}, 3); !errors.Is(err, errInflateEOF) {
		t.Fatalf("stored block cut short: %v", err)
	}
	// An events block whose header's raw length is not the stream's:
	// the reader's words (those of its compress/flate days).
	block := func(rawLen int, z []byte) []byte {
		return append(binary.AppendUvarint([]byte{1, 1}, uint64(rawLen)), z...)
	}
	for _, c := range []struct {
		p    []byte
		want string
	}{
		{block(len(raw)+1, p), fmt.Sprintf("decompressing events: %d bytes, header says %d", len(raw), len(raw)+1)},
		{block(len(raw)-1, p), fmt.Sprintf("decompressing events: %d bytes, header says %d", len(raw), len(raw)-1)},
		{block(len(raw), p[:len(p)/2]), "decompressing events: DEFLATE stream: "},
		{block(3, []byte{0x01, 3, 0, 0xfc, 0xfe, 'a', 'b', 'c'}), "decompressing events: DEFLATE stream: stored block's length and its complement differ (near byte 1)"},
	} {
		_, _, err := DecodeEvents(c.p, nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("got %v, want %q", err, c.want)
		}
	}
}

// FuzzInflate: when compress/flate decodes an input to n bytes,
// inflateAll decodes it to the same n bytes (and refuses n+1 and n-1),
// into an empty buffer and into one with room; when compress/flate
// refuses it, inflateAll does.
func FuzzInflate(f *testing.F) {
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		for _, s := range []string{"", "a", "abcabcabcabcabcabc", "the events of the events block of the events"} {
			var b bytes.Buffer
			w, _ := flate.NewWriter(&b, level)
			w.Write([]byte(s))
			w.Close()
			f.Add(b.Bytes())
		}
	}
	f.Add([]byte{0x01, 3, 0, 0xfc, 0xff, 'a', 'b', 'c'})
	f.Add([]byte{0x07, 0, 0})
	f.Fuzz(func(t *testing.T, src []byte) {
		const most = 1 << 22
		want, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(src)), most+1))
		if len(want) > most {
			return
		}
		got, gerr := inflateAll(nil, src, len(want))
		if err != nil {
			if gerr == nil {
				t.Fatalf("compress/flate: %v; inflateAll: %d bytes", err, len(got))
			}
			if _, gerr := inflateAll(make([]byte, 0, len(want)+len(src)%300), src, len(want)); gerr == nil {
				t.Fatalf("compress/flate: %v; inflateAll into a buffer with room: no error", err)
			}
			return
		}
		if gerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("compress/flate: %d bytes; inflateAll: %d bytes, %v", len(want), len(got), gerr)
		}
		// Into a buffer that has the room already (the reader's, kept
		// from block to block: the fast loop from the first byte), after
		// a prefix, with 0 to 299 bytes to spare.
		dst := make([]byte, 5, 5+len(want)+len(src)%300)
		if got, err := inflateAll(dst, src, len(want)); err != nil || !bytes.Equal(got[5:], want) {
			t.Fatalf("into a buffer of %d bytes: %d bytes, %v", cap(dst), len(got)-5, err)
		}
		if _, err := inflateAll(nil, src, len(want)+1); err == nil {
			t.Fatalf("decoded as %d bytes", len(want)+1)
		}
		if len(want) > 0 {
			if _, err := inflateAll(nil, src, len(want)-1); err == nil {
				t.Fatalf("decoded as %d bytes", len(want)-1)
			}
		}
	})
}
