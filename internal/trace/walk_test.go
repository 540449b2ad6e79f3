package trace

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func isend(t0 uint64, peer, tag int32, h uint64) Event {
	e := send(2, t0, t0+10, peer, tag, 8)
	e.Flags |= FReq
	e.Req = h
	return e
}

func irecv(t0 uint64, peer, tag int32, h uint64) Event {
	e := recv(3, t0, t0+10, peer, tag, 8)
	e.Flags |= FReq
	e.Req = h
	return e
}

func cpl(t uint64, h uint64) Event {
	return Event{Kind: KComplete, Fn: 4, T0: t, T1: t, Req: h, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
}

func cplRecv(t uint64, h uint64, src, tag int32) Event {
	e := cpl(t, h)
	e.Flags = FRecv | FLocal
	e.RPeer, e.RTag, e.RBytes = src, tag, 8
	return e
}

// sharedJob: Open MPI hands sends that complete at once (and requests to
// MPI_PROC_NULL) one shared handle (ompi_request_empty), MPICH its
// lightweight complete request: several pending posts share a handle
// value. Rank 0 posts two sends to rank 1 and one to MPI_PROC_NULL and a
// receive from MPI_PROC_NULL under handle E, a real receive under R, and
// completes all five in one Waitall; then a send under X never completed
// (MPI_Request_free) and a later one under X again, completed by a Wait;
// then two sends under E waited for one at a time: a completion takes the
// latest post of its handle (the other may be one whose completion was not
// traced), so the first wait completes the second send.
func sharedJob(t *testing.T) string {
	const E, R, X = 0xe0, 0x10, 0x20
	job := t.TempDir()
	synthRank(t, job, 0, 2, []Event{
		irecv(1000, -1, 0, E), // MPI_PROC_NULL
		irecv(1100, 1, 5, R),
		isend(1200, -1, 1, E), // MPI_PROC_NULL
		isend(1300, 1, 1, E),
		isend(1400, 1, 2, E),
		cpl(1600, E), cplRecv(1600, R, 1, 5), cpl(1600, E), cpl(1600, E), cpl(1600, E),
		call(4, 1500, 1600),
		isend(2000, 1, 3, X), // freed, never completed
		isend(2100, 1, 4, X),
		cpl(2300, X),
		call(4, 2200, 2300),
		isend(3000, 1, 6, E),
		isend(3100, 1, 7, E),
		cpl(3300, E),
		call(4, 3200, 3300),
		cpl(3500, E),
		call(4, 3400, 3500),
	}, 4, nil, true)
	synthRank(t, job, 1, 2, []Event{
		irecv(1000, 0, 1, 0x30),
		irecv(1010, 0, 2, 0x31),
		send(0, 1050, 1060, 0, 5, 8),
		cplRecv(1700, 0x30, 0, 1), cplRecv(1700, 0x31, 0, 2),
		call(4, 1500, 1700),
		recv(1, 2100, 2400, 0, 3, 8),
		recv(1, 2400, 2500, 0, 4, 8),
		recv(1, 3100, 3200, 0, 6, 8),
		recv(1, 3200, 3300, 0, 7, 8),
	}, 100, nil, true)
	return job
}

// TestSharedHandles: posts that share a handle value are all completed,
// each once; a post whose completion was never traced does not take a
// later post's completion.
func TestSharedHandles(t *testing.T) {
	job := sharedJob(t)
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWalker(j, WalkOptions{NoClock: true})
	var sendDone, recvDone []Msg
	var waits []int
	if err := w.Walk(callVisitor(func(c *Call) error {
		if c.Rank == 0 && c.Fn == "MPI_Wait" {
			sendDone = append(sendDone, c.SendDone...)
			recvDone = append(recvDone, c.RecvDone...)
			waits = append(waits, len(c.SendDone))
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if w.Unmatched != 0 {
		t.Errorf("%d unmatched completions, want 0", w.Unmatched)
	}
	var tags []int
	for _, m := range sendDone {
		tags = append(tags, m.Tag)
	}
	// Request ids: 1 (PROC_NULL receive), 2 (receive), 3 (PROC_NULL
	// send) are not messages sent; 4, 5 tags 1 and 2; 6 tag 3 (freed);
	// 7 tag 4; 8 tag 6; 9 tag 7.
	if want := []int{1, 2, 4, 7, 6}; !equalInts(tags, want) {
		t.Errorf("sends completed on rank 0: tags %v, want %v", tags, want)
	}
	if want := []int{2, 1, 1, 1}; !equalInts(waits, want) {
		t.Errorf("sends completed per wait: %v, want %v", waits, want)
	}
	if len(recvDone) != 1 || recvDone[0].Peer != 1 || recvDone[0].Tag != 5 {
		t.Errorf("receives completed on rank 0: %+v, want one from 1 tag 5", recvDone)
	}

	out := filepath.Join(t.TempDir(), "otf2")
	convertOTF2(t, job, out)
	m := countLines(t, otf2Print(t, out))
	for k, n := range map[string]int{"MPI_ISEND": 6, "MPI_ISEND_COMPLETE": 5, "MPI_IRECV_REQUEST": 3, "MPI_IRECV": 3} {
		if len(m[k]) != n {
			t.Errorf("%s: %d records, want %d", k, len(m[k]), n)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// interJob: 4 ranks, an intercommunicator between {0, 1} and {2, 3}
// (each side defines it under its own key, with its remote group), and a
// communicator of each side. Rank 0 Isends to rank 2 and waits; rank 2
// receives it; rank 3 sends to rank 1, which receives it with MPI_Irecv
// from any source (the status gives rank 1 of the remote group).
func interJob(t *testing.T) string {
	job := t.TempDir()
	x := []CommDef{{ID: 1, Key: "inter:Intercomm_create:2@0", Size: 2, World: []int{2, 3}, Inter: true},
		{ID: 2, Key: "Comm_split:2@0", Size: 2, World: []int{0, 1}}}
	y := []CommDef{{ID: 1, Key: "inter:Intercomm_create:2@2", Size: 2, World: []int{0, 1}, Inter: true},
		{ID: 2, Key: "Comm_split:2@2", Size: 2, World: []int{2, 3}}}
	on := func(e Event, comm int32) Event { e.Comm = comm; return e }
	synthRankComms(t, job, 0, 4, []Event{on(isend(1000, 2, 9, 0x50), 1), cpl(1300, 0x50), call(4, 1200, 1300),
		on(coll(5, 2000, 2100, 0), 2)}, 100, nil, true, BEvents, x)
	ir := on(irecv(1000, -2, -1, 0x60), 1)
	synthRankComms(t, job, 1, 4, []Event{ir, cplRecv(1500, 0x60, 1, 4), on(call(4, 1400, 1500), 1),
		on(coll(5, 2000, 2100, 0), 2)}, 100, nil, true, BEvents, x)
	synthRankComms(t, job, 2, 4, []Event{on(recv(1, 1100, 1400, 0, 9, 8), 1), on(coll(5, 2000, 2100, 0), 2)}, 100, nil, true, BEvents, y)
	synthRankComms(t, job, 3, 4, []Event{on(send(0, 1100, 1200, 1, 4, 8), 1), on(coll(5, 2000, 2100, 0), 2)}, 100, nil, true, BEvents, y)
	return job
}

// TestOTF2InterComm: intercommunicators are defined (one InterComm for
// both sides, communicator ids without gaps) and their messages are
// written; no send is completed without its MpiIsend.
func TestOTF2InterComm(t *testing.T) {
	job := interJob(t)
	out := filepath.Join(t.TempDir(), "otf2")
	w := convertOTF2(t, job, out)
	if w.Unmatched != 0 {
		t.Errorf("%d unmatched completions", w.Unmatched)
	}
	text := otf2Print(t, out)
	m := countLines(t, text)
	for k, n := range map[string]int{"MPI_SEND": 1, "MPI_RECV": 1, "MPI_ISEND": 1, "MPI_ISEND_COMPLETE": 1,
		"MPI_IRECV_REQUEST": 1, "MPI_IRECV": 1, "MPI_COLLECTIVE_END": 4} {
		if len(m[k]) != n {
			t.Errorf("%s: %d records, want %d", k, len(m[k]), n)
		}
	}
	for _, c := range []struct{ rec, sub string }{
		{"MPI_ISEND", `0 Receiver: 0 ("thread 0" <2>), Communicator: "inter:Intercomm_create:2@0" <1>, Tag: 9, Length: 8, Request: 1`},
		{"MPI_RECV", `2 Sender: 0 ("thread 0" <0>), Communicator: "inter:Intercomm_create:2@0" <1>, Tag: 9, Length: 8`},
		{"MPI_SEND", `3 Receiver: 1 ("thread 0" <1>), Communicator: "inter:Intercomm_create:2@0" <1>, Tag: 4, Length: 8`},
		{"MPI_IRECV", `1 Sender: 1 ("thread 0" <3>), Communicator: "inter:Intercomm_create:2@0" <1>, Tag: 4, Length: 8, Request: 1`},
	} {
		if len(m[c.rec]) == 0 || m[c.rec][0] != c.sub {
			t.Errorf("%s: got %q, want %q", c.rec, m[c.rec], c.sub)
		}
	}
	// Communicator ids 0 to 3 without a gap; the intercommunicator's
	// groups are its two sides.
	defs := strings.Join(strings.Fields(otf2PrintArgs(t, out, "-G")), " ")
	for _, want := range []string{
		`COMM 0 Name: "MPI_COMM_WORLD"`,
		`GROUP 2 Name: "" <0>, Type: COMM_GROUP, Paradigm: "MPI" <4>, Flags: NONE, 2 Members: 0 ("thread 0" <0>), 1 ("thread 0" <1>)`,
		`GROUP 3 Name: "" <0>, Type: COMM_GROUP, Paradigm: "MPI" <4>, Flags: NONE, 2 Members: 2 ("thread 0" <2>), 3 ("thread 0" <3>)`,
		`name: "inter:Intercomm_create:2@0" <18>, Group A: "" <2>, Group B: "" <3>, Common Communicator: UNDEFINED`,
		`COMM 2 Name: "Comm_split:2@0"`,
		`COMM 3 Name: "Comm_split:2@2"`,
	} {
		if !strings.Contains(defs, want) {
			t.Errorf("otf2-print -G: no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("%s\n%s", text, defs)
	}
}

// TestMainThreadFirst: the main thread (its id is the process id) is
// thread 0 even when another thread's buffer was written first.
func TestMainThreadFirst(t *testing.T) {
	job := t.TempDir()
	path := RankPath(job, 0)
	os.MkdirAll(filepath.Dir(path), 0o777)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw, _ := NewBlockWriter(f)
	bw.Block(BHeader, EncodeHeader(&Header{Rank: 0, Size: 1, PID: 500, FnNames: []string{"MPI_Send", "MPI_Barrier"}}))
	bw.Block(BCalib, EncodeCalib(Calib{NsPerTick: 1}))
	bw.Block(BRaw, AppendRaw(nil, 501, []Event{call(1, 1000, 1100)}))
	bw.Block(BRaw, AppendRaw(nil, 500, []Event{call(0, 2000, 2100)}))
	bw.Flush()
	f.Close()
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	if err := NewWalker(j, WalkOptions{}).Walk(callVisitor(func(c *Call) error {
		got[c.Fn] = c.Thread
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if got["MPI_Send"] != 0 || got["MPI_Barrier"] != 1 {
		t.Errorf("threads %v, want MPI_Send (main thread) on 0, MPI_Barrier on 1", got)
	}
}

// TestFlowSeqShort: flowSeq's short path for sequence numbers below 2^24
// (five zero bytes folded into one multiply) gives fnvMix's value, at the
// byte boundaries and on random channels and numbers.
func TestFlowSeqShort(t *testing.T) {
	ref := func(h, seq uint64) uint64 {
		h = fnvMix(h, seq)
		h ^= h >> 33
		h *= 0xff51afd7ed558ccd
		h ^= h >> 33
		if h == 0 {
			h = 1
		}
		return h
	}
	seqs := []uint64{0, 1, 2, 255, 256, 257, 65535, 65536, 1<<24 - 1, 1 << 24, 1<<24 + 1, 1<<32 - 1, 1 << 32, 1<<64 - 1}
	x := uint64(0x243f6a8885a308d3)
	for i := 0; i < 20000; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		seqs = append(seqs, x>>(x%64))
	}
	for i, seq := range seqs {
		h := flowHash(chanKey{src: i % 7, dst: i % 5, comm: i % 3, tag: i})
		if got, want := flowSeq(h, seq), ref(h, seq); got != want {
			t.Fatalf("flowSeq(%#x, %d) = %#x, want %#x", h, seq, got, want)
		}
	}
	// A value computed by main's flowID at 548849d (2026-11-28).
	if got := flowID(chanKey{src: 0, dst: 1, comm: 0, tag: 1}, 1); got != flowPin {
		t.Errorf("flowID(0->1, comm 0, tag 1, 1) = %#x, want %#x", got, flowPin)
	}
}

// flowPin is flowID(0->1, comm 0, tag 1, message 1) as main computed it
// at 548849d, before flowSeq's short path.
const flowPin = 0xf7fc761beab292e

// TestTickConv: the walk's conversion of ticks gives Walker.Ns's value
// bit for bit, for clocks without samples, with one, with drift, turned
// off, and shifted.
func TestTickConv(t *testing.T) {
	ticks := []uint64{0, 1, 999, 1 << 20, 123456789012, 1 << 40, 1<<63 + 12345, 1<<64 - 1}
	x := uint64(0x9e3779b97f4a7c15)
	for range 2000 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		ticks = append(ticks, x>>(x%48)) // times rounded at every magnitude
	}
	cal := Calib{Tick0: 1000, Ns0: 5_000_000, NsPerTick: 0.3712}
	clocks := map[string]*Clock{
		"no samples": NewClock(&Rank{Calib: cal}),
		"one sample": NewClock(&Rank{Calib: cal, Syncs: []Sync{{LocalNs: 100, OffsetNs: -7321, RTTNs: 40}}}),
		"drift": NewClock(&Rank{Calib: cal, Syncs: []Sync{{LocalNs: 100, OffsetNs: -7321, RTTNs: 40},
			{LocalNs: 9_000_000_000, OffsetNs: 91_004, RTTNs: 30}}}),
	}
	off := NewClock(&Rank{Calib: cal, Syncs: []Sync{{LocalNs: 100, OffsetNs: -7321, RTTNs: 40}}})
	off.Off = true
	clocks["off"] = off
	shifted := NewClock(&Rank{Calib: cal, Syncs: []Sync{{LocalNs: 100, OffsetNs: -7321, RTTNs: 40},
		{LocalNs: 9_000_000_000, OffsetNs: 91_004, RTTNs: 30}}})
	shifted.Shift = -1234.567
	clocks["shifted"] = shifted
	for name, clk := range clocks {
		for _, origin := range []float64{0, 4_999_000.1, -3.3e9} {
			x := newTickConv(clk, origin)
			for _, tk := range ticks {
				want := clk.Ns(tk) - origin
				if got := x.at(tk); math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s, origin %v: tick %d gives %v, Clock.Ns less the origin %v", name, origin, tk, got, want)
				}
				if a, b := x.span(tk, tk/3); math.Float64bits(a) != math.Float64bits(want) || math.Float64bits(b) != math.Float64bits(clk.Ns(tk/3)-origin) {
					t.Errorf("%s, origin %v: span of ticks %d, %d gives %v, %v", name, origin, tk, tk/3, a, b)
				}
			}
		}
	}
	if !newTickConv(clocks["drift"], 0).interp || newTickConv(clocks["one sample"], 0).interp {
		t.Errorf("drift not told from a constant offset")
	}
}

// TestWalkWaitingBounded: completions waiting for their call are held up
// to maxWaiting (the library records 256 a call at most); beyond, the
// oldest half are forgotten and counted unmatched, so that a thread of a
// damaged or crafted file that completes a million requests before any
// call holds a bounded table (until 2026-11-28 it held them all: 32 bytes
// each and a map entry, memory growing with the trace). Every completion
// here is unmatched (no post) and counted once.
func TestWalkWaitingBounded(t *testing.T) {
	const n = 1 << 20
	evs := make([]Event, 0, n+1)
	for i := 0; i < n; i++ {
		evs = append(evs, Event{Kind: KComplete, Flags: FSend, Fn: 4, Comm: -1, T0: 1000, T1: 1000, Req: uint64(0x1000 + 8*i),
			SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
	}
	evs = append(evs, Event{Kind: KCall, Fn: 4, Comm: 0, T0: 2000, T1: 2100, SPeer: -1, STag: -1, RPeer: -1, RTag: -1})
	job := t.TempDir()
	synthRank(t, job, 0, 1, evs, 1<<16, nil, true)
	evs = nil
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWalker(j, WalkOptions{NoClock: true})
	var live uint64
	if err := w.Walk(callVisitor(func(*Call) error {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live = ms.HeapAlloc
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if w.Unmatched != n || w.Calls != 1 {
		t.Errorf("%d unmatched, %d calls; want %d, 1", w.Unmatched, w.Calls, n)
	}
	if live > 24<<20 {
		t.Errorf("%d MiB live at the call, want less than 24", live>>20)
	}
	t.Logf("%.1f MiB live at the call", float64(live)/(1<<20))
}
