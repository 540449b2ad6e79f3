package analyze

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestCallLog: the critical path's function and callsite shares come from
// the calls logged by the walk, without reading any rank's trace again,
// and are what a second reading gives (as when the log does not fit the
// memory bound): the same JSON, byte for byte.
func TestCallLog(t *testing.T) {
	var reads atomic.Int64
	defer func(f func(*trace.Walker, int, *trace.Rank, [][2]float64) []pathKey) { pathKeysOf = f }(pathKeysOf)
	pathKeysOf = func(w *trace.Walker, i int, r *trace.Rank, ss [][2]float64) []pathKey {
		reads.Add(1)
		return pathKeys(w, i, r, ss)
	}
	synth := t.TempDir()
	if err := trace.WriteSynth(synth, trace.SynthSpec{Ranks: 4, Events: 40000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		dir  string
	}{{"synth", synth}, {"threads", threadsJob(t)}} {
		j, err := trace.OpenJob(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		var events int64
		for _, r := range j.Ranks {
			events += int64(r.Events)
		}
		reads.Store(0)
		logged, err := Analyze(j, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		if n := reads.Load(); n != 0 {
			t.Errorf("%s: %d ranks read again, want 0", tc.name, n)
		}
		// Records in memory, the log beyond the bound: read again.
		again, err := Analyze(j, Options{Workers: 2, Memory: events * (recBytes + callLogBytes/2)})
		if err != nil {
			t.Fatal(err)
		}
		if n := reads.Load(); n != int64(len(j.Ranks)) {
			t.Errorf("%s: %d ranks read again without the log, want %d", tc.name, n, len(j.Ranks))
		}
		if len(logged.Critical.Callsites) == 0 || logged.Critical.MPI <= 0 {
			t.Errorf("%s: no MPI time on the critical path: %+v", tc.name, logged.Critical)
		}
		a, _ := json.Marshal(logged)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the result from the log differs from the one read again:\n%s\n%s", tc.name, a, b)
		}
	}
}

// threadsJob is two ranks whose rank 1 has a second thread, written in a
// block of its own after the main thread's, its times going back: rank 0
// sends at 1,000, 3,000 and 5,000 ns (each 100 ns), rank 1's main thread
// receives late (each receive waits from its entry to the send), its
// second thread makes calls (MPI_Comm_rank) from 500 ns on.
func threadsJob(t *testing.T) string {
	t.Helper()
	job := t.TempDir()
	writeFile(t, trace.RankPath(job, 0), rankFile(t, 0, 2, []trace.Event{
		call(fCommRank, 0, 10),
		send(fSend, 1000, 1100, 1),
		send(fSend, 3000, 3100, 1),
		send(fSend, 5000, 5100, 1),
	}))
	main := []trace.Event{
		recv(fRecv, 100, 1200, 0),
		recv(fRecv, 2000, 3200, 0),
		recv(fRecv, 4000, 5200, 0),
		call(fBarrier, 5300, 5400), // alone: no partner, no wait
	}
	var second []trace.Event
	for k := uint64(0); k < 12; k++ {
		second = append(second, call(fCommRank, 500+400*k, 700+400*k))
	}
	var b bytes.Buffer
	bw, _ := trace.NewBlockWriter(&b)
	bw.Block(trace.BHeader, trace.EncodeHeader(&trace.Header{Rank: 1, Size: 2, PID: 101, Host: "h", Family: "test",
		Tool: "0", Timer: "clock", RealNs: 1, FnNames: fnNames, FnClasses: make([]string, len(fnNames))}))
	bw.Block(trace.BCalib, trace.EncodeCalib(trace.Calib{NsPerTick: 1}))
	bw.Block(trace.BComm, trace.EncodeComm(&trace.CommDef{ID: 0, Key: "world", Size: 2, World: []int{0, 1}}))
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	for _, blk := range []struct {
		tid int
		evs []trace.Event
	}{{101, main}, {102, second}} {
		var scratch bytes.Buffer
		p, err := trace.AppendEvents(nil, blk.tid, blk.evs, fw, &scratch)
		if err != nil {
			t.Fatal(err)
		}
		bw.Block(trace.BEvents, p)
	}
	bw.Block(trace.BFinal, trace.EncodeFinal(trace.Final{}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, trace.RankPath(job, 1), b.Bytes())
	return job
}

// TestCallLogSpans: pathKeys skips the runs of logged calls that no
// segment of the path overlaps, and its sums are those of every call
// against every segment, added in the same order: runs inside a segment,
// runs between segments (skipped), calls spanning a segment's edge, and a
// second thread's calls whose times go back, calls of no length.
func TestCallLogSpans(t *testing.T) {
	type call struct {
		fn     uint16
		pc     uint64
		t0, t1 float64
	}
	var calls []call
	for th := 0; th < 2; th++ { // two threads' calls, one after the other
		t0 := 1000.0 + float64(th)*0.25
		for i := 0; i < 1000; i++ {
			d := 3.0 + float64(i%7)*0.125
			calls = append(calls, call{uint16(i % 3), uint64(0x400000 + i%5*16), t0, t0 + d})
			if i%50 == 0 { // a call of no length entered with the last: no bytes of either difference
				calls = append(calls, call{3, 0x400100, t0, t0})
			}
			t0 += d + 1.5
		}
	}
	l := newCallLog()
	for _, c := range calls {
		l.add(c.fn, c.pc, c.t0, c.t1)
	}
	// Runs of runBytes bytes and up to logCallMax more (the last shorter),
	// one after the other in their buffers.
	l.seal()
	for k, sp := range l.spans {
		if n := sp.end - sp.off; n < 1 || n >= runBytes+logCallMax || n < runBytes && k < len(l.spans)-1 {
			t.Fatalf("run %d: %d bytes", k, n)
		}
		if k > 0 && sp.buf == l.spans[k-1].buf && sp.off != l.spans[k-1].end {
			t.Fatalf("run %d starts at %d, the one before ends at %d", k, sp.off, l.spans[k-1].end)
		}
	}
	ss := [][2]float64{{1001.5, 1020.25}, {2500, 2510.75}, {6000.125, 6700}, {7200, 7200.5}}
	want := map[fnPC]float64{}
	for _, c := range calls {
		for _, s := range ss {
			if o := min(c.t1, s[1]) - max(c.t0, s[0]); o > 0 {
				want[fnPC{c.fn, c.pc}] += o
			}
		}
	}
	got := l.pathKeys(ss)
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for _, k := range got {
		if w := want[fnPC{k.fn, k.pc}]; k.ns != w {
			t.Errorf("fn %d pc %#x: %v ns, want %v", k.fn, k.pc, k.ns, w)
		}
	}
	// The runs overlapped: what pathKeys decodes.
	read := 0
	for _, sp := range l.spans {
		for _, s := range ss {
			if s[1] > sp.lo && s[0] < sp.hi {
				read++
				break
			}
		}
	}
	t.Logf("%d of %d runs overlap the path", read, len(l.spans))
	if read < 4 || read > 12 {
		t.Errorf("%d of %d runs overlap the path", read, len(l.spans))
	}
}

// TestLowBytes: lowBytes keeps exactly the n low bytes, n from 0 to 8.
func TestLowBytes(t *testing.T) {
	x := uint64(0x8877665544332211)
	want := []uint64{0, 0x11, 0x2211, 0x332211, 0x44332211, 0x5544332211, 0x665544332211, 0x77665544332211, x}
	for n, w := range want {
		if got := lowBytes(x, n); got != w {
			t.Errorf("lowBytes(%#x, %d) = %#x, want %#x", x, n, got, w)
		}
	}
}

// TestCallLogInStore: a log in a store (newCallLogIn) keeps its buffers
// and, once they outgrow the heap's small lists, its runs in the store's
// mappings, and gives the shares of a log on the heap: 100,000 calls of
// about 11 bytes in a log sized for 20,000 events (240 KB, 1,087 runs)
// take two buffers of 1 MiB and runs grown twice past the estimate.
func TestCallLogInStore(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the store maps memory on Linux only")
	}
	st := newStore()
	heap := newCallLog()
	l := newCallLogIn(st, 20000)
	if cap(l.spans) != (20000*callLogBytes+runBytes+logCallMax)/runBytes+16 {
		t.Fatalf("runs reserved: %d", cap(l.spans))
	}
	t0 := 1000.0
	for i := range 100000 {
		d := 3.0 + float64(i%7)*0.125
		heap.add(uint16(i%3), uint64(0x400000+i%5*16), t0, t0+d)
		l.add(uint16(i%3), uint64(0x400000+i%5*16), t0, t0+d)
		t0 += d + 1.5
	}
	if len(l.bufs) != 2 || len(l.bufs[0]) != 1<<20 || len(l.bufs[1]) != 1<<20 {
		t.Errorf("%d buffers, want 2 of 1 MiB", len(l.bufs))
	}
	for k, b := range l.bufs {
		if !st.owns(addr(b)) {
			t.Errorf("buffer %d not in the store", k)
		}
	}
	if !st.owns(addr(l.spans)) || len(l.spans) <= 4*1087 {
		t.Errorf("%d runs, in the store %v", len(l.spans), st.owns(addr(l.spans)))
	}
	ss := [][2]float64{{1001.5, 1020.25}, {2500, 2510.75}, {60000.125, 60700}, {500000, 500000.5}}
	want, got := heap.pathKeys(ss), l.pathKeys(ss)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for k := range got {
		if got[k] != want[k] {
			t.Errorf("key %d: %+v, want %+v", k, got[k], want[k])
		}
	}
	if len(l.spans) != len(heap.spans) {
		t.Errorf("%d runs, %d on the heap", len(l.spans), len(heap.spans))
	}
	n, unmaps := len(st.maps), storeUnmaps.Load()
	st.close()
	if got := storeUnmaps.Load() - unmaps; got != int64(n) || n != 2 {
		t.Errorf("%d mappings, %d unmapped; want 2 (a region for the buffers, one for the runs)", n, got)
	}
}
