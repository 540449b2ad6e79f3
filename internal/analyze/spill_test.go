package analyze

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestRecordSizes pins the bytes of the records the analysis keeps per
// message end, collective part, call with records, wait candidate and
// critical-path jump (2026-11-28, night: 48, 48, 48, none, 56, 40 before
// the calls' times were kept once per call).
func TestRecordSizes(t *testing.T) {
	got := []uintptr{unsafe.Sizeof(sendRec{}), unsafe.Sizeof(recvRec{}), unsafe.Sizeof(collRec{}),
		unsafe.Sizeof(callTimes{}), unsafe.Sizeof(cand{}), unsafe.Sizeof(jump{})}
	want := []uintptr{24, 24, 28, 24, 56, 40}
	if !slices.Equal(got, want) {
		t.Fatalf("sendRec, recvRec, collRec, callTimes, cand, jump: %v bytes, want %v", got, want)
	}
}

// passCalls runs a pass of rank index idx (of 2, 2 shards) over a waitall of two
// sends and two receives, a testall of one send, a blocking send and an
// allreduce.
func passCalls(t *testing.T, idx int) *rankPass {
	t.Helper()
	world := &trace.GComm{ID: 0, Key: "world", World: []int{0, 1}}
	p := newRankPass(idx, idx, 2)
	calls := []trace.Call{
		{Fn: "MPI_Waitall", FnID: 1, T0: 10, T1: 20, PC: 0x10, Root: -1,
			SendDone: []trace.Msg{{Peer: 1, Flow: 11, Posted: 2, Comm: world}, {Peer: 1, Flow: 13, Posted: 3, Comm: world}},
			RecvDone: []trace.Msg{{Peer: 1, Flow: 12, Posted: 4, Comm: world}, {Peer: 1, Flow: 14, Posted: 5, Comm: world}}},
		{Fn: "MPI_Testall", FnID: 2, T0: 30, T1: 31, PC: 0x20, Root: -1,
			SendDone: []trace.Msg{{Peer: 1, Flow: 15, Posted: 25, Comm: world}}},
		{Fn: "MPI_Send", FnID: 3, T0: 40, T1: 45, PC: 0x30, Root: -1, Comm: world,
			Send: &trace.Msg{Peer: 1, Flow: 16, Comm: world}},
		{Fn: "MPI_Allreduce", FnID: 4, T0: 50, T1: 60, PC: 0x40, Root: -1, Comm: world, Coll: true},
	}
	for i := range calls {
		if err := p.Call(&calls[i]); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestCallTimes: a call's records share one entry of its times (the
// waitall's four message ends one), each call its own, numbered as the
// pass numbers calls; the Test family's entry does not block.
func TestCallTimes(t *testing.T) {
	p := passCalls(t, 0)
	want := []callTimes{{10, 20, 1, true}, {30, 31, 2, false}, {40, 45, 3, true}, {50, 60, 4, true}}
	if !slices.Equal(p.times, want) {
		t.Fatalf("times %v, want %v", p.times, want)
	}
	type end struct {
		flow uint64
		t    float64
		tix  uint32
	}
	var ends []end
	for s := range p.sends {
		for _, r := range p.sends[s] {
			ends = append(ends, end{r.flow, r.enter, r.tix})
		}
		for _, r := range p.recvs[s] {
			ends = append(ends, end{r.flow, r.post, r.tix})
		}
	}
	slices.SortFunc(ends, func(a, b end) int { return cmpU(a.flow, b.flow) })
	wantEnds := []end{{11, 2, 0}, {12, 4, 0}, {13, 3, 0}, {14, 5, 0}, {15, 25, 1}, {16, 40, 2}}
	if !slices.Equal(ends, wantEnds) {
		t.Fatalf("message ends %v, want %v", ends, wantEnds)
	}
	n := 0
	for s := range p.colls {
		for _, c := range p.colls[s] {
			n++
			if c.tix != 3 || c.idx != 0 || c.kind != collNxN {
				t.Fatalf("collective part %+v", c)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d collective parts, want 1", n)
	}
}

// TestSpillRecords: the spill's records decode to the same message ends,
// by rank index, and collective parts, with their calls' times (one entry
// per call again); a rank index out of range, a cut record and a bad tag
// are errors naming the byte.
func TestSpillRecords(t *testing.T) {
	p := passCalls(t, 1) // the second of two ranks
	var b []byte
	for s := range p.sends {
		b = encodeRecs(b, int32(p.idx), p.times, p.sends[s], p.recvs[s], p.colls[s])
	}
	sends, recvs, colls, times, err := decodeSpill(b, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(sends[0])+len(recvs[0])+len(times[0]) != 0 {
		t.Fatalf("rank 0 has records: %v %v %v", sends[0], recvs[0], times[0])
	}
	var got []callTimes
	for _, r := range sends[1] {
		got = append(got, times[1][r.tix])
	}
	for _, r := range recvs[1] {
		got = append(got, times[1][r.tix])
	}
	for _, c := range colls {
		if c.idx != 1 || c.kind != collNxN {
			t.Fatalf("collective part %+v", c)
		}
		got = append(got, times[1][c.tix])
	}
	var want []callTimes
	for s := range p.sends {
		for _, r := range p.sends[s] {
			want = append(want, p.times[r.tix])
		}
	}
	for s := range p.sends {
		for _, r := range p.recvs[s] {
			want = append(want, p.times[r.tix])
		}
	}
	for s := range p.sends {
		for _, c := range p.colls[s] {
			want = append(want, p.times[c.tix])
		}
	}
	if !slices.Equal(got, want) || len(got) != 7 {
		t.Fatalf("records' times %v, want %v", got, want)
	}
	// Shard 0's records (the send, the waitall's two receives, the
	// allreduce), then shard 1's (the waitall's two sends, the testall):
	// a call's entry once for the records that come together.
	w, a, s, x := p.times[0], p.times[3], p.times[2], p.times[1]
	if want := []callTimes{s, w, a, w, x}; !slices.Equal(times[1], want) {
		t.Fatalf("times %v, want %v", times[1], want)
	}
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{b[:len(b)-1], "cut short at byte"},
		{append(append([]byte{}, b...), 'X'), "bad record tag 88 at byte"},
	} {
		if _, _, _, _, err := decodeSpill(c.b, 2); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("error %v, want %q", err, c.want)
		}
	}
	if _, _, _, _, err := decodeSpill(b, 1); err == nil || !strings.Contains(err.Error(), "rank index 1 at byte 0, of 1 ranks") {
		t.Fatalf("error %v", err)
	}
}

// TestSpillTimesBounded: with a spill, a pass holds at most spillBatch x
// shards calls' times (every shard's records written, then the times let
// go of), and the spill keeps each record's own times.
func TestSpillTimesBounded(t *testing.T) {
	sp, err := newSpill(2)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.close()
	world := &trace.GComm{ID: 0, Key: "world", World: []int{0, 1}}
	p := newRankPass(0, 0, 2)
	p.sp = sp
	most := 0
	for i := range 3000 {
		c := trace.Call{Fn: "MPI_Wait", FnID: 1, T0: float64(10 * i), T1: float64(10*i + 5), PC: 0x10, Root: -1,
			RecvDone: []trace.Msg{{Peer: 1, Flow: uint64(i + 1), Posted: float64(10*i - 3), Comm: world}}}
		if err := p.Call(&c); err != nil {
			t.Fatal(err)
		}
		most = max(most, len(p.times))
	}
	p.flushAll()
	if most != spillBatch*2-1 { // the call that makes them 1,024 writes them
		t.Fatalf("at most %d calls' times held between calls, want %d", most, spillBatch*2-1)
	}
	n := 0
	for s := range 2 {
		_, recvs, _, times, err := decodeSpill(sp.read(s), 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recvs[0] {
			i := float64(r.flow - 1)
			if tm := times[0][r.tix]; r.post != 10*i-3 || tm != (callTimes{10 * i, 10*i + 5, uint32(i + 1), true}) {
				t.Fatalf("receive %d: post %v, times %+v", r.flow, r.post, tm)
			}
			n++
		}
	}
	if n != 3000 {
		t.Fatalf("%d receives spilled, want 3000", n)
	}
}
