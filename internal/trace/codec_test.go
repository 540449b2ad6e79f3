package trace

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"math"
	"math/rand"
	"testing"
)

// randEvent makes an event of any kind and flags the recorder can write,
// with field values drawn from small, typical and extreme ranges; cheap
// is a tight loop of one call (the smallest encoding: 7 bytes in an E
// block). The fields a raw record cannot hold (function above 1023,
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
// cheapest call) the E and W encoders' output decodes to the same events,
// alone and framed in a rank file.
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
		for _, raw := range []bool{false, true} {
			in := eventStream(rng, n, raw)
			tid := rng.Intn(1 << 20)
			var p []byte
			var dec func([]byte, []Event) (int, []Event, error)
			if raw {
				p, dec = AppendRaw(nil, tid, in), DecodeRaw
			} else {
				var err error
				if p, err = AppendEvents(nil, tid, in, fw, &scratch); err != nil {
					t.Fatal(err)
				}
				dec = DecodeEvents
			}
			// Framed as a block of a file, read back by the block reader.
			var file bytes.Buffer
			bw, _ := NewBlockWriter(&file)
			kind := byte(BEvents)
			if raw {
				kind = BRaw
			}
			bw.Block(kind, p)
			bw.Flush()
			br, err := NewBlockReader(&file, "f")
			if err != nil {
				t.Fatal(err)
			}
			k, q, err := br.Next()
			if err != nil || k != kind || !bytes.Equal(q, p) {
				t.Fatalf("iteration %d: block %q, %v", iter, k, err)
			}
			gtid, out, err := dec(q, nil)
			if err != nil {
				t.Fatalf("iteration %d (raw %v, %d events): %v", iter, raw, n, err)
			}
			if gtid != tid || len(out) != len(in) {
				t.Fatalf("iteration %d (raw %v): thread %d, %d events; want %d, %d", iter, raw, gtid, len(out), tid, len(in))
			}
			for i := range in {
				if out[i] != in[i] {
					t.Fatalf("iteration %d (raw %v) event %d of %d:\n got %+v\nwant %+v", iter, raw, i, n, out[i], in[i])
				}
			}
		}
	}
}

// TestCheapLoop: 1,000 calls of a cheap function on one rank (7 bytes
// each in an E block) convert.
func TestCheapLoop(t *testing.T) {
	var evs []Event
	tk := uint64(1000)
	for i := 0; i < 1000; i++ {
		evs = append(evs, cheapEvent(&tk))
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
// past the end and an earlier error (x < 0) with -1.
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
			if _, x := uvAtSlow(enc[:len(enc)-1], 0); x != -1 {
				t.Errorf("%#x cut to %d bytes: next %d, want -1", v, len(enc)-1, x)
			}
		}
	}
	if _, x := uvAtSlow(bytes.Repeat([]byte{0xff}, 11), 0); x != -1 {
		t.Errorf("11 continuation bytes: next %d, want -1", x)
	}
	for _, x := range []int{-1, 4, 5} {
		if _, nx := uvAtSlow([]byte{0x81, 0x82, 0x83, 0x84}, x); nx != -1 {
			t.Errorf("offset %d of 4 bytes: next %d, want -1", x, nx)
		}
	}
	if checked != 57*20*18 {
		t.Fatalf("%d checked", checked)
	}
}
