package analyze

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// Comm is the job's communication for the analysis in the job
// (MPISCOPE_ANALYZE=1): the runtime's private duplicate of
// MPI_COMM_WORLD (internal/interpose), or a test's. Every rank calls
// InJob, and so every operation, in the same order.
type Comm interface {
	Rank() int
	Size() int
	Send(dest int, data []byte) error
	Recv(src int) ([]byte, error)
	// Alltoallv sends out[d] to each rank d and returns what each rank
	// sent to this one.
	Alltoallv(out [][]byte) ([][]byte, error)
	// SendToken and RecvToken carry the critical path's backward replay
	// when pointer doubling cannot be used (tokenReplay): three words to
	// one rank, and the next such message from any rank.
	SendToken(dest int, m [3]uint64) error
	RecvToken() ([3]uint64, error)
	// SendAsync, RecvAny, PollAny and WaitSends carry the delay
	// analysis: a message to one rank that does not wait for its receipt
	// (data may be reused at once), the next such message from any rank,
	// the same without waiting (ok false: none has arrived), and the end
	// of this rank's sends.
	SendAsync(dest int, data []byte) error
	RecvAny() (int, []byte, error)
	PollAny() (src int, data []byte, ok bool, err error)
	WaitSends() error
}

// InJob is the analysis inside the job, each rank on its own trace file
// (r; nil when the rank has none), the ranks as the parallel engine:
//
//  1. the ranks agree on what the offline analysis takes from all files:
//     the communicators' numbering, each host's clock conversion, the
//     time origin (a reduction up a binomial tree and a broadcast);
//  2. each rank reads its own trace (the same rankPass as offline); its
//     message ends go to their receiver's rank, a collective's parts to
//     the rank that owns its instance (one MPI_Alltoallv): each rank is
//     one shard of the offline matching, and matches it with the same
//     code; the wait candidates go back to the ranks of their calls (a
//     second MPI_Alltoallv), which group them into wait states;
//  3. the critical path: the ranks' jumps gathered at the rank of its
//     end up a binomial tree, which replays it as offline and sends each
//     rank its segments down the tree (since 2026-11-29; one message each
//     way per rank), or, when they do not fit its share of the
//     bound, by pointer doubling over the ranks' jumps, in about log2 of
//     the path's jumps exchanges (pathjob.go), the token passed backwards
//     one jump at a time only where ties require it;
//  4. the delay costs flow between the ranks of the waits (delayjob.go);
//     each rank's part (its wait states, its share of the path, its delay
//     costs) is gathered up the binomial tree to rank 0,
//     which assembles the result as offline does, from the same parts in
//     the same order: the two agree exactly.
//
// It returns the result on rank 0 and nil elsewhere. dir names the job in
// the result.
func InJob(c Comm, dir string, r *trace.Rank, opt Options) (*Result, error) {
	return analyzeInJob(c, dir, r, nil, opt)
}

// InJobFile is InJob on the rank's trace file at path ("": the rank has
// none); a file that cannot be read leaves the rank out, with a warning
// in the result.
func InJobFile(c Comm, dir, path string, opt Options) (*Result, error) {
	if path == "" {
		return analyzeInJob(c, dir, nil, nil, opt)
	}
	r, err := trace.OpenRank(path)
	if err != nil {
		return analyzeInJob(c, dir, nil, []string{fmt.Sprintf("%v (rank %d left out)", err, c.Rank())}, opt)
	}
	return analyzeInJob(c, dir, r, nil, opt)
}

func analyzeInJob(c Comm, dir string, r *trace.Rank, warnings []string, opt Options) (*Result, error) {
	me, size := c.Rank(), c.Size()
	// 1. What the ranks must agree on.
	lm := jobMeta{Hosts: map[string]hostClock{}}
	var hostKey string
	if r != nil {
		hostKey = r.Header.Host + "\x00" + r.Header.Timer
		if r.Header.Host == "" {
			hostKey = fmt.Sprintf("\x01%d", me)
		}
		lm.Hosts[hostKey] = hostClock{Score: clockScore(r), Rank: me, Calib: r.Calib, Syncs: r.Syncs}
		lm.RankHost = map[int]string{me: hostKey}
		rounds, _ := jobPlan(r.Events, opt.Memory)
		lm.Starts = map[int]rankStart{me: {Tick0: r.Calib.Tick0, Rounds: rounds}}
		ids := make([]int, 0, len(r.Comms))
		for id := range r.Comms {
			ids = append(ids, id)
		}
		sort.Ints(ids)
		for _, id := range ids {
			d := r.Comms[id]
			if !slices.Contains(lm.Keys, d.Key) {
				lm.Keys = append(lm.Keys, d.Key)
			}
			if d.Inter {
				if lm.Inter == nil {
					lm.Inter = map[string][]int{}
				}
				lm.Inter[d.Key] = d.World
			}
		}
	}
	var meta jobMeta
	if err := allReduce(c, &lm, &meta, mergeMeta); err != nil {
		return nil, err
	}
	// World first, then in order of first definition (trace.NewWalker).
	sort.SliceStable(meta.Keys, func(a, b int) bool { return meta.Keys[a] == "world" && meta.Keys[b] != "world" })
	var w *trace.Walker
	// A rank's own work never stops it from taking part in the
	// exchanges (the others would wait for it forever): what fails here
	// is a warning, and the rank goes on with what it has.
	safe := func(what string, f func()) {
		guarded(me, what, func(s string) { warnings = append(warnings, s) }, f)
	}
	// The time origin (the earliest start: each rank's first tick by its
	// host's clock) and the rounds of the exchange (the most any rank
	// needs to keep its records within the bound), from what every rank
	// sent along with the metadata: no reduction of their own.
	origin, rounds := math.Inf(1), 1
	clocks := map[string]*trace.Clock{}
	hostClockOf := func(h string) *trace.Clock {
		if clk, ok := clocks[h]; ok {
			return clk
		}
		hc := meta.Hosts[h]
		clk := trace.NewClock(&trace.Rank{Calib: hc.Calib, Syncs: hc.Syncs})
		clk.Off = opt.NoClock
		clocks[h] = clk
		return clk
	}
	for rk, st := range meta.Starts {
		origin = min(origin, hostClockOf(meta.RankHost[rk]).Ns(st.Tick0))
		rounds = max(rounds, st.Rounds)
	}
	if r != nil {
		job := &trace.Job{Dir: dir, Ranks: []*trace.Rank{r}}
		w = trace.NewWalker(job, trace.WalkOptions{NoClock: true, NoSources: true})
		for k, g := range w.Comms {
			g.ID = slices.Index(meta.Keys, k)
		}
		// A clock of its own: the clock repair below may shift it.
		clk := trace.NewClock(&trace.Rank{Calib: meta.Hosts[hostKey].Calib, Syncs: meta.Hosts[hostKey].Syncs})
		clk.Off = opt.NoClock
		w.Clocks[0] = clk
		if r.Warning != "" {
			warnings = append(warnings, r.Warning)
		}
		if r.Dropped > 0 {
			warnings = append(warnings, fmt.Sprintf("rank %d: %d events were dropped (writer behind; see MPISCOPE_TRACE_BUFFER)", me, r.Dropped))
		}
	}
	if !opt.NoClock && len(meta.Hosts) > 1 {
		if err := repairInJob(c, w, r, meta); err != nil {
			return nil, err
		}
		// The repair shifted the clocks: the origin is a reduction.
		origin = math.Inf(1)
		if r != nil {
			origin = w.Clocks[0].Ns(r.Calib.Tick0)
		}
		if err := allReduce(c, &origin, &origin, func(a, b *float64) { *a = min(*a, *b) }); err != nil {
			return nil, err
		}
	}
	if math.IsInf(origin, 0) {
		origin = 0
	}
	logCalls := false
	if r != nil {
		_, logCalls = jobPlan(r.Events, opt.Memory)
	}
	// 2. This rank's records, matched at their owners.
	p := newRankPass(me, me, size)
	p.byOwner = true
	p.inter = interInJob(meta)
	p.rma.bound = newRMABound(rmaJobShare(opt.memory()), 1) // the one-sided records' share (rmamem.go)
	if logCalls {
		p.log = newCallLog()
	}
	var sp *jobSpill
	if rounds > 1 {
		var err error
		if sp, err = newJobSpill(rounds); err != nil {
			warnings = append(warnings, fmt.Sprintf("rank %d: %v: its records held in memory", me, err))
			sp = nil
		} else {
			defer sp.close()
		}
	}
	var unmatchedReqs int
	if w != nil {
		w.Origin = origin
		var v trace.Visitor = &sizingPass{rankPass: p, at: sizingCalls(r.Events), events: r.Events}
		if sp != nil {
			batch := int(min(max(opt.memory()/(8*recBytes), 64), 1<<16))
			v = &boundedPass{rankPass: p, sp: sp, batch: batch}
		}
		var err error
		safe("reading its trace", func() { err = w.WalkRank(0, v) })
		if sp != nil {
			sp.put(p)
		}
		if err != nil {
			var ce *trace.CorruptError
			if errors.As(err, &ce) {
				warnings = append(warnings, fmt.Sprintf("%v: rank %d's events from there on were not analyzed", err, me))
			} else {
				warnings = append(warnings, fmt.Sprintf("rank %d: %v", me, err))
			}
		}
		unmatchedReqs = w.Unmatched
	}
	opt.phase("read")
	// 3. The critical path starts at the last rank to finish (the latest
	// end, then the lowest rank); the one-sided records' most on one rank
	// and sum say whether and how rmaInJob exchanges them. Every rank
	// sends its own along with its records (the first round's exchange)
	// and works them out from all: no reduction of their own.
	mine := lastEnd{Rank: -1}
	if p.ncalls > 0 {
		mine = lastEnd{T: p.last, Rank: int64(me)}
	}
	n := p.rma.records()
	mine.RMA = [2]uint64{n, n}
	rw, st, ends, err := exchange(c, p, sp, rounds, mine.append(nil), func(s string) { warnings = append(warnings, s) })
	if err != nil {
		return nil, err
	}
	opt.phase("match")
	end := lastEnd{Rank: -1}
	for s, b := range ends {
		var x lastEnd
		if err := x.decode(b); err != nil {
			return nil, fmt.Errorf("rank %d's end: %w", s, err)
		}
		end.merge(&x)
	}
	var rst RMAStats
	if end.RMA[1] > 0 { // the one-sided wait states: two more exchanges a round
		if rst, err = rmaInJob(c, p, &rw, end.RMA, opt, func(s string) { warnings = append(warnings, s) }); err != nil {
			return nil, err
		}
	}
	info := pathInfo{Found: end.Rank >= 0, EndRank: int(end.Rank)}
	var segs [][2]float64
	var pst pathStats
	if info.Found {
		// At the end rank when the jumps fit its share of the bound, else
		// by pointer doubling (pathjob.go).
		var done bool
		if segs, done, err = gatherReplay(c, rw.jumps, p, int(end.Rank), opt.memory(), &info, &pst); err == nil && !done {
			segs, err = doublingReplay(c, rw.jumps, p, int(end.Rank), &info, &pst)
		}
		if err != nil {
			return nil, err
		}
	}
	opt.phase("path[" + pst.String() + "]")
	// This rank's part, gathered at rank 0 (5).
	var g gathered
	partPhase := "part"
	if r != nil {
		names := newNamer(w.Job, opt.Source, w.CommList())
		site := func(pc uint64) (string, string) { return names.site(0, pc) }
		part := rankPart{Rank: me, Events: r.Events}
		safe("collecting its results", func() {
			part = makePart(p, r.Events, rw, site, names, func(x int32) int { return int(x) })
			part.PathSec = segSeconds(segs)
			// The path's calls from the walk's log; without it (beyond
			// the bound) the trace is read a second time.
			var keys []pathKey
			if p.log != nil {
				keys = p.log.pathKeys(segs)
				p.log = nil
			} else {
				keys = pathKeysOf(w, 0, r, segs)
				partPhase = "part[trace read again]"
			}
			part.Path = namePath(r, keys, site)
		})
		g.Parts = []rankPart{part}
		g.Size = r.Header.Size
	}
	opt.phase(partPhase)
	// 4. The delay costs, each rank charging its own calls (delayjob.go):
	// only the costs go up the tree, not the waits.
	var dw []DelayWait
	var keys []KeyName
	if len(g.Parts) == 1 {
		dw, keys = g.Parts[0].DWaits, g.Parts[0].Keys
		if keys == nil {
			keys = []KeyName{}
		}
		g.Parts[0].DWaits, g.Parts[0].Keys = nil, nil
	}
	var dst delayStats
	ds, err := delaysInJob(c, dw, keys, &dst)
	if err != nil {
		return nil, err
	}
	if len(g.Parts) == 1 {
		g.Parts[0].Delays = ds
	}
	opt.phase("delays[" + dst.String() + "]")
	g.Stats = [4]uint64{st.messages, st.unmatched, st.colls, st.mismatch}
	g.UnmatchedReqs = unmatchedReqs
	g.RMA = rst
	g.Warnings = warnings
	var all gathered
	if err := reduceTo0(c, &g, &all, func(a, b *gathered) {
		a.Parts = append(a.Parts, b.Parts...)
		for i := range a.Stats {
			a.Stats[i] += b.Stats[i]
		}
		a.UnmatchedReqs += b.UnmatchedReqs
		a.RMA.add(b.RMA)
		a.Warnings = append(a.Warnings, b.Warnings...)
		a.Size = max(a.Size, b.Size)
	}); err != nil || me != 0 {
		return nil, err
	}
	res := &Result{Dir: dir, Warnings: all.Warnings, Missing: NotRecorded, Rows: []Row{}, Size: all.Size}
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	slices.SortFunc(all.Parts, func(a, b rankPart) int { return a.Rank - b.Rank })
	for _, pt := range all.Parts {
		res.Ranks = append(res.Ranks, pt.Rank)
		res.Events += pt.Events
		res.Calls += pt.Calls
	}
	if res.Calls == 0 {
		return nil, fmt.Errorf("%s: the trace holds no MPI call", dir)
	}
	res.addStats(matchStats{all.Stats[0], all.Stats[1], all.Stats[2], all.Stats[3]})
	res.RMA = all.RMA
	res.assemble(all.Parts, info)
	for _, pt := range all.Parts {
		res.Delays = append(res.Delays, pt.Delays...)
	}
	sortDelays(res.Delays)
	if all.UnmatchedReqs > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d request completions had no matching post (posted before tracing started, or on another thread)", all.UnmatchedReqs))
	}
	return res, nil
}

// lastEnd is a rank's end of its last call and its one-sided records
// (its most on one rank, its sum); merged, the job's.
type lastEnd struct {
	T    float64
	Rank int64 // -1: no call
	RMA  [2]uint64
}

// lastEndLen is lastEnd's size in the records' exchange.
const lastEndLen = 8 * 4

func (e *lastEnd) append(b []byte) []byte {
	le := binary.LittleEndian
	b = le.AppendUint64(b, math.Float64bits(e.T))
	b = le.AppendUint64(b, uint64(e.Rank))
	b = le.AppendUint64(b, e.RMA[0])
	return le.AppendUint64(b, e.RMA[1])
}

func (e *lastEnd) decode(b []byte) error {
	if len(b) != lastEndLen {
		return fmt.Errorf("%d bytes, want %d", len(b), lastEndLen)
	}
	le := binary.LittleEndian
	*e = lastEnd{T: math.Float64frombits(le.Uint64(b)), Rank: int64(le.Uint64(b[8:])), RMA: [2]uint64{le.Uint64(b[16:]), le.Uint64(b[24:])}}
	return nil
}

// merge adds b's end to e's: the later end, at equal times the lower
// rank; the most one-sided records of one rank, and their sum.
func (e *lastEnd) merge(b *lastEnd) {
	rma := [2]uint64{max(e.RMA[0], b.RMA[0]), e.RMA[1] + b.RMA[1]}
	if b.Rank >= 0 && (e.Rank < 0 || b.T > e.T || b.T == e.T && b.Rank < e.Rank) {
		*e = *b
	}
	e.RMA = rma
}

// gathered is what the ranks send up the tree at the end.
type gathered struct {
	Parts         []rankPart
	Stats         [4]uint64 // matchStats
	UnmatchedReqs int
	RMA           RMAStats // one-sided synchronizations matched (rma.go)
	Warnings      []string
	Size          int
}

// jobMeta is what the ranks agree on before reading their traces.
type jobMeta struct {
	Hosts map[string]hostClock // host and timer -> the clock its ranks use
	Keys  []string             // communicator keys in order of first definition, ranks in order
	// RankHost is each rank's host key.
	RankHost map[int]string
	// Starts is each rank's first tick and the rounds of the exchange
	// it needs (jobPlan): every rank works out the time origin and the
	// rounds from them.
	Starts map[int]rankStart
	// Inter is each intercommunicator's remote group (its key's
	// definition), to pair the two sides as trace.NewWalker does.
	Inter map[string][]int
}

// MarshalBinary encodes the metadata for the reduction and broadcast
// that agree on it (allReduce): every map's entries, in order of their
// keys, as varints, strings (a length, then the bytes) and 8-byte numbers.
// Since 2026-11-29; before, gob, whose every message made its decoder
// compile the types of the maps and the clock samples: 1.7 % of the
// ranks' CPU in the analysis on goroutines at 32 ranks and 25,000 events
// per rank (BenchmarkInJob), more for shorter runs.
func (m *jobMeta) MarshalBinary() ([]byte, error) {
	var b []byte
	le := binary.LittleEndian
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	hosts := slices.Sorted(maps.Keys(m.Hosts))
	b = binary.AppendUvarint(b, uint64(len(hosts)))
	for _, k := range hosts {
		h := m.Hosts[k]
		str(k)
		b = le.AppendUint64(b, h.Score)
		b = binary.AppendVarint(b, int64(h.Rank))
		b = le.AppendUint64(b, h.Calib.Tick0)
		b = le.AppendUint64(b, h.Calib.Ns0)
		b = le.AppendUint64(b, math.Float64bits(h.Calib.NsPerTick))
		b = binary.AppendUvarint(b, uint64(len(h.Syncs)))
		for _, y := range h.Syncs {
			b = le.AppendUint64(b, y.LocalNs)
			b = le.AppendUint64(b, uint64(y.OffsetNs))
			b = le.AppendUint64(b, y.RTTNs)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.Keys)))
	for _, k := range m.Keys {
		str(k)
	}
	ranks := slices.Sorted(maps.Keys(m.RankHost))
	b = binary.AppendUvarint(b, uint64(len(ranks)))
	for _, r := range ranks {
		b = binary.AppendVarint(b, int64(r))
		str(m.RankHost[r])
	}
	ranks = slices.Sorted(maps.Keys(m.Starts))
	b = binary.AppendUvarint(b, uint64(len(ranks)))
	for _, r := range ranks {
		st := m.Starts[r]
		b = binary.AppendVarint(b, int64(r))
		b = le.AppendUint64(b, st.Tick0)
		b = binary.AppendVarint(b, int64(st.Rounds))
	}
	inter := slices.Sorted(maps.Keys(m.Inter))
	b = binary.AppendUvarint(b, uint64(len(inter)))
	for _, k := range inter {
		str(k)
		b = binary.AppendUvarint(b, uint64(len(m.Inter[k])))
		for _, r := range m.Inter[k] {
			b = binary.AppendVarint(b, int64(r))
		}
	}
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's bytes into m (its maps made
// anew; Hosts always, the others when they have entries, as gob left
// them). Bad bytes are an error naming the byte, never a panic.
func (m *jobMeta) UnmarshalBinary(b []byte) error {
	d := metaDec{b: b}
	*m = jobMeta{Hosts: map[string]hostClock{}}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		k := d.str()
		h := hostClock{Score: d.u64(), Rank: d.int(), Calib: trace.Calib{Tick0: d.u64(), Ns0: d.u64(), NsPerTick: math.Float64frombits(d.u64())}}
		if ns := d.count(); ns > 0 && d.err == nil {
			h.Syncs = make([]trace.Sync, ns)
			for i := range h.Syncs {
				h.Syncs[i] = trace.Sync{LocalNs: d.u64(), OffsetNs: int64(d.u64()), RTTNs: d.u64()}
			}
		}
		m.Hosts[k] = h
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		m.Keys = append(m.Keys, d.str())
	}
	if n := d.count(); n > 0 && d.err == nil {
		m.RankHost = make(map[int]string, n)
		for ; n > 0 && d.err == nil; n-- {
			r := d.int()
			m.RankHost[r] = d.str()
		}
	}
	if n := d.count(); n > 0 && d.err == nil {
		m.Starts = make(map[int]rankStart, n)
		for ; n > 0 && d.err == nil; n-- {
			r := d.int()
			m.Starts[r] = rankStart{Tick0: d.u64(), Rounds: d.int()}
		}
	}
	if n := d.count(); n > 0 && d.err == nil {
		m.Inter = make(map[string][]int, n)
		for ; n > 0 && d.err == nil; n-- {
			k := d.str()
			var wd []int
			for nr := d.count(); nr > 0 && d.err == nil; nr-- {
				wd = append(wd, d.int())
			}
			m.Inter[k] = wd
		}
	}
	if d.err == nil && d.off != len(b) {
		d.fail("bytes after the end")
	}
	return d.err
}

// metaDec reads jobMeta's encoding; the first fault stops it (every read
// after it returns zero).
type metaDec struct {
	b   []byte
	off int
	err error
}

func (d *metaDec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("the job's metadata: %s at byte %d of %d", what, d.off, len(d.b))
	}
}

func (d *metaDec) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("a bad number")
		return 0
	}
	d.off += n
	return x
}

func (d *metaDec) int() int {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b[d.off:])
	if n <= 0 || x != int64(int(x)) {
		d.fail("a bad number")
		return 0
	}
	d.off += n
	return int(x)
}

// count is a number of entries to follow, each of at least one byte.
func (d *metaDec) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.off) {
		d.fail(fmt.Sprintf("%d entries in %d bytes", n, len(d.b)-d.off))
		return 0
	}
	return int(n)
}

func (d *metaDec) u64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail("cut short")
		return 0
	}
	x := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return x
}

func (d *metaDec) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[d.off : d.off+n])
	d.off += n
	return s
}

// rankStart is what jobMeta holds of each rank with a trace.
type rankStart struct {
	Tick0  uint64
	Rounds int
}

// hostClock is a rank whose clock samples convert a host's ticks
// (trace.hostClocks' choice: rank 0's, else the smallest round trips,
// else the lowest rank).
type hostClock struct {
	Score uint64
	Rank  int
	Calib trace.Calib
	Syncs []trace.Sync
}

func clockScore(r *trace.Rank) uint64 {
	if r.Header.Rank == 0 {
		return 0
	}
	if len(r.Syncs) == 0 {
		return math.MaxUint64
	}
	var s uint64 = 1
	for _, x := range r.Syncs {
		s += x.RTTNs
	}
	return s
}

// mergeMeta adds the metadata of higher ranks (b) to a's.
func mergeMeta(a, b *jobMeta) {
	for k, h := range b.Hosts {
		if o, ok := a.Hosts[k]; !ok || h.Score < o.Score || h.Score == o.Score && h.Rank < o.Rank {
			a.Hosts[k] = h
		}
	}
	if a.RankHost == nil {
		a.RankHost = map[int]string{}
	}
	for k, v := range b.RankHost {
		a.RankHost[k] = v
	}
	if a.Starts == nil {
		a.Starts = map[int]rankStart{}
	}
	for k, v := range b.Starts {
		a.Starts[k] = v
	}
	for _, k := range b.Keys {
		if !slices.Contains(a.Keys, k) {
			a.Keys = append(a.Keys, k)
		}
	}
	for k, v := range b.Inter {
		if _, ok := a.Inter[k]; !ok {
			if a.Inter == nil {
				a.Inter = map[string][]int{}
			}
			a.Inter[k] = v
		}
	}
}

// interInJob is interSides in the job, where this rank's walker knows
// only its own communicators: the job's intercommunicators, numbered as
// the keys are, are paired as trace.NewWalker pairs them.
func interInJob(meta jobMeta) map[int]interSide {
	var comms []*trace.GComm
	for i, k := range meta.Keys {
		if wd, ok := meta.Inter[k]; ok {
			comms = append(comms, &trace.GComm{ID: i, Key: k, World: wd, Inter: true})
		}
	}
	trace.PairInter(comms)
	return interSides(comms)
}

// tokenReplay is the backward replay of the critical path in the job: the
// rank holding the token walks its jumps back from the token's time and
// passes it to the partner of the wait it reached; the rank that reaches
// its first call ends the path and says so to all (a binomial tree rooted
// there). It returns this rank's segments of the path, in time order. A
// rank that cannot pass the token on (a partner that is no rank) says so
// to all down the same tree (since 2026-11-29; before, the others waited
// for the token forever), and every rank returns the error.
func tokenReplay(c Comm, jumps []jump, p *rankPass, have bool, info *pathInfo) ([][2]float64, error) {
	me, size := c.Rank(), c.Size()
	cursor := len(jumps)
	var segs [][2]float64
	t, n := p.last, 0
	const token, done, fail = 1, 2, 3
	noRank := func(at int, partner int64, n uint64) error {
		return fmt.Errorf("critical path: the path's jump %d from its end (rank %d's) has partner %d, no rank", n, at, partner)
	}
	for {
		if have {
			k, seg, ok := stepBack(jumps, &cursor, p.first, t)
			if seg[1] > seg[0] {
				segs = append(segs, seg)
			}
			if !ok {
				info.StartRank, info.Jumps = me, n
				if err := treeTokens(c, me, [3]uint64{done | uint64(me)<<8, uint64(me), uint64(n)}); err != nil {
					return nil, err
				}
				break
			}
			j := jumps[k]
			n++
			t = j.ready
			if int(j.partner) == me {
				continue
			}
			if int(j.partner) < 0 || int(j.partner) >= size {
				m := [3]uint64{fail | uint64(me)<<8, uint64(j.partner), uint64(n)}
				treeTokens(c, me, m)
				return nil, noRank(me, int64(j.partner), m[2])
			}
			if err := c.SendToken(int(j.partner), [3]uint64{token, math.Float64bits(t), uint64(n)}); err != nil {
				return nil, err
			}
			have = false
			continue
		}
		m, err := c.RecvToken()
		if err != nil {
			return nil, err
		}
		root := m[0] >> 8
		switch kind := m[0] & 0xff; {
		case kind == token:
			have, t, n = true, math.Float64frombits(m[1]), int(m[2])
			continue
		case root >= uint64(size) || kind != done && kind != fail:
			return nil, fmt.Errorf("critical path: a token of kind %d from rank %d, of %d", kind, root, size)
		case kind == fail:
			if err := treeTokens(c, int(root), m); err != nil {
				return nil, err
			}
			return nil, &jobError{rank: int(root), msg: noRank(int(root), int64(m[1]), m[2]).Error()}
		}
		info.StartRank, info.Jumps = int(m[1]), int(m[2])
		if err := treeTokens(c, int(root), m); err != nil {
			return nil, err
		}
		break
	}
	slices.Reverse(segs)
	return segs, nil
}

// guarded runs f, a step of rank me's own work: a panic in it becomes
// warn's message that the rank's results are incomplete, so that the rank
// goes on taking part in the exchanges, which the others wait for.
func guarded(me int, what string, warn func(string), f func()) {
	defer func() {
		if e := recover(); e != nil {
			warn(fmt.Sprintf("rank %d: the analysis failed in %s (%v): its results are incomplete", me, what, e))
		}
	}()
	f()
}

func encodeGob(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

// encodeVal encodes what reduceTo0 and allReduce send: a value of fixed
// size (numbers, booleans and arrays of them, binary.Size) as its bytes,
// little-endian; anything else by gob, whose every message carries its
// types and makes its decoder compile them (a fixed cost per message:
// 2026-11-28, about a tenth of the analysis' CPU per rank at 2,500
// events per rank, before the small agreements went as bytes).
func encodeVal[T any](v *T) ([]byte, error) {
	if m, ok := any(v).(encoding.BinaryMarshaler); ok { // jobMeta (2026-11-29)
		return m.MarshalBinary()
	}
	if binary.Size(v) >= 0 {
		return binary.Append(nil, binary.LittleEndian, v)
	}
	return encodeGob(v)
}

// decodeVal decodes encodeVal's bytes into v.
func decodeVal[T any](b []byte, v *T) error {
	if m, ok := any(v).(encoding.BinaryUnmarshaler); ok {
		return m.UnmarshalBinary(b)
	}
	if n := binary.Size(v); n >= 0 {
		if len(b) != n {
			return fmt.Errorf("%d bytes, want %d", len(b), n)
		}
		_, err := binary.Decode(b, binary.LittleEndian, v)
		return err
	}
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// candLen is a wait candidate's size in the exchange.
const candLen = 4*5 + 1 + 8*4

func appendCand(b []byte, c *cand) []byte {
	le := binary.LittleEndian
	b = le.AppendUint32(b, uint32(c.idx))
	b = le.AppendUint32(b, uint32(c.key))
	b = le.AppendUint32(b, c.call)
	b = append(b, byte(c.pattern))
	b = le.AppendUint32(b, uint32(c.partner))
	b = le.AppendUint32(b, uint32(c.pkey))
	for _, f := range [4]float64{c.t0, c.t1, c.waitReady, c.jumpReady} {
		b = le.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

func decodeCands(b []byte, out []cand) ([]cand, error) {
	if len(b)%candLen != 0 {
		return out, fmt.Errorf("%d bytes: not whole records", len(b))
	}
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	for ; len(b) > 0; b = b[candLen:] {
		out = append(out, cand{idx: int32(le.Uint32(b)), key: int32(le.Uint32(b[4:])), call: le.Uint32(b[8:]), pattern: Pattern(b[12]),
			partner: int32(le.Uint32(b[13:])), pkey: int32(le.Uint32(b[17:])), t0: f(b[21:]), t1: f(b[29:]), waitReady: f(b[37:]), jumpReady: f(b[45:])})
	}
	return out, nil
}
