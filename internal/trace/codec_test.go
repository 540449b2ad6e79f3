package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// randEvent makes an event of any kind and flags the recorder can write,
// with field values drawn from small, typical and extreme ranges; cheap
// is a tight loop of one call (the smallest encoding: 3 bytes in an E
// block, 7 in format version 5). The fields a raw record cannot hold (function above 1023,
// communicator above 2046) are kept within them when raw is set.
func randEvent(rng *rand.Rand, t *uint64, pc uint64, raw bool) Event {
	pick := func(vals ...int64) int64 { return vals[rng.Intn(len(vals))] }
	num := func() int64 {
		switch rng.Intn(4) {
		case 0:
			return pick(0, 1, -1, -2, 127, 128, -129, 1<<31-1, -1<<31)
		case 1:
			return rng.Int63n(100)
		case 2:
			return rng.Int63() - rng.Int63()
		}
		return int64(int32(rng.Uint32()))
	}
	e := Event{Kind: uint8(KCall + rng.Intn(KPost)), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	e.Flags = uint8(rng.Intn(32))
	if raw {
		e.Fn = uint16(rng.Intn(1024))
		e.Comm = int32(rng.Intn(2048)) - 1
	} else {
		e.Fn = uint16(pick(0, 1, 127, 128, 1023, 1024, math.MaxUint16, rng.Int63n(math.MaxUint16+1)))
		e.Comm = int32(num())
	}
	switch rng.Intn(3) {
	case 0:
		*t += uint64(rng.Intn(64))
	case 1:
		*t += uint64(rng.Int63n(1 << 40))
	default:
		*t += uint64(rng.Intn(1 << 21))
	}
	e.T0 = *t
	switch rng.Intn(3) {
	case 0:
		e.T1 = e.T0 + uint64(rng.Intn(128))
	case 1:
		e.T1 = e.T0 + uint64(rng.Intn(1<<21))
	default:
		e.T1 = e.T0 + uint64(rng.Int63n(1<<40))
	}
	*t = e.T1
	e.PC = pc
	if rng.Intn(4) == 0 {
		e.PC = rng.Uint64()
	}
	if e.Flags&FReq != 0 || e.Kind == KComplete || e.Kind == KPost {
		e.Req = uint64(pick(0, 1, 0x7f00deadbeef, -1, rng.Int63()))
	}
	if e.Kind == KPost {
		e.Flags |= FReq
	}
	if e.Flags&(FSend|FColl) != 0 {
		e.SPeer, e.STag, e.SBytes = int32(num()), int32(num()), num()
	}
	if e.Flags&FRecv != 0 {
		e.RPeer, e.RTag, e.RBytes = int32(num()), int32(num()), num()
	}
	return e
}

// cheapEvent is one iteration of a loop of one cheap call (MPI_Comm_get_attr
// 1,000 times): same function, communicator 0, times a few ticks apart.
func cheapEvent(t *uint64) Event {
	e := Event{Kind: KCall, Fn: 3, Comm: 0, T0: *t + 5, T1: *t + 9, PC: 0x401234, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	*t = e.T1
	return e
}

// cplRun appends what a completion call of several requests records: k
// completions at one time, of a send, a collective, a one-sided
// operation, a receive (its source, tag and bytes, often the same as the
// previous one's; from MPI_PROC_NULL, the defaults), an MPI_Isendrecv, an MPI-IO operation or a cancelled
// request; their handles pointers, MPICH's sign-extended integers, or
// (rarely) values a completions record cannot hold.
func cplRun(rng *rand.Rand, evs []Event, k int, t *uint64) []Event {
	*t += uint64(rng.Intn(1 << 12))
	fn := uint16(rng.Intn(1024))
	src, tag, size := int32(rng.Intn(4)), int32(rng.Intn(3)), int64(8)
	for ; k > 0; k-- {
		e := Event{Kind: KComplete, Fn: fn, Comm: -1, T0: *t, T1: *t, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
		switch rng.Intn(10) {
		case 0:
			e.Req = uint64(int64(int32(0xac000000 + rng.Intn(1<<16))))
		case 1:
			e.Req = rng.Uint64()
		default:
			e.Req = 0x55d000000000 + uint64(rng.Intn(1<<20))*0x80
		}
		if rng.Intn(3) == 0 {
			src, tag, size = int32(rng.Intn(4))-1, int32(rng.Intn(3)), int64(rng.Intn(1<<20))
		}
		switch rng.Intn(10) {
		case 8:
			// A receive from MPI_PROC_NULL: its receive fields are the
			// defaults a record starts with.
			e.Flags = FRecv | FLocal
			e.RTag = -1
		case 0:
			e.Flags = FColl
		case 1:
			e.Flags = 0 // one-sided
		case 2, 3:
			e.Flags = FRecv | FLocal
			e.RPeer, e.RTag, e.RBytes = src, tag, size
		case 4:
			e.Flags = FSend | FRecv | FLocal
			e.RPeer, e.RTag, e.RBytes = src, tag, size
		case 5:
			e.Flags = FLocal // MPI-IO
			e.RBytes = size
		case 6:
			e.Flags = FRecv | FLocal
			e.RPeer = Cancelled
		default:
			e.Flags = FSend
		}
		evs = append(evs, e)
	}
	return evs
}

func eventStream(rng *rand.Rand, n int, raw bool) []Event {
	evs := make([]Event, 0, n)
	t := uint64(rng.Int63n(1 << 50))
	pc := uint64(0x400000 + rng.Intn(1<<20))
	cheap := rng.Intn(3) == 0 // a stream of cheap calls only
	for len(evs) < n {
		switch {
		case cheap || rng.Intn(4) == 0:
			evs = append(evs, cheapEvent(&t))
		case rng.Intn(8) == 0:
			evs = cplRun(rng, evs, min(1+rng.Intn(300), n-len(evs)), &t)
		default:
			evs = append(evs, randEvent(rng, &t, pc, raw))
		}
	}
	return evs
}

// TestCodecProperty: whatever the events (every kind, flag set and field
// size the recorder can write, streams of 0 to 5,000 events, loops of the
// cheapest call) the E encoders' output (format versions 6 and 5) and the
// W encoder's decode to the same events, alone and framed in a rank file
// of that version.
func TestCodecProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	sizes := []int{0, 1, 2, 7, 8, 9, 100, 1000, 5000}
	for iter := 0; iter < 300; iter++ {
		n := sizes[iter%len(sizes)]
		if iter >= 2*len(sizes) {
			n = rng.Intn(2000)
		}
		for _, enc := range []string{"v6", "v5", "raw"} {
			raw := enc == "raw"
			in := eventStream(rng, n, raw)
			tid := rng.Intn(1 << 20)
			var p []byte
			ver := Version
			kind := byte(BEvents)
			var err error
			switch enc {
			case "raw":
				p, kind = AppendRaw(nil, tid, in), BRaw
			case "v5":
				p, err = appendEventsV5(nil, tid, in, fw, &scratch)
				ver = 5
			default:
				p, err = AppendEvents(nil, tid, in, fw, &scratch)
			}
			if err != nil {
				t.Fatal(err)
			}
			// Framed as a block of a file, read back by the block reader.
			var file bytes.Buffer
			bw, _ := newBlockWriterVersion(&file, ver)
			bw.Block(kind, p)
			bw.Flush()
			br, err := NewBlockReader(&file, "f")
			if err != nil {
				t.Fatal(err)
			}
			if br.Version() != ver {
				t.Fatalf("iteration %d (%s): version %d, want %d", iter, enc, br.Version(), ver)
			}
			k, q, err := br.Next()
			if err != nil || k != kind || !bytes.Equal(q, p) {
				t.Fatalf("iteration %d: block %q, %v", iter, k, err)
			}
			st := evDecoder{ver: br.Version()}
			dec := st.decode
			if raw {
				dec = DecodeRaw
			}
			gtid, out, err := dec(q, nil)
			if err != nil {
				t.Fatalf("iteration %d (%s, %d events): %v", iter, enc, n, err)
			}
			if gtid != tid || len(out) != len(in) {
				t.Fatalf("iteration %d (%s): thread %d, %d events; want %d, %d", iter, enc, gtid, len(out), tid, len(in))
			}
			for i := range in {
				if out[i] != in[i] {
					t.Fatalf("iteration %d (%s) event %d of %d:\n got %+v\nwant %+v", iter, enc, i, n, out[i], in[i])
				}
			}
		}
	}
}

// inflate returns the encoded events of an events block's payload p.
func inflate(t *testing.T, p []byte) (tid, n int, raw []byte) {
	t.Helper()
	d := dec{b: p}
	tid, n = d.n(1<<31), d.n(maxRaw)
	size := d.n(maxRaw)
	if d.err != nil {
		t.Fatal(d.err)
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(d.b)))
	if err != nil || len(raw) != size {
		t.Fatalf("%d bytes (header: %d), %v", len(raw), size, err)
	}
	return tid, n, raw
}

// TestEventsV6Bytes: format version 6's encoding of five events, byte by
// byte: a call (a new shape: slot 0, the shape in full), the same call
// again (slot 1 and its times), an MPI_Isend (a new shape, its callsite
// a delta from the call's, its request), another of the same shape (slot
// 2, its request a delta from the previous one) and a send's completion
// (a new shape without callsite, its request a delta back).
func TestEventsV6Bytes(t *testing.T) {
	isend := func(t0, t1, req uint64) Event {
		return Event{Kind: KCall, Flags: FSend | FReq, Fn: 2, PC: 0x401002, T0: t0, T1: t1, Req: req, SPeer: 1, STag: 7, SBytes: 8, RPeer: -1, RTag: -1}
	}
	in := []Event{
		call(4, 1000, 1050),
		call(4, 1100, 1130),
		isend(1200, 1210, 0x5000),
		isend(1300, 1305, 0x5100),
		{Kind: KComplete, Flags: FSend, Fn: 4, Comm: -1, T0: 1400, T1: 1400, Req: 0x5000, SPeer: -1, STag: -1, RPeer: -1, RTag: -1},
	}
	want := []byte{
		0xd0, 0x0f, 50, 0, KCall, 0, 4, 0, 0x88, 0xc0, 0x80, 0x04, // t0 1000 (zigzag 2000), 50, new: call, fn 4, comm 0, pc 0x401004 (zigzag)
		100, 30, 1, // t0 - t1 = 50 (zigzag 100), 30, slot 1
		0x8c, 0x01, 10, 0, KCall, FSend | FReq, 2, 0, 3, 2, 14, 16, 0x80, 0xc0, 0x02, // 70, 10, new: pc -2, peer 1, tag 7, bytes 8; request 0x5000
		0xb4, 0x01, 5, 2, 0x80, 0x04, // 90, 5, slot 2, request +0x100
		0xbe, 0x01, 0, 0, KComplete, FSend, 4, 1, 0x83, 0xc0, 0x80, 0x04, 1, 1, 0, 0xff, 0x03, // 95, 0, new: comm -1, pc -0x401002, peer -1, tag -1, bytes 0; request -0x100
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	p, err := AppendEvents(nil, 7, in, fw, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	tid, n, raw := inflate(t, p)
	if tid != 7 || n != len(in) || !bytes.Equal(raw, want) {
		t.Fatalf("thread %d, %d events, stream\n% x\nwant\n% x", tid, n, raw, want)
	}
	_, out, err := DecodeEvents(p, nil)
	if err != nil || !slices.Equal(out, in) {
		t.Fatalf("decoded %v:\n%+v\nwant\n%+v", err, out, in)
	}
}

// TestEventsV6FullDictionary: a block of more shapes than the dictionary
// holds (maxShapes + 5 collectives of different byte counts, twice)
// decodes to its events; the first maxShapes shapes take slots (a
// repeat is its times and a two- or three-byte slot), the 5 others are
// written in full each time.
func TestEventsV6FullDictionary(t *testing.T) {
	var in []Event
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < maxShapes+5; i++ {
			e := coll(6, uint64(10*i), uint64(10*i+3), int64(i))
			in = append(in, e)
		}
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	p, err := AppendEvents(nil, 1, in, fw, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	var st evDecoder
	_, out, err := st.decode(p, nil)
	if err != nil || !slices.Equal(out, in) {
		t.Fatalf("%v, %d events, want %d", err, len(out), len(in))
	}
	if len(st.dict) != maxShapes {
		t.Errorf("dictionary of %d shapes, want %d", len(st.dict), maxShapes)
	}
	// The stream: each event's times (t0 - the previous t1: 7, or back
	// to 0 at the second pass; 3), then slot 0 and its shape, or at the
	// second pass the slots 1 to maxShapes and 5 shapes in full again.
	var want enc
	pc := uint64(0)
	for i := range in {
		if i == 0 {
			want.i(0)
		} else {
			want.i(int64(in[i].T0 - in[i-1].T1))
		}
		want.u(3)
		if i < maxShapes+5 || i-(maxShapes+5) >= maxShapes {
			want.b = append(want.b, 0)
			want.shape(&in[i], pc)
			pc = in[i].PC
		} else {
			want.u(uint64(i - (maxShapes + 5) + 1))
		}
	}
	if _, _, raw := inflate(t, p); !bytes.Equal(raw, want.b) {
		t.Errorf("stream of %d bytes, want %d", len(raw), len(want.b))
	}
}

// TestEventsCutShort: an events block whose stream ends early (any
// prefix of a stream of every kind of event), or whose events name a
// slot the dictionary does not hold or a kind that does not exist, is an
// error, never a panic, in format versions 6 and 5.
func TestEventsCutShort(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	in := eventStream(rng, 300, false)
	for _, ver := range []int{5, Version} {
		appendEvents := AppendEvents
		if ver == 5 {
			appendEvents = appendEventsV5
		}
		p, err := appendEvents(nil, 1, in, fw, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		_, _, raw := inflate(t, p)
		st := evDecoder{ver: ver}
		for i := 0; i < len(raw); i++ {
			q, err := appendEventsBlock(nil, 1, len(in), raw[:i], fw, &scratch)
			if err != nil {
				t.Fatal(err)
			}
			if _, out, err := st.decode(q, nil); err == nil {
				t.Fatalf("version %d, stream cut to %d of %d bytes: %d events, no error", ver, i, len(raw), len(out))
			}
		}
	}
	for _, c := range []struct {
		ver  int
		raw  []byte
		want string
	}{
		{Version, []byte{2, 1, 5}, "event 0 of 1: slot 5 of a dictionary of 0"},
		{Version, []byte{2, 1, 0, KCall, 0, 1, 0, 2, 2, 1, 2}, "event 1 of 2: slot 2 of a dictionary of 1"},
		{Version, []byte{2, 1, 0, 9, 0, 1, 0, 2}, "event 0 of 1: unknown kind 9"},
		{Version, []byte{2, 1, 0, KCall, 0, 0x80, 0x80, 0x04, 0, 2}, "event 0 of 1: function 65536 exceeds 65535"},
		{Version, []byte{2, 1, 0, KCall, 0, 1, 0, 0x80}, "event 0 of 1: payload too short"},
		// A function cut short, then a byte below 0x80 (the varint
		// readers once read before the stream's start there).
		{5, []byte{KCall, 0, 0x80, 0x80, 0x80, 0x80, 0x80}, "event 0 of 1: payload too short"},
		{5, []byte{KCall, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1, 1, 1, 1}, "event 0 of 1: payload too short"},
	} {
		n := 1
		if strings.HasPrefix(c.want, "event 1 of 2") {
			n = 2
		}
		q, err := appendEventsBlock(nil, 1, n, c.raw, fw, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		st := evDecoder{ver: c.ver}
		if _, _, err := st.decode(q, nil); err == nil || err.Error() != c.want {
			t.Errorf("version %d, % x: %v, want %q", c.ver, c.raw, err, c.want)
		}
	}
}

// TestCheapLoop: 1,000 calls of a cheap function on one rank (3 bytes
// each in an E block after the first: a time delta, a duration, a slot)
// convert.
func TestCheapLoop(t *testing.T) {
	var evs []Event
	tk := uint64(1000)
	for i := 0; i < 1000; i++ {
		evs = append(evs, cheapEvent(&tk))
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	p, err := AppendEvents(nil, 1, evs, fw, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	// The first: t0 1005 (2 bytes), 4, slot 0, the shape (kind, flags,
	// function 3, communicator 0, callsite 0x401234 in 4 bytes).
	if _, _, raw := inflate(t, p); len(raw) != 12+999*3 {
		t.Errorf("%d bytes, want %d", len(raw), 12+999*3)
	}
	job := t.TempDir()
	synthRank(t, job, 0, 1, evs, 1000, nil, true)
	r, err := OpenRank(RankPath(job, 0))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := r.Scan(func(tid int, evs []Event) error { n += len(evs); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1000 {
		t.Errorf("%d events, want 1000", n)
	}
}

// TestUvAtSlow: uvAtSlow (the varints of two bytes or more; next reads
// one-byte ones and, with a byte after, two-byte ones inline) reads what
// binary.Uvarint reads, for values of 2 to 10 bytes at every distance from
// the end of the buffer (its two-, three- and four-byte paths and the
// general one), and marks a varint cut short, one of 11 bytes, an offset
// past the end and an earlier error (xCut) with xCut.
func TestUvAtSlow(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	checked := 0
	for n := 8; n <= 64; n++ {
		for k := 0; k < 20; k++ {
			v := rng.Uint64() | 1<<(n-1)
			if n < 64 {
				v &= 1<<n - 1
			}
			enc := binary.AppendUvarint(nil, v)
			for pre := 0; pre < 3; pre++ {
				for post := 0; post < 6; post++ {
					b := make([]byte, pre, pre+len(enc)+post)
					rng.Read(b)
					b = append(b, enc...)
					for i := 0; i < post; i++ {
						b = append(b, byte(rng.Intn(256)))
					}
					got, x := uvAtSlow(b, pre)
					if got != v || x != pre+len(enc) {
						t.Fatalf("%#x (%d bytes, %d before, %d after): %#x, next %d", v, len(enc), pre, post, got, x)
					}
					checked++
				}
			}
			if _, x := uvAtSlow(enc[:len(enc)-1], 0); x != xCut {
				t.Errorf("%#x cut to %d bytes: next %d, want xCut", v, len(enc)-1, x)
			}
		}
	}
	if _, x := uvAtSlow(bytes.Repeat([]byte{0xff}, 11), 0); x != xCut {
		t.Errorf("11 continuation bytes: next %d, want xCut", x)
	}
	for _, x := range []int{-1, 4, 5, xCut} {
		if _, nx := uvAtSlow([]byte{0x81, 0x82, 0x83, 0x84}, x); nx != xCut {
			t.Errorf("offset %d of 4 bytes: next %d, want xCut", x, nx)
		}
	}
	if checked != 57*20*18 {
		t.Fatalf("%d checked", checked)
	}
}
