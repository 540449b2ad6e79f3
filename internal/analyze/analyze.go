// Package analyze finds wait states and the critical path of an MPI job
// from its event trace (internal/trace), offline: `mpiscope analyze DIR`.
//
// Wait states follow the definitions of Scalasca's pattern documentation
// (the code is mpiscope's own):
//
//   - late sender: a receive (MPI_Recv, or MPI_Wait* completing a
//     nonblocking receive) entered before the matching send began; the
//     time from the receive's (or wait's) entry to the send's entry.
//   - late receiver: a send blocked until its receive was posted (a
//     synchronous or rendezvous send, or MPI_Wait* completing a
//     nonblocking send): the time from the send's (or wait's) entry to
//     the receive's posting, counted when the send was still blocked then.
//   - wait at N x N: in MPI_Allreduce, MPI_Allgather(v), MPI_Alltoall(v,w),
//     MPI_Reduce_scatter(_block), the time until the last member entered.
//   - wait at barrier: the same for MPI_Barrier.
//   - late broadcast: in MPI_Bcast, MPI_Scatter(v), a non-root's time
//     until the root entered.
//   - early reduce: in MPI_Reduce, MPI_Gather(v), the root's time until
//     the first non-root entered.
//
// One-sided communication has its own patterns (rma.go): wait at fence
// (and its part early fence), late post, early wait (and its part late
// complete), lock contention.
//
// A call that completes several requests (MPI_Waitall) waits once: until
// its latest partner was ready, attributed to that partner's pattern.
// Times are capped by the call's own end.
//
// The critical path is found by a backward replay: from the end of the
// last rank to finish, backwards along that rank until a call that waited,
// then to the partner it waited for (the sender, the receiver, the last
// member to enter a collective, the root of a broadcast) at the time that
// partner entered its call, and so on to the start of tracing. Each rank's
// share is the time the path spends on it; the function and callsite
// shares come from a second reading of the ranks on the path (time in MPI
// calls on the path; the rest is computation).
//
// Ranks are read in parallel (one goroutine per worker). Memory holds, per
// point-to-point message, one record at each end (24 bytes each), per
// blocking collective call one record (28 bytes), per call with records its
// times (24 bytes), and per wait state one jump of the critical path: not
// the events themselves.
package analyze

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// Pattern is a kind of wait state.
type Pattern uint8

// The patterns, in report order.
const (
	LateSender Pattern = iota
	LateReceiver
	WaitNxN
	WaitBarrier
	LateBroadcast
	EarlyReduce
	WaitFence      // one-sided (rma.go)
	EarlyFence     // a part of WaitFence
	LatePost       //
	EarlyWait      //
	LateComplete   // a part of EarlyWait
	LockContention //
	NumPatterns
	noPattern Pattern = 255
)

var patternNames = [NumPatterns]string{"late_sender", "late_receiver", "wait_nxn", "wait_barrier", "late_broadcast", "early_reduce",
	"wait_fence", "early_fence", "late_post", "early_wait", "late_complete", "lock_contention"}
var patternTitles = [NumPatterns]string{"Late sender", "Late receiver", "Wait at N x N", "Wait at barrier", "Late broadcast", "Early reduce",
	"Wait at fence", "Early fence (part of wait at fence)", "Late post", "Early wait", "Late complete (part of early wait)", "Lock contention"}

// String is the pattern's name in JSON ("late_sender").
func (p Pattern) String() string {
	if p < NumPatterns {
		return patternNames[p]
	}
	return fmt.Sprintf("pattern#%d", p)
}

// Title is the pattern's name in text ("Late sender").
func (p Pattern) Title() string {
	if p < NumPatterns {
		return patternTitles[p]
	}
	return p.String()
}

// Options tune an analysis.
type Options struct {
	Workers int  // goroutines reading ranks (0: GOMAXPROCS)
	NoClock bool // skip clock correction
	// Memory bounds the message and collective records held at once
	// (0: DefaultMemory): beyond it they go to files in the temporary
	// directory, matched shard by shard.
	Memory int64
	// Progress is called, from any goroutine, with the events read so far
	// (of Result.Events); nil: none.
	Progress func(done uint64)
	// Source resolves a rank's callsite address (nil: callsites stay
	// addresses); called from one goroutine, once per rank and address.
	Source func(r *trace.Rank, pc uint64) (trace.Source, bool)
	// Phase is called as each step ends (its name), for the benchmarks'
	// timings and the tests' measures of memory: in the job, and offline
	// ("read", "match", "group"); nil: none.
	Phase func(name string)
}

func (o Options) phase(name string) {
	if o.Phase != nil {
		o.Phase(name)
	}
}

// Row is the waiting time of one pattern at one function, callsite,
// communicator and rank.
type Row struct {
	Pattern   string  `json:"pattern"`
	Rank      int     `json:"rank"`
	Func      string  `json:"function"`
	Callsite  string  `json:"callsite"`
	Caller    string  `json:"caller,omitempty"`
	Comm      string  `json:"communicator"`
	Seconds   float64 `json:"seconds"`
	Instances int64   `json:"instances"`
}

// PatternTotal is one pattern over the job.
type PatternTotal struct {
	Pattern   string    `json:"pattern"`
	Seconds   float64   `json:"seconds"`
	Instances int64     `json:"instances"`
	ByRank    []float64 `json:"seconds_by_rank"` // index: position in Result.Ranks
}

// Share is a part of the critical path.
type Share struct {
	Func     string  `json:"function"` // "" for computation (outside MPI)
	Callsite string  `json:"callsite,omitempty"`
	Caller   string  `json:"caller,omitempty"`
	Seconds  float64 `json:"seconds"`
}

// CriticalPath is the chain of computation and communication that set the
// run's length.
type CriticalPath struct {
	Seconds     float64   `json:"seconds"`  // from its start to the end of the last rank
	EndRank     int       `json:"end_rank"` // the last rank to finish
	StartRank   int       `json:"start_rank"`
	Jumps       int       `json:"jumps"`           // moves from a rank to a partner
	ByRank      []float64 `json:"seconds_by_rank"` // index: position in Result.Ranks
	Computation float64   `json:"computation_seconds"`
	MPI         float64   `json:"mpi_seconds"`
	Funcs       []Share   `json:"functions"` // by function, most first
	Callsites   []Share   `json:"callsites"` // by function and callsite, most first
}

// Result is an analysis.
type Result struct {
	Dir        string         `json:"dir"`
	Ranks      []int          `json:"ranks"` // world ranks analyzed
	Size       int            `json:"size"`  // ranks of the job
	Events     uint64         `json:"events"`
	Calls      uint64         `json:"calls"`
	Seconds    float64        `json:"seconds"` // first to last traced event
	MPISeconds []float64      `json:"mpi_seconds_by_rank"`
	Messages   uint64         `json:"messages_matched"`
	Unmatched  uint64         `json:"message_ends_unmatched"`
	Colls      uint64         `json:"collectives_matched"`
	RMA        RMAStats       `json:"rma"` // one-sided synchronizations matched (rma.go)
	Patterns   []PatternTotal `json:"patterns"`
	Rows       []Row          `json:"rows"` // most first
	Critical   CriticalPath   `json:"critical_path"`
	Delays     []Delay        `json:"delay_costs"` // most first
	Warnings   []string       `json:"warnings"`
	Missing    []string       `json:"not_analyzed"` // what the trace does not record
}

// NotRecorded lists what the trace lacks for the analysis (docs/analysis.md).
var NotRecorded = []string{
	"nonblocking and persistent collectives: no wait states (their completion time is not matched across ranks)",
	"RMA: windows created before tracing started (no wait states)",
	"MPI-IO: traced as calls only",
	"partitioned communication (MPI_Psend_init): not matched",
}

// DefaultMemory is the default Options.Memory: 1 GiB.
const DefaultMemory = 1 << 30

// Analyze reads the job's trace and finds its wait states and critical
// path. Damaged rank files are skipped (trace.OpenJob) and a damaged block
// ends its rank's analysis there, with a warning naming the file and the
// offset; it fails only when nothing could be read.
func Analyze(job *trace.Job, opt Options) (*Result, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	n := len(job.Ranks)
	idx := map[int]int{}
	for i, r := range job.Ranks {
		idx[r.Header.Rank] = i
	}
	// Progress: each rank's events so far (the walk reports a rank's
	// running count after each block), summed over ranks. After its
	// first block a rank's pass sizes its lists (rankPass.reserve).
	var done atomic.Uint64
	seen := make([]uint64, n)
	passes := make([]*rankPass, n) // each set by the goroutine that walks its rank, before the walk
	progress := func(rank int, ev uint64) {
		i := idx[rank]
		if passes[i] != nil {
			passes[i].reserve(ev, job.Ranks[i].Events)
		}
		d := done.Add(ev - seen[i])
		seen[i] = ev
		if opt.Progress != nil {
			opt.Progress(d)
		}
	}
	w := trace.NewWalker(job, trace.WalkOptions{NoClock: opt.NoClock, Progress: progress, NoSources: true})
	res := &Result{Dir: job.Dir, Warnings: append([]string{}, job.Warnings...), Missing: NotRecorded, Rows: []Row{}}
	if len(job.Ranks) > 0 {
		res.Size = job.Ranks[0].Header.Size
	}
	if w.Warning != "" {
		res.Warnings = append(res.Warnings, w.Warning)
	}
	for _, r := range job.Ranks {
		res.Ranks = append(res.Ranks, r.Header.Rank)
		res.Events += r.Events
	}
	if opt.Memory <= 0 {
		opt.Memory = DefaultMemory
	}
	// At most one record per event. Beyond the memory bound the records
	// are spilled, in shards small enough that the workers' shards being
	// matched (twice their size while sorted) fit in half of it.
	nshard := opt.Workers * 4
	var sp *spill
	need := int64(res.Events) * recBytes
	// The calls are logged for the critical path's shares when the log
	// fits beside the records; else each rank's trace is read again.
	logCalls := need+int64(res.Events)*callLogBytes <= opt.Memory
	if need > opt.Memory {
		nshard = max(nshard, int(min(need*int64(opt.Workers)*4/opt.Memory+1, 1<<16)))
		var err error
		if sp, err = newSpill(nshard); err != nil {
			return nil, err
		}
		defer sp.close()
	}
	// In memory, the records and candidates are in memory of the
	// analysis's own (store.go), unmapped once grouped.
	var st *store
	if sp == nil {
		st = newStore()
		defer st.close()
	}
	// The call log in a store of its own: it outlives the records
	// (pathKeys, after the replay), unmapped once the path's shares are
	// taken.
	var lst *store
	if logCalls {
		lst = newStore()
		defer lst.close()
	}
	damaged := make([]string, n)
	inter := interSides(w.CommList())
	// The one-sided records' share of the bound (rmamem.go): what the
	// records and the call log held in memory leave, else a quarter.
	share := opt.Memory / 4
	if sp == nil {
		share = opt.Memory - need
		if logCalls {
			share -= int64(res.Events) * callLogBytes
		}
	}
	rb := newRMABound(share, 64)
	defer rb.close()
	forEach(n, opt.Workers, func(i int) {
		p := newRankPass(i, job.Ranks[i].Header.Rank, nshard)
		p.sp = sp
		p.st = st
		p.inter = inter
		p.rma.bound = rb
		if logCalls {
			p.log = newCallLogIn(lst, job.Ranks[i].Events)
		}
		passes[i] = p
		if sp != nil {
			defer p.flushAll()
		}
		if err := w.WalkRank(i, p); err != nil {
			var ce *trace.CorruptError
			if errors.As(err, &ce) {
				damaged[i] = fmt.Sprintf("%v: rank %d's events from there on were not analyzed", err, job.Ranks[i].Header.Rank)
			} else {
				damaged[i] = fmt.Sprintf("rank %d: %v", job.Ranks[i].Header.Rank, err)
			}
		}
	})
	opt.phase("read")
	for _, d := range damaged {
		if d != "" {
			res.Warnings = append(res.Warnings, d)
		}
	}
	for _, p := range passes {
		res.Calls += p.ncalls
	}
	if res.Calls == 0 {
		if len(res.Warnings) > 0 {
			return nil, fmt.Errorf("no event could be analyzed: %s", res.Warnings[len(res.Warnings)-1])
		}
		return nil, fmt.Errorf("%s: the trace holds no MPI call", job.Dir)
	}
	// Match messages and collectives, shard by shard in parallel.
	// When the records are spilled, so are the wait candidates: to one
	// file per rank, read back rank by rank.
	// Without a spill each shard's candidates go to lists by rank (in
	// chunks), which each rank then sorts by call: one copy of them.
	outs := make([]candOut, nshard)
	stats := make([]matchStats, nshard)
	comms := w.CommList()
	var csp *spill
	if sp != nil {
		var err error
		if csp, err = newSpill(n); err != nil {
			return nil, err
		}
		defer csp.close()
	}
	// Each worker's shards pair their messages in one table of flows,
	// reused (candOut.tab): not a table a shard. In memory, sized for the
	// shard of the most receives (twice as many slots, matchFlows) and in
	// the store, given back after the matching: room for the sorted
	// copies of the grouping (2026-11-29).
	tabs := make([][]flowSlot, opt.Workers)
	tabSize := 0
	if sp == nil {
		for s := range nshard {
			nr := 0
			for _, p := range passes {
				nr += len(p.recvs[s])
			}
			tabSize = max(tabSize, 2*nr)
		}
	}
	forEachW(nshard, opt.Workers, func(wk, s int) {
		if tabs[wk] == nil && tabSize > 0 {
			tabs[wk] = storeList[flowSlot](st, tabSize)
		}
		outs[s].tab = tabs[wk]
		defer func() { tabs[wk], outs[s].tab = outs[s].tab, nil }()
		if csp == nil {
			outs[s].by = make([][][]cand, n)
			outs[s].st = st
			stats[s] = matchShard(s, passes, idx, comms, sp, &outs[s])
			return
		}
		stats[s] = matchShard(s, passes, idx, comms, sp, &outs[s])
		cs := outs[s].flat
		outs[s].flat = nil
		byRank := map[int32][]byte{}
		for i := range cs {
			byRank[cs[i].idx] = appendCand(byRank[cs[i].idx], &cs[i])
		}
		for i, b := range byRank {
			csp.write(int(i), b)
		}
	})
	if sp != nil && sp.err != nil {
		return nil, sp.err
	}
	for _, t := range tabs {
		storeRelease(st, t)
	}
	tabs = nil
	for _, p := range passes {
		storeRelease(st, p.times) // the candidates hold the times they need: room for the grouping
		p.times = nil
	}
	opt.phase("match")
	var total matchStats
	for _, st := range stats {
		total.add(st)
	}
	res.addStats(total)
	// Each rank's candidates, grouped by call: wait states and jumps.
	// Without a spill, a rank's lists from the shards (in shard order, as
	// one list of them would be) are sorted by call straight from them.
	ws := make([]rankWaits, n)
	// Each worker's room for the sorted copy of the rank of the most
	// candidates, made once: each rank's copy is in it (sortCands), the
	// next rank's too, instead of a new list each (2026-11-29).
	rooms := make([][]cand, opt.Workers)
	most := 0
	if csp == nil {
		for i := range n {
			c := 0
			for s := range outs {
				for _, ch := range outs[s].by[i] {
					c += len(ch)
				}
			}
			most = max(most, c)
		}
	}
	forEachW(n, opt.Workers, func(wk, i int) {
		if csp != nil {
			cs, err := decodeCands(csp.read(i), nil)
			if err != nil {
				csp.fail(err)
			}
			ws[i] = groupWaits(cs)
			return
		}
		var parts [][]cand
		for s := range outs {
			parts = append(parts, outs[s].by[i]...)
			outs[s].by[i] = nil
		}
		ws[i] = newRankWaits()
		ws[i].st = st
		if rooms[wk] == nil && most >= 64 {
			rooms[wk] = storeList[cand](st, most)
		}
		cs := sortCands(st, parts, rooms[wk])
		ws[i].groupSorted(cs)
		ws[i].sortJumps()
		// The chunks and the sorted copy are room for the next ranks'
		// (the copy is a part when there is one and in order already,
		// the worker's room is kept for its next rank).
		if (len(parts) != 1 || unsafe.SliceData(cs) != unsafe.SliceData(parts[0])) && unsafe.SliceData(cs) != unsafe.SliceData(rooms[wk]) {
			storeRelease(st, cs)
		}
		for _, c := range parts {
			storeRelease(st, c)
		}
	})
	outs = nil
	for _, r := range rooms {
		storeRelease(st, r)
	}
	// No list of the store is left: its room, its pages touched, is kept
	// for the waits of the delay analysis (makePart's DWaits, one a jump),
	// the rest of its pages given back (2026-11-29).
	keep := 0
	for i := range ws {
		keep += (len(ws[i].jumps)*int(unsafe.Sizeof(DelayWait{})) + 63) &^ 63
	}
	st.trim(keep)
	opt.phase("group")
	if csp != nil && csp.err != nil {
		return nil, csp.err
	}
	rc, rst := rmaCands(passes, rb, func(s string) { res.Warnings = append(res.Warnings, s) }) // one-sided wait states (rma.go)
	res.RMA = rst
	for i := range ws {
		ws[i].addRMA(rc[i])
	}
	names := newNamer(job, opt.Source, comms)
	parts := make([]rankPart, n)
	for i, p := range passes {
		parts[i] = makePart(p, job.Ranks[i].Events, ws[i], func(pc uint64) (string, string) { return names.site(i, pc) }, names,
			func(x int32) int { return passes[x].rank })
	}
	cp := replay(passes, ws)
	keys := make([][]pathKey, n)
	forEach(n, opt.Workers, func(i int) {
		if l := passes[i].log; l != nil {
			keys[i] = l.pathKeys(cp.segs[i])
			passes[i].log = nil
		} else {
			keys[i] = pathKeysOf(w, i, job.Ranks[i], cp.segs[i])
		}
	})
	lst.close() // no log is left
	for i := range parts {
		parts[i].PathSec = segSeconds(cp.segs[i])
		parts[i].Path = namePath(job.Ranks[i], keys[i], func(pc uint64) (string, string) { return names.site(i, pc) })
	}
	res.assemble(parts, cp.info)
	st.close() // the DWaits' lists
	if w.Unmatched > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d request completions had no matching post (posted before tracing started, or on another thread)", w.Unmatched))
	}
	return res, nil
}

// forEach runs fn(0..n-1) on at most workers goroutines.
func forEach(n, workers int, fn func(i int)) { forEachW(n, workers, func(_, i int) { fn(i) }) }

// forEachW is forEach that tells fn which goroutine runs it (0 to
// workers-1): one call at a time each.
func forEachW(n, workers int, fn func(w, i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < min(n, workers); g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(g, i)
			}
		}()
	}
	wg.Wait()
}

// keyT is what a waiting time is attributed to, besides the pattern and
// rank.
type keyT struct {
	fn   string
	pc   uint64
	comm int // GComm.ID, -1 none
}

// rankWaits is one rank's wait states: time per (pattern, key) and the
// critical path's jumps, sorted by the waiting call's end.
type rankWaits struct {
	time  map[[2]int32]float64 // (pattern, key) with a key of maxDenseKey or more
	count map[[2]int32]int64
	// dense holds the others (the usual case), at key*NumPatterns +
	// pattern: no map update per wait. A (pattern, key) is in one of
	// the two only (add), its additions in the same order.
	dense []waitSum
	jumps []jump
	st    *store // where groupSorted makes jumps (offline, 2026-11-29; nil: the Go heap)
}

// waitSum is the wait states of one (pattern, key): their time and count
// (a count of 0: none).
type waitSum struct {
	t float64
	n int64
}

// maxDenseKey bounds the keys of rankWaits.dense (48 bytes a key).
const maxDenseKey = 1 << 16

// add adds a wait state of t ns to (pattern p, key).
func (rw *rankWaits) add(p Pattern, key int32, t float64) {
	if uint32(key) < maxDenseKey && p < NumPatterns {
		i := int(key)*int(NumPatterns) + int(p)
		if i >= len(rw.dense) {
			rw.dense = append(rw.dense, make([]waitSum, i+1-len(rw.dense))...)
		}
		rw.dense[i].t += t
		rw.dense[i].n++
		return
	}
	k := [2]int32{int32(p), key}
	rw.time[k] += t
	rw.count[k]++
}

// each calls f with every (pattern, key) that has wait states, in no
// particular order.
func (rw *rankWaits) each(f func(k [2]int32, t float64, n int64)) {
	for i, w := range rw.dense {
		if w.n > 0 {
			f([2]int32{int32(i % int(NumPatterns)), int32(i / int(NumPatterns))}, w.t, w.n)
		}
	}
	for k, t := range rw.time {
		f(k, t, rw.count[k])
	}
}

type jump struct {
	t1      float64 // end of the waiting call
	t0      float64 // its start
	ready   float64 // when the partner entered (the path continues there)
	wait    float64 // the call's wait state (ns), 0 none
	partner int32   // index in Job.Ranks (in the job: world rank)
	pkey    int32   // the partner's call's key, on the partner's rank
}

// groupWaits turns a rank's candidates into wait states: per call, the
// latest partner decides.
func groupWaits(cs []cand) rankWaits {
	rw := newRankWaits()
	rw.group(cs)
	rw.sortJumps()
	return rw
}

func newRankWaits() rankWaits {
	return rankWaits{time: map[[2]int32]float64{}, count: map[[2]int32]int64{}}
}

// group adds the wait states of the calls whose candidates are cs (all of
// each call's candidates; the calls after those of earlier groups, in the
// job's bounded memory).
func (rw *rankWaits) group(cs []cand) {
	rw.groupSorted(sortByKey(cs, func(c *cand) uint64 { return uint64(c.call) }))
}

// groupSorted is group of candidates in call order.
func (rw *rankWaits) groupSorted(cs []cand) {
	calls := 0 // at most one jump a call: room for that many, not one a candidate
	for i := range cs {
		if i == 0 || cs[i].call != cs[i-1].call {
			calls++
		}
	}
	if len(rw.jumps) == 0 && rw.st != nil {
		rw.jumps = storeList[jump](rw.st, calls)[:0]
	} else {
		rw.jumps = slices.Grow(rw.jumps, calls)
	}
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].call == cs[i].call {
			j++
		}
		c0 := &cs[i]
		wr, wp, wk := c0.t0, noPattern, c0.key
		jr, jp, jk := c0.t0, int32(-1), int32(-1)
		// Ties go to the lower pattern and key, partner and its key: the
		// result does not depend on the candidates' order (shards,
		// spill files and ranks deliver them in different orders).
		for x := i; x < j; x++ { // by pointer: no copy of the 56-byte candidates
			c := &cs[x]
			if c.pattern != noPattern && (c.waitReady > wr || c.waitReady == wr && wp != noPattern &&
				(c.pattern < wp || c.pattern == wp && c.key < wk)) {
				wr, wp, wk = c.waitReady, c.pattern, c.key
			}
			if c.jumpReady > jr || c.jumpReady == jr && jp >= 0 && (c.partner < jp || c.partner == jp && c.pkey < jk) {
				jr, jp, jk = c.jumpReady, c.partner, c.pkey
			}
		}
		var wt float64
		if wp != noPattern {
			if t := min(wr, c0.t1) - c0.t0; t > 0 {
				rw.add(wp, wk, t)
				wt = t
			}
		}
		if jp >= 0 {
			rw.jumps = append(rw.jumps, jump{t1: c0.t1, t0: c0.t0, ready: min(jr, c0.t1), wait: wt, partner: jp, pkey: jk})
		}
		i = j
	}
}

// sortJumps puts the jumps in order of the waiting calls' ends.
func (rw *rankWaits) sortJumps() {
	by := func(a, b jump) int {
		switch {
		case a.t1 < b.t1:
			return -1
		case a.t1 > b.t1:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(rw.jumps, by) { // calls end in order but on several threads
		slices.SortStableFunc(rw.jumps, by)
	}
}

// namer resolves callsites and communicators to names, once each.
type namer struct {
	job   *trace.Job
	src   func(r *trace.Rank, pc uint64) (trace.Source, bool)
	sites map[[2]uint64][2]string
	comms map[int]string
}

func newNamer(job *trace.Job, src func(r *trace.Rank, pc uint64) (trace.Source, bool), comms []*trace.GComm) *namer {
	n := &namer{job: job, src: src, sites: map[[2]uint64][2]string{}, comms: map[int]string{}}
	for _, g := range comms {
		n.comms[g.ID] = g.Key
		if g.Key == "world" {
			n.comms[g.ID] = "MPI_COMM_WORLD"
		}
	}
	return n
}

func (n *namer) site(i int, pc uint64) (string, string) {
	k := [2]uint64{uint64(i), pc}
	if s, ok := n.sites[k]; ok {
		return s[0], s[1]
	}
	s := [2]string{fmt.Sprintf("0x%x", pc), ""}
	if n.src != nil && pc != 0 {
		if x, ok := n.src(n.job.Ranks[i], pc); ok {
			s = [2]string{x.String(), x.Func}
		}
	}
	n.sites[k] = s
	return s[0], s[1]
}

func (n *namer) comm(id int) string {
	if id < 0 {
		return ""
	}
	return n.comms[id]
}
