package analyze

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// Function ids of the one-sided calls in the RMA test traces' header
// (after fnNames').
const (
	fWinCreate = uint16(iota + 11)
	fWinFence
	fWinStart
	fWinComplete
	fWinPost
	fWinWait
	fWinLock
	fWinUnlock
	fWinFlush
	fPut
	fWinFree
	fWinLockAll
	fWinUnlockAll
	fWinFlushAll
)

var rmaFnNames = append(append([]string{}, fnNames...), "MPI_Win_create", "MPI_Win_fence", "MPI_Win_start", "MPI_Win_complete",
	"MPI_Win_post", "MPI_Win_wait", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_flush", "MPI_Put", "MPI_Win_free",
	"MPI_Win_lock_all", "MPI_Win_unlock_all", "MPI_Win_flush_all")

// rmaRankFile is rankFile with the one-sided functions in the header.
func rmaRankFile(t testing.TB, rank, size int, evs []trace.Event) []byte {
	t.Helper()
	var b bytes.Buffer
	bw, _ := trace.NewBlockWriter(&b)
	bw.Block(trace.BHeader, trace.EncodeHeader(&trace.Header{Rank: rank, Size: size, PID: 100 + rank, Host: "h", Family: "test",
		Tool: "0", Timer: "clock", RealNs: 1, FnNames: rmaFnNames, FnClasses: make([]string, len(rmaFnNames))}))
	bw.Block(trace.BCalib, trace.EncodeCalib(trace.Calib{NsPerTick: 1}))
	world := make([]int, size)
	for i := range world {
		world[i] = i
	}
	bw.Block(trace.BComm, trace.EncodeComm(&trace.CommDef{ID: 0, Key: "world", Size: size, World: world}))
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

func writeRMAJob(t testing.TB, ranks ...[]trace.Event) string {
	t.Helper()
	job := t.TempDir()
	for r, evs := range ranks {
		writeFile(t, trace.RankPath(job, r), rmaRankFile(t, r, len(ranks), evs))
	}
	return job
}

// win is a one-sided call on window 0 of MPI_COMM_WORLD (target: a world
// rank, -1 none).
func win(fn uint16, t0, t1 uint64, target int32) trace.Event {
	return trace.Event{Kind: trace.KRma, Fn: fn, T0: t0, T1: t1, PC: 0x500000 + 0x10*uint64(fn), SPeer: target, RPeer: -1, RTag: -1}
}

// grp is MPI_Win_post or MPI_Win_start with a group of world ranks.
func grp(fn uint16, t0, t1 uint64, members ...int) trace.Event {
	e := win(fn, t0, t1, -1)
	e.RTag = int32(len(members))
	for _, m := range members {
		e.SBytes |= 1 << m
	}
	return e
}

// lock is MPI_Win_lock on target (exclusive or shared).
func lock(t0, t1 uint64, target int32, excl bool) trace.Event {
	e := win(fWinLock, t0, t1, target)
	e.RTag = 1
	if excl {
		e.RTag = 0
	}
	return e
}

func created() trace.Event { return win(fWinCreate, 0, 100, -1) }

// rmaJobs are the hand-made one-sided traces with their waits (ns).
var rmaJobs = map[string]struct {
	ranks [][]trace.Event
	want  map[Pattern]map[int]float64
}{
	// Two fences: entries 1000, 2000, 5000 (waits 4000, 3000), then
	// 6000, 6000, 7000 (waits 1000, 1000).
	"fence": {[][]trace.Event{
		{created(), win(fWinFence, 1000, 5100, -1), win(fWinFence, 6000, 7100, -1)},
		{created(), win(fWinFence, 2000, 5100, -1), win(fWinFence, 6000, 7100, -1)},
		{created(), win(fWinFence, 5000, 5100, -1), win(fWinFence, 7000, 7100, -1)}},
		map[Pattern]map[int]float64{WaitFence: {0: 5000, 1: 4000}}},
	// Rank 0 starts an access epoch to rank 1 at 1000, which posts at
	// 8000: late post in MPI_Win_start (100), MPI_Put (100) and
	// MPI_Win_complete (8000 - 1400).
	"late post": {[][]trace.Event{
		{created(), grp(fWinStart, 1000, 1100, 1), win(fPut, 1200, 1300, 1), win(fWinComplete, 1400, 9000, -1)},
		{created(), grp(fWinPost, 8000, 8100, 0), win(fWinWait, 8200, 9100, -1)}},
		map[Pattern]map[int]float64{LatePost: {0: 6800}}},
	// Rank 1 waits from 2000; rank 0 completes at 20000, its put done
	// at 1300: early wait 18000, all of it late complete. Then the put
	// is late (15000-15100) and the complete at once (15200): early
	// wait 13200, late complete 100.
	"early wait": {[][]trace.Event{
		{created(), grp(fWinStart, 1000, 1100, 1), win(fPut, 1200, 1300, 1), win(fWinComplete, 20000, 20100, -1),
			grp(fWinStart, 101000, 101100, 1), win(fPut, 115000, 115100, 1), win(fWinComplete, 115200, 115300, -1)},
		{created(), grp(fWinPost, 900, 1000, 0), win(fWinWait, 2000, 20200, -1),
			grp(fWinPost, 100900, 101000, 0), win(fWinWait, 102000, 115400, -1)}},
		map[Pattern]map[int]float64{EarlyWait: {1: 31200}, LateComplete: {1: 18100}}},
	// Target 0. Rank 1 holds an exclusive lock (flushed at 1500) until
	// its unlock at 30000; rank 2 locks at 10000 and waits in its calls
	// until then: 100 + 100 + 19600. Two shared locks overlap: no
	// contention. Rank 2's exclusive lock waits for rank 1's shared one
	// (61000 to 70000). Rank 0's lock_all epoch (a shared lock on
	// target 0 among others) went after rank 1's exclusive one (rank 1
	// flushed by 1500, rank 0 can have held it no sooner than its
	// unlock_all): rank 0 waited in MPI_Win_lock_all (100), and rank 2's
	// exclusive epochs went before it (their unlocks entered before rank
	// 0's): no wait of theirs.
	"lock": {[][]trace.Event{
		{created(), win(fWinLockAll, 1000, 1100, -1), win(fWinUnlockAll, 80000, 80100, -1)},
		{created(), lock(1000, 1100, 0, true), win(fPut, 1200, 1300, 0), win(fWinFlush, 1400, 1500, 0), win(fWinUnlock, 30000, 30500, 0),
			lock(40000, 40100, 0, false), win(fWinUnlock, 50000, 50100, 0),
			lock(60000, 60100, 0, false), win(fWinUnlock, 70000, 70100, 0)},
		{created(), lock(10000, 10100, 0, true), win(fPut, 10200, 10300, 0), win(fWinUnlock, 10400, 31000, 0),
			lock(41000, 41100, 0, false), win(fWinUnlock, 41200, 51000, 0),
			lock(61000, 70500, 0, true), win(fWinUnlock, 70600, 70700, 0)}},
		map[Pattern]map[int]float64{LockContention: {0: 100, 2: 28800}}},
	// MPI_Win_lock_all is a shared lock on every target. Target 0: rank
	// 1's lock_all epoch flushed to it by 1500, so held its lock when
	// rank 2 asked for an exclusive one at 10000: rank 2 waits in its
	// calls until rank 1's unlock_all at 30000 (100 + 100 + 19600).
	// Then rank 2's exclusive lock, flushed by 41000, is first: rank 1's
	// next lock_all epoch waits in MPI_Win_lock_all, MPI_Put and
	// MPI_Win_flush_all until rank 2's unlock at 60000 (100 + 100 +
	// 14600); its epochs on targets 1 and 2 conflict with nothing.
	"lock all": {[][]trace.Event{
		{created()},
		{created(), win(fWinLockAll, 0, 100, -1), win(fPut, 200, 300, 0), win(fWinFlush, 400, 1500, 0), win(fWinUnlockAll, 30000, 30500, -1),
			win(fWinLockAll, 45000, 45100, -1), win(fPut, 45200, 45300, 0), win(fWinFlushAll, 45400, 60500, -1), win(fWinUnlockAll, 60600, 60700, -1)},
		{created(), lock(10000, 10100, 0, true), win(fPut, 10200, 10300, 0), win(fWinUnlock, 10400, 31000, 0),
			lock(40000, 40100, 0, true), win(fWinFlush, 40200, 41000, 0), win(fWinUnlock, 60000, 60100, 0)}},
		map[Pattern]map[int]float64{LockContention: {1: 14800, 2: 19800}}},
	// Two fences. The first: all enter at 1000. Then rank 2 puts to
	// rank 1 (ending at 1600) and rank 0, after computing, puts to rank
	// 1 until 20100 and enters the second fence at 20200: rank 1 (from
	// 2000) and rank 2 (from 3000) wait at fence until 20200, rank 1's
	// wait an early fence until rank 0's put ended, 20100. Rank 2's
	// operation to rank 0 ended before it too entered (no early fence).
	"early fence": {[][]trace.Event{
		{created(), win(fWinFence, 1000, 1100, -1), win(fPut, 20000, 20100, 1), win(fWinFence, 20200, 20300, -1)},
		{created(), win(fWinFence, 1000, 1100, -1), win(fWinFence, 2000, 20300, -1)},
		{created(), win(fWinFence, 1000, 1100, -1), win(fPut, 1500, 1600, 1), win(fPut, 1700, 1800, 0), win(fWinFence, 3000, 20300, -1)}},
		map[Pattern]map[int]float64{WaitFence: {1: 18200, 2: 17200}, EarlyFence: {1: 18100}}},
	// Which epoch held the lock first. Rank 1 flushed (so held the lock)
	// by 1500, rank 2's lock returned at 8000 and its unlock ended
	// before rank 1's (as MPICH's unlock may wait on): rank 1 was first,
	// rank 2 waited in MPI_Win_lock until rank 1's unlock at 5000. Then
	// neither flushes and either could have been first: rank 1, which
	// entered its unlock first (rank 2's lock waits 4000 again).
	"lock order": {[][]trace.Event{
		{created()},
		{created(), lock(0, 100, 0, true), win(fPut, 200, 300, 0), win(fWinFlush, 400, 1500, 0), win(fWinUnlock, 5000, 9000, 0),
			lock(20000, 20100, 0, true), win(fWinUnlock, 25000, 25500, 0)},
		{created(), lock(1000, 8000, 0, true), win(fPut, 8000, 8100, 0), win(fWinUnlock, 8100, 8200, 0),
			lock(21000, 25200, 0, true), win(fWinUnlock, 25300, 25400, 0)}},
		map[Pattern]map[int]float64{LockContention: {2: 8000}}},
}

// TestRMA: the one-sided patterns on hand-made traces, exactly; the
// other patterns 0.
func TestRMA(t *testing.T) {
	for name, c := range rmaJobs {
		t.Run(name, func(t *testing.T) {
			res := run(t, writeRMAJob(t, c.ranks...))
			want(t, res, c.want)
			if t.Failed() {
				var b bytes.Buffer
				res.WriteText(&b, 0)
				t.Log(b.String())
			}
		})
	}
}

// TestRMARows: the rows of the late post case: one per call that waited,
// on the window's communicator.
func TestRMARows(t *testing.T) {
	res := run(t, writeRMAJob(t, rmaJobs["late post"].ranks...))
	got := map[string]float64{}
	for _, r := range res.Rows {
		if r.Pattern != "late_post" || r.Rank != 0 || r.Comm != "MPI_COMM_WORLD" || r.Instances != 1 {
			t.Errorf("row %+v", r)
		}
		got[r.Func] = r.Seconds * 1e9
	}
	for fn, w := range map[string]float64{"MPI_Win_start": 100, "MPI_Put": 100, "MPI_Win_complete": 6600} {
		if math.Abs(got[fn]-w) > 1e-3 {
			t.Errorf("%s: %.3f ns, want %.0f", fn, got[fn], w)
		}
	}
	// Rank 0 last to finish: the critical path leaves its
	// MPI_Win_complete for rank 1's MPI_Win_post (at 8000).
	ranks := rmaJobs["late post"].ranks
	res = run(t, writeRMAJob(t, append(ranks[0][:len(ranks[0]):len(ranks[0])], call(fCommRank, 9500, 9600)), ranks[1]))
	if cp := res.Critical; cp.EndRank != 0 || cp.StartRank != 1 || cp.Jumps != 1 || math.Abs(cp.ByRank[1]*1e9-8000) > 1e-3 {
		t.Errorf("critical path %+v: want from rank 1 (8000 ns) to rank 0, one move", cp)
	}
}

// TestRMAStats: the one-sided synchronizations matched, in the result
// and on the text report's summary line, for each hand-made trace (a
// lock_all epoch counts once per target of the window's group), and
// those left unmatched: a fence rank 2 does not enter, an access epoch
// without its exposure epoch, a lock epoch that never ends. In the job
// the same (TestRMAInJob: the same JSON).
func TestRMAStats(t *testing.T) {
	want := map[string]RMAStats{"fence": {Fences: 2}, "late post": {Epochs: 1}, "early wait": {Epochs: 2}, "lock": {Locks: 3 + 3 + 3},
		"lock order": {Locks: 4}, "lock all": {Locks: 2*3 + 2}, "early fence": {Fences: 2}}
	for name, c := range rmaJobs {
		res := run(t, writeRMAJob(t, c.ranks...))
		if res.RMA != want[name] {
			t.Errorf("%s: %+v, want %+v", name, res.RMA, want[name])
		}
	}
	res := run(t, writeRMAJob(t,
		[]trace.Event{created(), win(fWinFence, 1000, 2000, -1), grp(fWinStart, 3000, 3100, 1), win(fWinComplete, 3200, 3300, -1),
			lock(4000, 4100, 2, true), win(fWinUnlock, 4200, 4300, 2)},
		[]trace.Event{created(), win(fWinFence, 1500, 2000, -1), lock(5000, 5100, 2, false)},
		[]trace.Event{created()}))
	if w := (RMAStats{Locks: 1, Unmatched: 3}); res.RMA != w {
		t.Errorf("%+v, want %+v", res.RMA, w)
	}
	var b bytes.Buffer
	res.WriteText(&b, 0)
	const line = "; 0 messages and 0 collectives matched; one-sided: 0 fences, 0 PSCW epoch pairs and 1 lock epochs matched, 3 unmatched\n"
	if !strings.Contains(b.String(), line) {
		t.Errorf("no %q in the report:\n%s", line, b.String())
	}
	b.Reset()
	run(t, writeJob(t, []trace.Event{send(fSend, 1000, 1100, 1)}, []trace.Event{recv(fRecv, 0, 1200, 0)})).WriteText(&b, 0)
	if strings.Contains(b.String(), "one-sided") {
		t.Errorf("one-sided counts in the report of a job without:\n%s", b.String())
	}
}

// TestRMAInJob: the analysis in the job gives the offline result exactly,
// with two more exchanges (RMA records, their candidates) a round of the
// one-sided records; with the default bound and with one that takes
// several rounds (of both kinds of records).
func TestRMAInJob(t *testing.T) {
	defer func(v int64) { rmaMinLimit = v }(rmaMinLimit)
	rmaMinLimit = 600
	for name, c := range rmaJobs {
		t.Run(name, func(t *testing.T) {
			dir := writeRMAJob(t, c.ranks...)
			off := run(t, dir)
			a, _ := json.MarshalIndent(off, "", " ")
			for _, bound := range []int64{0, 600} {
				in, jr := inJobOpt(t, dir, len(c.ranks), Options{Memory: bound})
				_, px := pathExchanges(t, jr.path)
				n := jr.exchanges - px // the critical path's own (TestInJobAgrees)
				b, _ := json.MarshalIndent(in, "", " ")
				if !bytes.Equal(a, b) {
					t.Errorf("in the job, bound %d:\n%s\noffline:\n%s", bound, b, a)
				}
				most := uint64(0)
				for r := range c.ranks {
					most = max(most, uint64(len(c.ranks[r])))
				}
				// The RMA records' rounds: one with the default bound;
				// with the small one (a share of 600 bytes, 10 records),
				// several for the lock_all epochs (18 records on rank 1).
				rounds := jobRounds(most, bound)
				rr := (n - 2*rounds - 1) / 2
				if n != 2*rounds+2*rr+1 || rr < 1 || bound == 0 && rr != 1 || name == "lock all" && bound > 0 && rr < 2 {
					t.Errorf("bound %d: %d exchanges, want 2 x %d rounds, 2 x %d RMA rounds and 1", bound, n, rounds, rr)
				}
			}
		})
	}
}

// TestRMAMemory: the one-sided records count against the memory bound:
// beyond their share (here 600 bytes, 10 records) they go to temporary
// files and are matched in rounds, with the result of the analysis held
// in memory; with a share too small for the largest instances (200
// bytes: a round holds at most 7 records, while one target's lock
// epochs are up to 17), those are left out with a warning, offline and
// in the job alike, never more memory.
func TestRMAMemory(t *testing.T) {
	defer func(v int64) { rmaMinLimit = v }(rmaMinLimit)
	nspilled := 0
	for name, c := range rmaJobs {
		t.Run(name, func(t *testing.T) {
			dir := writeRMAJob(t, c.ranks...)
			rmaMinLimit = 1 << 20
			a, _ := json.MarshalIndent(run(t, dir), "", " ")
			rmaMinLimit = 600
			res := runOpt(t, dir, Options{Workers: 2, Memory: 1})
			if b, _ := json.MarshalIndent(res, "", " "); !bytes.Equal(a, b) {
				t.Errorf("bounded:\n%s\nin memory:\n%s", b, a)
			}
			// What spilled, in how many rounds (rmaCands' own figures).
			rb := newRMABound(0, 4)
			defer rb.close()
			j, err := trace.OpenJob(dir)
			if err != nil {
				t.Fatal(err)
			}
			w := trace.NewWalker(j, trace.WalkOptions{})
			var total uint64
			for i, r := range j.Ranks {
				p := newRankPass(i, r.Header.Rank, 1)
				p.rma.bound = rb
				if err := w.WalkRank(i, p); err != nil {
					t.Fatal(err)
				}
				total += uint64(len(p.rma.recs))
			}
			total += uint64(rb.spilled.Load())
			// (a walk counts a call's records at its next call).
			if spilled, rounds := rb.spilled.Load(), rmaRounds(total, rb.limit); total*rmaRecMem > 2*600 && (spilled == 0 || rounds < 2) {
				t.Errorf("%d records, %d spilled, %d rounds: want some spilled, in rounds", total, spilled, rounds)
			} else if spilled > 0 {
				nspilled++
			}
		})
	}
	if nspilled < 2 {
		t.Errorf("%d cases spilled their records, want at least 2", nspilled)
	}
	rmaMinLimit = 200
	dir := writeRMAJob(t, rmaJobs["lock"].ranks...)
	res := runOpt(t, dir, Options{Workers: 2, Memory: 1})
	in, _ := inJobOpt(t, dir, 3, Options{Memory: 1})
	for _, r := range []*Result{res, in} {
		n := 0
		for _, w := range r.Warnings {
			if strings.Contains(w, "did not fit the analysis memory bound") {
				n++
			}
		}
		if n == 0 || r.Patterns[LockContention].Seconds != 0 || r.RMA.Locks != 2 { // rank 0's lock_all on targets 1 and 2
			t.Errorf("warnings %q, lock contention %.9f s, %d lock epochs: want target 0's lock epochs left out (2 others kept), and said so",
				r.Warnings, r.Patterns[LockContention].Seconds, r.RMA.Locks)
		}
	}
}

// TestRMADelay: the delay costs of the one-sided waits add up to them
// (late complete and early fence aside, parts of early wait and wait at
// fence).
func TestRMADelay(t *testing.T) {
	for name, c := range rmaJobs {
		t.Run(name, func(t *testing.T) {
			res := run(t, writeRMAJob(t, c.ranks...))
			var waits, costs float64
			for p, pt := range res.Patterns {
				if Pattern(p) != LateComplete && Pattern(p) != EarlyFence { // parts of others
					waits += pt.Seconds
				}
			}
			for _, d := range res.Delays {
				costs += d.Seconds
			}
			if waits == 0 || math.Abs(waits-costs) > 1e-12 {
				t.Errorf("waits %.9f s, delay costs %.9f s", waits, costs)
			}
		})
	}
}

// TestRMADecode: records and candidates that are not whole are refused,
// never a panic.
func TestRMADecode(t *testing.T) {
	r := rmaRec{inst: 7, role: rmaFence, idx: 1, key: 2, call: 3, t0: 1, t1: 2}
	b := appendRMARec(nil, &r)
	got, err := decodeRMARecs(b, nil, nil)
	if err != nil || len(got) != 1 || got[0] != r {
		t.Errorf("decoded %+v, %v; want %+v", got, err, r)
	}
	if _, err := decodeRMARecs(b[:len(b)-1], nil, nil); err == nil {
		t.Errorf("a record cut short: no error")
	}
	b[8] = 99
	if _, err := decodeRMARecs(b, nil, nil); err == nil {
		t.Errorf("a bad role: no error")
	}
}

// FuzzRMA: rank 1's file is the fuzzer's, beside a sound rank 0 with
// every kind of epoch (lock_all and a fence epoch's operations among
// them); the analysis never panics, also with the one-sided records
// beyond a small bound (spilled, in rounds).
func FuzzRMA(f *testing.F) {
	all := []trace.Event{created(), win(fWinFence, 1000, 2000, -1), win(fPut, 2100, 2200, 1), win(fWinFence, 2300, 2400, -1),
		grp(fWinPost, 3000, 3100, 1), grp(fWinStart, 3200, 3300, 1),
		win(fPut, 3400, 3500, 1), win(fWinComplete, 3600, 3700, -1), win(fWinWait, 3800, 3900, -1),
		lock(4000, 4100, 1, true), win(fPut, 4200, 4300, 1), win(fWinFlush, 4400, 4500, 1), win(fWinUnlock, 4600, 4700, 1),
		win(fWinLockAll, 4800, 4810, -1), win(fPut, 4820, 4830, 1), win(fWinFlushAll, 4840, 4850, -1), win(fWinUnlockAll, 4860, 4870, -1),
		win(fWinFree, 5000, 5100, -1)}
	f.Add(rmaRankFile(f, 1, 2, all))
	f.Add(rmaRankFile(f, 1, 2, rmaJobs["lock"].ranks[2]))
	f.Add(rmaRankFile(f, 1, 2, rmaJobs["lock all"].ranks[1]))
	f.Add(rmaRankFile(f, 1, 2, rmaJobs["early fence"].ranks[0]))
	r0 := rmaRankFile(f, 0, 2, all)
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
		defer func(v int64) { rmaMinLimit = v }(rmaMinLimit)
		rmaMinLimit = 300
		if res, err = Analyze(j, Options{Workers: 2, Memory: 1}); err == nil {
			res.WriteText(&out, 5)
		}
	})
}
