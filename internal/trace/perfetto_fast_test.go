package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/testutil"
)

// numbers are edge values of the writer's integer formatting (each power
// of ten and its neighbours, the limits) and random ones of every length.
func numbers() []uint64 {
	v := []uint64{0, math.MaxUint64, math.MaxInt64, math.MaxInt64 + 1}
	for p := uint64(1); ; p *= 10 {
		v = append(v, p-1, p, p+1)
		if p > math.MaxUint64/10 {
			break
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		v = append(v, r.Uint64()>>r.Intn(64))
	}
	return v
}

// TestAppendNumbers: the writer's integers and hexadecimal flow ids are
// strconv's and fmt's, appended after what the buffer holds.
func TestAppendNumbers(t *testing.T) {
	for _, v := range numbers() {
		if got, want := string(appendUint([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Fatalf("appendUint(%d) = %s, want %s", v, got, want)
		}
		if got, want := string(appendInt([]byte("x"), int64(v))), "x"+strconv.FormatInt(int64(v), 10); got != want {
			t.Fatalf("appendInt(%d) = %s, want %s", int64(v), got, want)
		}
		if got, want := string(appendHex16([]byte("x"), v)), fmt.Sprintf("x%016x", v); got != want {
			t.Fatalf("appendHex16(%#x) = %s, want %s", v, got, want)
		}
	}
}

// TestAppendUsRandom: appendUs against the integer nanoseconds written by
// fmt, for times of every length, fractions of a nanosecond included.
func TestAppendUsRandom(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20000; i++ {
		v := float64(r.Uint64()>>r.Intn(64)) / 8
		if r.Intn(2) == 0 {
			v = -v
		}
		if !(v > -9e15 && v < 9e15) {
			continue
		}
		ns := int64(math.Round(v))
		want := fmt.Sprintf("%d.%03d", ns/1000, ns%1000)
		if ns < 0 {
			want = fmt.Sprintf("-%d.%03d", -ns/1000, -ns%1000)
		}
		if got := appendUs([]byte("x"), v); string(got) != "x"+want {
			t.Fatalf("appendUs(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestTs: the writer's times, their milliseconds' digits kept from one
// to the next, are appendUs's, for runs of times in one millisecond, steps
// across them and jumps between any lengths, negative and huge ones.
func TestTs(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	p := newPerfettoFragment(nil)
	v := 0.0
	kept := 0
	for i := 0; i < 200000; i++ {
		switch r.Intn(8) {
		case 0:
			v = float64(r.Uint64()>>r.Intn(64)) / 8 // any length
		case 1:
			v = -v
		case 2:
			v += 1e6 * float64(r.Intn(3)) // the next milliseconds
		default:
			v += float64(r.Intn(200000)) / 7 // mostly within one
		}
		before := p.tsMs
		want := appendUs([]byte("x"), v)
		if got := p.ts([]byte("x"), v); string(got) != string(want) {
			t.Fatalf("ts(%v) = %s, want %s", v, got, want)
		}
		if v >= 1e6 && p.tsMs == before {
			kept++
		}
	}
	if kept < 50000 {
		t.Errorf("%d times with the last one's milliseconds", kept)
	}
	t.Logf("%d of 200000 times with the last one's milliseconds", kept)
}

// writerCalls are calls made by hand to reach every argument the Perfetto
// writer formats: without and with a communicator (the first argument
// then has no comma), each kind of message, more than 16 in a list,
// collectives, one-sided and MPI-IO calls, callsites resolved or not,
// call paths, negative and large numbers, several ranks and threads.
func writerCalls() []Call {
	world := &GComm{Key: "world"}
	split := &GComm{ID: 3, Key: `split "a"\b`}
	src := &Source{Func: "solve", File: "solve.c", Line: 12}
	src2 := &Source{File: "x.c", Line: 7}
	path := []*Source{src, nil, src2}
	many := make([]Msg, 18)
	for i := range many {
		many[i] = Msg{Peer: i - 1, Tag: 100 * i, Bytes: int64(i) << 40, Req: uint64(i) * 1e9}
	}
	file := File{Comm: world, Seq: 1, Name: "out.dat"}
	base := func(rank, thread int, fn, class string, id int, t0, t1 float64) Call {
		return Call{Rank: rank, Thread: thread, Fn: fn, Class: class, FnID: id, T0: t0, T1: t1, PC: 0x401000 + uint64(id), Root: -1}
	}
	var cs []Call
	add := func(c Call, f func(c *Call)) {
		f(&c)
		cs = append(cs, c)
	}
	add(base(0, 0, "MPI_Send", "p2p", 1, 0.4, 1234.5), func(c *Call) {
		c.Send = &Msg{Peer: 1, Tag: 7, Bytes: 8, Flow: 0xabc}
	})
	add(base(0, 0, "MPI_Send", "p2p", 1, 2e3, 2e3+0.5), func(c *Call) {
		c.Comm, c.Src = world, src
		c.Send = &Msg{Peer: 12345, Tag: -3, Bytes: 1 << 40, Flow: 0xfedcba9876543210}
	})
	add(base(0, 0, "MPI_Isend", "p2p", 2, 3e6, 3e6+999.5), func(c *Call) {
		c.Comm, c.Src, c.Path = split, src, path
		c.Send = &Msg{Peer: 99, Tag: 100, Bytes: 0, Req: 123456789, Flow: 1}
	})
	add(base(0, 1, "MPI_Recv", "p2p", 3, 4.56e9, 4.56e9+7), func(c *Call) {
		c.Recv = &Msg{Peer: 0, Tag: 5, Bytes: 4096, Flow: 0xabc}
	})
	add(base(0, 1, "MPI_Recv", "p2p", 3, 4.6e9, 4.6e9+1), func(c *Call) {
		c.Comm = world
		c.Recv = &Msg{Peer: -1, Tag: -1, Bytes: -5}
	})
	add(base(1, 0, "MPI_Irecv", "p2p", 4, 1e12+0.5, 1e12+1.5), func(c *Call) {
		c.RecvPost = &Msg{Peer: -1, Tag: 3, Req: 9}
	})
	add(base(1, 0, "MPI_Irecv", "p2p", 4, 5, 6), func(c *Call) {
		c.Comm, c.Src = world, src2
		c.RecvPost = &Msg{Peer: 2, Tag: 3, Req: 1 << 63}
	})
	add(base(1, 0, "MPI_Startall", "p2p", 5, 7, 8), func(c *Call) {
		c.StartSend, c.StartRecv = many, many[:3]
	})
	add(base(1, 0, "MPI_Startall", "p2p", 5, 9, 10), func(c *Call) {
		c.Comm = world
		c.StartRecv = many
	})
	add(base(1, 0, "MPI_Waitall", "wait", 6, 11, 12), func(c *Call) {
		c.RecvDone, c.SendDone = many, many[2:5]
	})
	add(base(1, 0, "MPI_Waitall", "wait", 6, 13, 14), func(c *Call) {
		c.Comm = world
		c.SendDone = many
	})
	add(base(1, 2, "MPI_Bcast", "coll", 7, 15, 16), func(c *Call) {
		c.Coll, c.CollBytes, c.Root = true, 800, 0
	})
	add(base(1, 2, "MPI_Ibcast", "coll", 8, 17, 18), func(c *Call) {
		c.Comm = split
		c.Coll, c.CollBytes, c.Root, c.CollReq = true, 8, 3, 77
	})
	add(base(1, 2, "MPI_Allreduce", "coll", 9, 19, 20), func(c *Call) {
		c.Comm = world
		c.Coll, c.CollBytes = true, 16
	})
	add(base(1, 2, "MPI_Start", "coll", 10, 21, 22), func(c *Call) {
		c.StartColl = []CollOp{{Fn: "MPI_Bcast_init", Comm: world, Root: 1, Bytes: 8, Req: 4}, {Fn: "MPI_Allreduce_init", Comm: split, Root: -1, Bytes: 16, Req: 5}}
	})
	add(base(1, 2, "MPI_Waitall", "wait", 6, 23, 24), func(c *Call) {
		c.Comm = world
		c.CollDone = []CollOp{{Fn: "MPI_Ibcast", Comm: world, Root: 0, Bytes: 8, Req: 6}}
		c.RecvDone = many[:1]
		c.Cancelled = []uint64{3, 1 << 40}
	})
	add(base(2, 0, "MPI_Win_lock", "rma", 11, 25, 26), func(c *Call) {
		c.Comm = world
		c.Rma = &RmaOp{Kind: RmaLock, Win: Win{Comm: world, Seq: 2}, Target: 1, Shared: true}
	})
	add(base(2, 0, "MPI_Win_lock", "rma", 11, 27, 28), func(c *Call) {
		c.Rma = &RmaOp{Kind: RmaLock, Win: Win{Seq: 3}, Target: 0}
	})
	add(base(2, 0, "MPI_Win_post", "rma", 12, 29, 30), func(c *Call) {
		c.Rma = &RmaOp{Kind: RmaPost, Win: Win{Comm: split, Seq: 1}, Target: -1, Group: []int{1, 2}}
	})
	add(base(2, 0, "MPI_Put", "rma", 13, 31, 32), func(c *Call) {
		c.Comm = world
		c.Rma = &RmaOp{Kind: RmaPut, Win: Win{Comm: world, Seq: 2}, Target: 3, SBytes: 64, ID: 9}
	})
	add(base(2, 0, "MPI_Get_accumulate", "rma", 14, 33, 34), func(c *Call) {
		c.Rma = &RmaOp{Kind: RmaGetAcc, Win: Win{Comm: world, Seq: 2}, Target: 3, SBytes: 64, RBytes: 32, ID: 10}
	})
	add(base(2, 0, "MPI_Win_unlock", "rma", 15, 35, 36), func(c *Call) {
		c.Rma = &RmaOp{Kind: RmaUnlock, Win: Win{Comm: world, Seq: 2}, Target: 1}
		c.RmaDone = []RmaDone{{Win: Win{Comm: world, Seq: 2}, ID: 9}, {ID: 10}}
	})
	add(base(3, 0, "MPI_File_open", "io", 16, 37, 38), func(c *Call) {
		c.Comm = world
		c.Io = &IoOp{Kind: IoOpen, File: file}
	})
	add(base(3, 0, "MPI_File_write_at", "io", 17, 39, 40), func(c *Call) {
		c.Io = &IoOp{Kind: IoWrite, File: file, Bytes: 1 << 20}
	})
	add(base(3, 0, "MPI_File_iread", "io", 18, 41, 42), func(c *Call) {
		c.Io = &IoOp{Kind: IoRead, File: file, Bytes: 10, ID: 4}
	})
	add(base(3, 0, "MPI_File_read_all_end", "io", 19, 43, 44), func(c *Call) {
		c.Io = &IoOp{Kind: IoRead, File: file, Bytes: 10, End: true}
	})
	add(base(3, 0, "MPI_Wait", "wait", 20, 45, 46), func(c *Call) {
		c.IoDone = []IoDone{{File: file, ID: 4, Bytes: 10}}
	})
	add(base(3, 0, "MPI_Barrier", "coll", 21, -2.5, -0.4), func(c *Call) {
		c.Comm, c.Src, c.Path = world, src, path
		c.Coll = true
	})
	add(base(3, 0, "MPI_Barrier", "coll", 70000, 1e16, 1.5e16), func(c *Call) {
		c.Comm, c.Src, c.PC = world, nil, 0
		c.Coll = true
	})
	return cs
}

// TestPerfettoWriterArgs pins what the writer makes of every argument
// (writerCalls) byte for byte: the golden file was written by the writer
// as of 1e6945a (2026-11-26), before its per-event paths were rewritten.
func TestPerfettoWriterArgs(t *testing.T) {
	var out bytes.Buffer
	p := NewPerfettoWriter(&out)
	for _, c := range writerCalls() {
		if err := p.Call(&c); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Region(1, 0, true, "solver", 50); err != nil {
		t.Fatal(err)
	}
	if err := p.Mark(1, 0, `note "x"`, 51); err != nil {
		t.Fatal(err)
	}
	if err := p.Region(1, 0, false, "solver", 52); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Errorf("not JSON: %v", err)
	}
	testutil.Golden(t, filepath.Join("testdata", "golden", "calls.json"), out.Bytes())
}

// TestMessageTails: a message's description after its request id, from
// the writer's cache, is what fmt makes of its peer, tag and size, for
// 20,000 messages of 5 peers (-1 among them, and two that share a slot of
// the cache), 3 tags and 4 sizes: both hits and replacements.
func TestMessageTails(t *testing.T) {
	p := newPerfettoFragment(nil)
	slot := func(peer int) *tail { return &p.tails[0][uint32(peer)*0x9e3779b1>>24] }
	peers := []int{-1, 0, 1, 2}
	for q := 3; ; q++ {
		if slot(q) == slot(0) {
			peers = append(peers, q)
			break
		}
	}
	rng := rand.New(rand.NewSource(5))
	hits := 0
	for i := 0; i < 20000; i++ {
		m := Msg{Peer: peers[rng.Intn(len(peers))], Tag: rng.Intn(3) - 1, Bytes: []int64{0, 8, 4096, 1 << 33}[rng.Intn(4)]}
		kind := rng.Intn(3)
		want := map[int]string{
			tailTo:       fmt.Sprintf(" to %d tag %d %d bytes\"", m.Peer, m.Tag, m.Bytes),
			tailFrom:     fmt.Sprintf(" from %d tag %d %d bytes\"", m.Peer, m.Tag, m.Bytes),
			tailFromPost: fmt.Sprintf(" from %d tag %d\"", m.Peer, m.Tag),
		}[kind]
		e := &p.tails[kind][uint32(m.Peer)*0x9e3779b1>>24]
		before := *e
		if got := p.tail(kind, &m).String(); got != want {
			t.Fatalf("message %d %+v, kind %d: %q, want %q", i, m, kind, got, want)
		}
		if before.l.n != 0 && before == *e {
			hits++
		}
	}
	if hits < 1000 || hits > 18000 {
		t.Errorf("%d of 20000 from the cache", hits)
	}
	t.Logf("%d of 20000 from the cache", hits)
}

// TestPerfettoWriterFileStrings: the strings a rank file gives (function
// name and class, communicator key, region name, event text, file name)
// come out as JSON strings whatever they hold: quotes, backslashes,
// control characters. Until 2026-11-28 a function's class was written
// unquoted ("cat"): a class holding a quote made the document invalid.
func TestPerfettoWriterFileStrings(t *testing.T) {
	odd := "a\"b\\c\n\x01</>"
	var out bytes.Buffer
	p := NewPerfettoWriter(&out)
	g := &GComm{Key: "k" + odd}
	c := Call{Rank: 1, Fn: "MPI_Send" + odd, Class: "p2p" + odd, FnID: 3, T0: 2e6, T1: 3e6, Comm: g, Root: -1,
		Io: &IoOp{Kind: IoWrite, File: File{Comm: g, Name: "f" + odd}, Bytes: 8, ID: 1}}
	if err := p.Call(&c); err != nil {
		t.Fatal(err)
	}
	if err := p.Region(1, 0, true, "r"+odd, 4e6); err != nil {
		t.Fatal(err)
	}
	if err := p.Mark(1, 0, "m"+odd, 5e6); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Cat, Name string
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out.Bytes())
	}
	var got []string
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			got = append(got, e.Cat, e.Name, fmt.Sprint(e.Args["comm"]), fmt.Sprint(e.Args["file"]))
		case "B", "i":
			got = append(got, e.Name)
		}
	}
	want := []string{"p2p" + odd, "MPI_Send" + odd, "k" + odd, "f" + odd, "r" + odd, "m" + odd}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Errorf("strings %q, want %q", got, want)
	}
}

// TestAppendUsNotFinite: a time that is not finite (a calibration of
// more than 1e289 ns per tick makes one) is written as a JSON number,
// 0, not as strconv's "+Inf" or "NaN", which made the document invalid
// until 2026-11-28; so is a duration between two of them.
func TestAppendUsNotFinite(t *testing.T) {
	p := newPerfettoFragment(nil)
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		for _, got := range [][]byte{appendUs(nil, v), p.ts(nil, v)} {
			if string(got) != "0" {
				t.Errorf("%v: %s, want 0", v, got)
			}
		}
	}
	var out bytes.Buffer
	w := NewPerfettoWriter(&out)
	c := Call{Rank: 0, Fn: "MPI_Send", Class: "p2p", T0: math.Inf(1), T1: math.Inf(1), Root: -1,
		Send: &Msg{Peer: 1, Flow: 7}}
	if err := w.Call(&c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(out.Bytes()) {
		t.Errorf("not JSON:\n%s", out.Bytes())
	}
}

// TestMessageTailsLargeRanks: a message's description is cached for a
// peer of any rank, in a table whose size does not depend on the ranks:
// the same peer, tag and size again make nothing new. Until 2026-11-28
// the cache was an array indexed by the peer's rank, grown to the largest
// peer below 65,536 (27 MB per rank writer at 65,536 ranks, 16 writers
// at once) and made the description again for every message of a larger
// one.
func TestMessageTailsLargeRanks(t *testing.T) {
	p := newPerfettoFragment(nil)
	for _, peer := range []int{0, 65535, 1 << 16, 1 << 20, 1<<31 - 1} {
		m := Msg{Peer: peer, Tag: 3, Bytes: 8}
		want := fmt.Sprintf(" to %d tag 3 8 bytes\"", peer)
		if got := p.tail(tailTo, &m).String(); got != want {
			t.Fatalf("peer %d: %q, want %q", peer, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { p.tail(tailTo, &m) }); n != 0 {
			t.Errorf("peer %d: %v allocations a message, want 0 (cached)", peer, n)
		}
	}
	if size := unsafe.Sizeof(p.tails); size > 1<<20 {
		t.Errorf("the cache takes %d bytes", size)
	}
}
