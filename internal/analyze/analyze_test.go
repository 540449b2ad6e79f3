package analyze

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// Function ids of the test traces' header.
const (
	fSend = iota
	fRecv
	fSsend
	fBarrier
	fBcast
	fReduce
	fIrecv
	fIsend
	fWaitall
	fCommRank
	fAllreduce
)

var fnNames = []string{"MPI_Send", "MPI_Recv", "MPI_Ssend", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Comm_rank", "MPI_Allreduce"}

// rankFile encodes a rank's trace file (1 tick = 1 ns, one host, world
// only, the events in one compressed block, a final block).
func rankFile(t testing.TB, rank, size int, evs []trace.Event) []byte {
	return rankFileOn(t, rank, size, "h", nil, evs)
}

// rankFileOn is rankFile on a host, with clock samples.
func rankFileOn(t testing.TB, rank, size int, host string, syncs []trace.Sync, evs []trace.Event) []byte {
	t.Helper()
	return rankFileWith(t, rank, size, host, syncs, nil, evs)
}

// rankFileWith is rankFileOn with communicators besides the world.
func rankFileWith(t testing.TB, rank, size int, host string, syncs []trace.Sync, comms []trace.CommDef, evs []trace.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	bw, _ := trace.NewBlockWriter(&b)
	classes := make([]string, len(fnNames))
	bw.Block(trace.BHeader, trace.EncodeHeader(&trace.Header{Rank: rank, Size: size, PID: 100 + rank, Host: host, Family: "test",
		Tool: "0", Timer: "clock", RealNs: 1, FnNames: fnNames, FnClasses: classes}))
	bw.Block(trace.BCalib, trace.EncodeCalib(trace.Calib{NsPerTick: 1}))
	for _, s := range syncs {
		bw.Block(trace.BSync, trace.EncodeSync(s))
	}
	world := make([]int, size)
	for i := range world {
		world[i] = i
	}
	bw.Block(trace.BComm, trace.EncodeComm(&trace.CommDef{ID: 0, Key: "world", Size: size, World: world}))
	for i := range comms {
		bw.Block(trace.BComm, trace.EncodeComm(&comms[i]))
	}
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	var scratch bytes.Buffer
	p, err := trace.AppendEvents(nil, 1000+rank, evs, fw, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	bw.Block(trace.BEvents, p)
	bw.Block(trace.BFinal, trace.EncodeFinal(trace.Final{}))
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeJob writes the ranks' events as a job directory.
func writeJob(t testing.TB, ranks ...[]trace.Event) string {
	t.Helper()
	job := t.TempDir()
	for r, evs := range ranks {
		writeFile(t, trace.RankPath(job, r), rankFile(t, r, len(ranks), evs))
	}
	return job
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o666); err != nil {
		t.Fatal(err)
	}
}

func call(fn uint16, t0, t1 uint64) trace.Event {
	return trace.Event{Kind: trace.KCall, Fn: fn, T0: t0, T1: t1, PC: 0x400000 + 0x10*uint64(fn), SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
}

func send(fn uint16, t0, t1 uint64, peer int32) trace.Event {
	e := call(fn, t0, t1)
	e.Flags, e.SPeer, e.STag, e.SBytes = trace.FSend, peer, 5, 8
	return e
}

func recv(fn uint16, t0, t1 uint64, peer int32) trace.Event {
	e := call(fn, t0, t1)
	e.Flags, e.RPeer, e.RTag, e.RBytes = trace.FRecv, peer, 5, 8
	return e
}

// ir is an MPI_Irecv from peer posted at t0 with request req; is the
// same for an MPI_Isend to peer.
func ir(t0 uint64, peer int32, req uint64) trace.Event {
	e := recv(fIrecv, t0, t0+100, peer)
	e.Flags |= trace.FReq
	e.Req = req
	return e
}

func is(t0 uint64, peer int32, req uint64) trace.Event {
	e := send(fIsend, t0, t0+100, peer)
	e.Flags |= trace.FReq
	e.Req = req
	return e
}

// done is request req's completion in an MPI_Waitall at t: a receive of
// 8 bytes with tag 5 from peer, or a send when peer < 0.
func done(t uint64, req uint64, peer int32) trace.Event {
	e := trace.Event{Kind: trace.KComplete, Fn: fWaitall, T0: t, T1: t, Req: req, SPeer: -1, STag: -1, RPeer: -1, RTag: -1}
	if peer >= 0 {
		e.Flags, e.RPeer, e.RTag, e.RBytes = trace.FRecv, peer, 5, 8
	}
	return e
}

func coll(fn uint16, t0, t1 uint64, root int32) trace.Event {
	e := call(fn, t0, t1)
	e.Flags, e.STag, e.SBytes = trace.FColl, root, 8
	return e
}

func run(t *testing.T, job string) *Result {
	t.Helper()
	return runOpt(t, job, Options{Workers: 2})
}

// runOpt analyzes job offline with opt.
func runOpt(t *testing.T, job string, opt Options) *Result {
	t.Helper()
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(j, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// want checks every pattern on every rank: want[pattern][rank] in ns,
// exactly (absent: 0).
func want(t *testing.T, res *Result, w map[Pattern]map[int]float64) {
	t.Helper()
	for p := Pattern(0); p < NumPatterns; p++ {
		for i, r := range res.Ranks {
			if got, x := res.Patterns[p].ByRank[i]*1e9, w[p][r]; math.Abs(got-x) > 1e-3 {
				t.Errorf("%s on rank %d: %.3f ns, want %.0f", p, r, got, x)
			}
		}
	}
}

func TestLateSender(t *testing.T) {
	res := run(t, writeJob(t,
		[]trace.Event{send(fSend, 30000, 31000, 1)},
		[]trace.Event{recv(fRecv, 10000, 32000, 0)}))
	want(t, res, map[Pattern]map[int]float64{LateSender: {1: 20000}})
	if res.Messages != 1 || res.Unmatched != 0 {
		t.Errorf("%d messages, %d unmatched ends; want 1, 0", res.Messages, res.Unmatched)
	}
	if len(res.Rows) != 1 || res.Rows[0] != (Row{Pattern: "late_sender", Rank: 1, Func: "MPI_Recv", Callsite: "0x400010",
		Comm: "MPI_COMM_WORLD", Seconds: 20000e-9, Instances: 1}) {
		t.Errorf("rows %+v", res.Rows)
	}
}

func TestLateReceiver(t *testing.T) {
	// A synchronous send blocked until the receive was posted; an eager
	// send that returned before it is not.
	res := run(t, writeJob(t,
		[]trace.Event{send(fSsend, 10000, 32000, 1), send(fSend, 40000, 40500, 1)},
		[]trace.Event{recv(fRecv, 30000, 32500, 0), recv(fRecv, 50000, 50500, 0)}))
	want(t, res, map[Pattern]map[int]float64{LateReceiver: {0: 20000}})
}

func TestCollectives(t *testing.T) {
	// Barrier: entries 0, 10000, 20000. Bcast root 1 late by 5000 and
	// 7000. Reduce to root 0, early by 3000 (the first non-root).
	// Allreduce: rank 2 late by 4000.
	res := run(t, writeJob(t,
		[]trace.Event{coll(fBarrier, 0, 21000, -1), coll(fBcast, 30000, 36000, 1), coll(fReduce, 40000, 49000, 0), coll(fCommRank+100, 0, 0, -1)}[:3],
		[]trace.Event{coll(fBarrier, 10000, 21000, -1), coll(fBcast, 35000, 35500, 1), coll(fReduce, 43000, 43100, 0)},
		[]trace.Event{coll(fBarrier, 20000, 21000, -1), coll(fBcast, 28000, 36000, 1), coll(fReduce, 48000, 48100, 0)}))
	want(t, res, map[Pattern]map[int]float64{WaitBarrier: {0: 20000, 1: 10000}, LateBroadcast: {0: 5000, 2: 7000}, EarlyReduce: {0: 3000}})
	if res.Colls != 3 {
		t.Errorf("%d collectives matched, want 3", res.Colls)
	}
}

func TestWaitall(t *testing.T) {
	// Rank 0: Irecv at 1000, Isend at 1500, Waitall 2000..25000; rank 1
	// posts its Irecv at 18000 and its Isend at 20000: late sender
	// 18000 in the Waitall, the late receiver (16000) loses.
	res := run(t, writeJob(t,
		[]trace.Event{ir(1000, 1, 0xa), is(1500, 1, 0xb), done(25000, 0xa, 1), done(25000, 0xb, -1), call(fWaitall, 2000, 25000)},
		[]trace.Event{ir(18000, 0, 0xa), is(20000, 0, 0xb), done(20500, 0xa, 0), done(20500, 0xb, -1), call(fWaitall, 20200, 20500)}))
	want(t, res, map[Pattern]map[int]float64{LateSender: {0: 18000}})
	if res.Messages != 2 {
		t.Errorf("%d messages, want 2", res.Messages)
	}
}

func TestCriticalPath(t *testing.T) {
	// 0 -> 1 -> 2: rank 0 computes 10000 then sends; rank 1 receives,
	// computes, sends at 30000; rank 2 receives and ends at 60100.
	res := run(t, writeJob(t,
		[]trace.Event{call(fCommRank, 0, 100), send(fSend, 10000, 10100, 1)},
		[]trace.Event{recv(fRecv, 0, 10200, 0), send(fSend, 30000, 30100, 2)},
		[]trace.Event{recv(fRecv, 0, 30200, 1), call(fCommRank, 60000, 60100)}))
	cp := res.Critical
	for k, w := range []float64{10000, 20000, 30100} {
		if got := cp.ByRank[k] * 1e9; math.Abs(got-w) > 1e-3 {
			t.Errorf("rank %d: %.3f ns on the path, want %.0f", k, got, w)
		}
	}
	if cp.EndRank != 2 || cp.StartRank != 0 || cp.Jumps != 2 || math.Abs(cp.Seconds*1e9-60100) > 1e-3 {
		t.Errorf("path %+v", cp)
	}
	if math.Abs(cp.MPI*1e9-600) > 1e-3 || math.Abs(cp.Computation*1e9-59500) > 1e-3 {
		t.Errorf("MPI %.3f ns, computation %.3f ns on the path; want 600, 59500", cp.MPI*1e9, cp.Computation*1e9)
	}
	if len(cp.Funcs) != 2 || cp.Funcs[0].Func != "MPI_Recv" || math.Abs(cp.Funcs[0].Seconds*1e9-400) > 1e-3 {
		t.Errorf("functions %+v", cp.Funcs)
	}
}

// TestDamaged: a corrupt block ends its rank's analysis with a warning
// naming the file and the offset; a truncated file is analyzed up to its
// last whole block.
func TestDamaged(t *testing.T) {
	job := writeJob(t,
		[]trace.Event{send(fSend, 30000, 31000, 1), send(fSend, 40000, 41000, 1)},
		[]trace.Event{recv(fRecv, 10000, 32000, 0), recv(fRecv, 35000, 42000, 0)})
	path := trace.RankPath(job, 1)
	b, _ := os.ReadFile(path)
	bad := bytes.Clone(b)
	bad[len(bad)-12] ^= 0xff // inside the event block
	writeFile(t, path, bad)
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(j, Options{})
	if err != nil {
		// Rank 1 skipped at open: rank 0 alone is analyzed.
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), path) {
		t.Errorf("warnings %q do not name %s", res.Warnings, path)
	}
	writeFile(t, path, b[:len(b)-3])
	res = run(t, job)
	if len(res.Warnings) == 0 {
		t.Errorf("truncated file: no warning")
	}
}

// FuzzAnalyze: rank 1's file is the fuzzer's; the analysis never panics.
func FuzzAnalyze(f *testing.F) {
	f.Add(rankFile(f, 1, 2, []trace.Event{recv(fRecv, 10000, 32000, 0), coll(fBarrier, 40000, 41000, -1)}))
	f.Add(rankFile(f, 1, 2, []trace.Event{coll(fBcast, 0, 100, 0), coll(fReduce, 100, 200, 1)}))
	r0 := rankFile(f, 0, 2, []trace.Event{send(fSend, 30000, 31000, 1), coll(fBarrier, 35000, 41000, -1), coll(fBcast, 50, 60, 0), coll(fReduce, 150, 160, 1)})
	f.Fuzz(func(t *testing.T, b []byte) {
		job := t.TempDir()
		writeFile(t, trace.RankPath(job, 0), r0)
		writeFile(t, trace.RankPath(job, 1), b)
		j, err := trace.OpenJob(job)
		if err != nil {
			return
		}
		res, err := Analyze(j, Options{Workers: 2})
		if err != nil {
			return
		}
		var out bytes.Buffer
		res.WriteText(&out, 5)
		res.WriteJSON(&out)
	})
}

// TestSpill: with a memory bound below the trace's records, they go
// through spill files, and the result is the same as in memory.
func TestSpill(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 40000, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := Analyze(j, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spilled, err := Analyze(j, Options{Workers: 2, Memory: 100 << 10})
	if err != nil {
		t.Fatal(err)
	}
	// 1,000 iterations of 10 events per rank: 2 messages sent by each
	// rank and an MPI_Allreduce each, an MPI_Barrier every 100.
	if mem.Messages != 8000 || mem.Unmatched != 0 || mem.Colls != 1010 {
		t.Errorf("in memory: %d messages, %d unmatched ends, %d collectives; want 8000, 0, 1010", mem.Messages, mem.Unmatched, mem.Colls)
	}
	a, _ := json.Marshal(mem)
	b, _ := json.Marshal(spilled)
	if !bytes.Equal(a, b) {
		t.Errorf("spilled result differs:\n%s\n%s", a, b)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("spill files left in %s: %v", tmp, left)
	}
}

// TestSortByKey: the bucket sort agrees with a stable comparison sort.
func TestSortByKey(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 1000, 100000} {
		for _, max := range []uint64{^uint64(0), 1000, 1} {
			a := make([][2]uint64, n)
			x := uint64(n)*2654435761 + max
			for i := range a {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				k := x
				if max != ^uint64(0) {
					k %= max + 1
				}
				a[i] = [2]uint64{k, uint64(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(p, q [2]uint64) int { return cmpU(p[0], q[0]) })
			got := sortByKey(a, func(p *[2]uint64) uint64 { return p[0] })
			if !slices.Equal(got, want) {
				t.Errorf("n %d, keys up to %d: not sorted stably", n, max)
			}
		}
	}
}

// chainJob: rank 1 computes 30000 ns before it sends to rank 2, which
// then sends to rank 3: rank 2 waits 30000 (late sender), rank 3 30200,
// 30000 of it while rank 2 waited.
func chainJob() [][]trace.Event {
	return [][]trace.Event{
		{call(fCommRank, 0, 100)},
		{call(fCommRank, 0, 100), send(fSend, 30000, 30050, 2)},
		{recv(fRecv, 0, 30100, 1), send(fSend, 30200, 30250, 3)},
		{recv(fRecv, 0, 30300, 2)},
	}
}

// TestDelay: the waiting of the chain goes to its root cause: rank 1's
// computation before its MPI_Send (30000 short term, rank 2's wait, and
// 30000 long term, the part of rank 3's wait that overlaps rank 2's);
// rank 2's own 200 ns before its send caused the rest of rank 3's wait.
func TestDelay(t *testing.T) {
	res := run(t, writeJob(t, chainJob()...))
	want := []Delay{
		{Rank: 1, Func: "MPI_Send", Callsite: "0x400000", Seconds: 60000e-9, Short: 30000e-9, Long: 30000e-9, Instances: 1},
		{Rank: 2, Func: "MPI_Send", Callsite: "0x400000", Seconds: 200e-9, Short: 200e-9, Instances: 1},
	}
	if len(res.Delays) != len(want) {
		t.Fatalf("delays %+v, want %+v", res.Delays, want)
	}
	var total, waits float64
	for i, d := range res.Delays {
		w := want[i]
		if d.Rank != w.Rank || d.Func != w.Func || d.Callsite != w.Callsite || d.Instances != w.Instances ||
			math.Abs(d.Seconds-w.Seconds) > 1e-12 || math.Abs(d.Short-w.Short) > 1e-12 || math.Abs(d.Long-w.Long) > 1e-12 {
			t.Errorf("delay %d: %+v, want %+v", i, d, w)
		}
		total += d.Seconds
	}
	for _, p := range res.Patterns {
		waits += p.Seconds
	}
	if math.Abs(total-waits) > 1e-12 {
		t.Errorf("delay costs %.9f s, waits %.9f s: want equal", total, waits)
	}
}
