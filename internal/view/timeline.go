package view

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// The timeline. Its calls are read from the trace on demand: when the
// view starts it indexes each rank file's events blocks by time
// (trace.Rank.Index: block heads and first events, no decompression), and
// each request decodes only the blocks that hold its window, in parallel
// (decoded blocks are cached up to cacheCalls calls, and each block keeps a
// summary: per slice of its time, the time in MPI and the function that
// took most of it). A request names a time window, a range of ranks and
// the width in pixels, and gets either the calls and messages in it (when
// there are at most detailCalls) or, per lane and pixel column, the share
// of time in MPI and the function that took most of it, from the blocks'
// summaries where a slice is narrower than a column: what the server reads
// and the browser draws are bounded by the request, whatever the size of
// the trace. Messages are paired from per-block prefix counts made by a
// background pass over each rank's blocks (timeline_msgs.go), so a window
// anywhere in the run has its messages once that pass has read its blocks.

// cacheCalls bounds the decoded blocks kept (variables for tests).
var (
	cacheCalls = 8_000_000
	syncMsgs   = 1_000_000 // a trace of at most so many events has its messages indexed before the first answer
	// budgetEvents bounds the events an answer decodes for summaries it
	// lacks (about 2 s of CPU); the rest are made in the background.
	budgetEvents = 16_000_000
)

const (
	detailCalls = 5000 // calls sent one by one at most; beyond, bins
	maxLanes    = 256  // rank lanes drawn at most; more ranks share lanes
	maxWidth    = 4000 // pixel columns at most
	sumSlices   = 128  // slices of a block's summary
)

// tcall is one MPI call on the timeline.
type tcall struct {
	t0, t1 int64 // ns since the job's origin
	bytes  int64
	peer   int32
	fn     uint16 // last: 32 bytes a call, no padding between fields
}

// tmsg is one message: sent at t0 by from, received at t1 by to.
type tmsg struct {
	from, to int32
	t0, t1   int64
	bytes    int64
}

// timeline is a job's trace as the view keeps it: each rank's blocks by
// time, the functions seen.
type timeline struct {
	job      *trace.Job
	w        *trace.Walker
	ranks    []int       // world rank of each lane index
	blocks   [][]*tblock // per rank index, in file order
	fnOf     [][]uint16  // per rank index: header function id -> fns index
	fns      []string
	end      int64
	detail   int // calls sent one by one at most (detailCalls)
	warnings []string

	msgOnce    sync.Once // the message index started
	sumOnce    sync.Once // the background summaries started
	sumStarted atomic.Bool

	mu     sync.Mutex // guards the cache and bad
	cache  map[*tblock][]tcall
	lru    []*tblock // cached blocks, least recently used first
	cached int       // calls in the cache
	bad    map[*tblock]string
}

// tblock is one events block of a rank.
type tblock struct {
	rank   int // rank index
	span   trace.BlockSpan
	t0, t1 int64 // job ns its events cover
	sum    atomic.Pointer[tsum]
	msg    atomic.Pointer[msnap] // nil until the message index reached the block
}

// tsum summarizes a block: per slice of its time (width ns, from the
// block's t0), the time in MPI, the function that took most of it and the
// calls that start in it.
type tsum struct {
	width  float64
	busy   [sumSlices]float64
	top    [sumSlices]uint16
	starts [sumSlices]uint32
}

// loadTimeline opens the job's trace for the timeline: each rank file
// indexed by time (the ranks in parallel, one per CPU), the functions of
// their headers. The messages are indexed at once when the trace holds at
// most syncMsgs events, else in the background from the first window of
// single calls on.
func loadTimeline(dir string) (*timeline, error) {
	job, err := trace.OpenJob(dir)
	if err != nil {
		return nil, err
	}
	w := trace.NewWalker(job, trace.WalkOptions{})
	n := len(job.Ranks)
	tl := &timeline{job: job, w: w, detail: detailCalls, blocks: make([][]*tblock, n), fnOf: make([][]uint16, n),
		cache: map[*tblock][]tcall{}, bad: map[*tblock]string{}}
	errs := make([]error, n)
	parallel(n, func(i int) {
		spans, err := job.Ranks[i].Index()
		errs[i] = err
		for _, sp := range spans {
			tl.blocks[i] = append(tl.blocks[i], &tblock{rank: i, span: sp,
				t0: int64(math.Round(w.Ns(i, sp.First))), t1: int64(math.Round(w.Ns(i, sp.Last)))})
		}
	})
	tl.warnings = append(tl.warnings, job.Warnings...)
	fnID := map[string]uint16{}
	var events uint64
	for i, r := range job.Ranks {
		if errs[i] != nil {
			tl.warnings = append(tl.warnings, fmt.Sprintf("%v: rank %d is not in the timeline", errs[i], r.Header.Rank))
		}
		tl.ranks = append(tl.ranks, r.Header.Rank)
		for k := range r.Header.FnNames {
			f := r.FnName(k)
			id, ok := fnID[f]
			if !ok {
				id = uint16(len(tl.fns))
				fnID[f] = id
				tl.fns = append(tl.fns, f)
			}
			tl.fnOf[i] = append(tl.fnOf[i], id)
		}
		for _, b := range tl.blocks[i] {
			tl.end = max(tl.end, b.t1)
			events += b.span.Events
		}
	}
	if events <= uint64(syncMsgs) {
		tl.msgOnce.Do(tl.indexMsgs)
	}
	return tl, nil
}

// parallel runs fn(0) .. fn(n-1) on one goroutine per CPU.
func parallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.NumCPU(), n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// timelineFor returns the job's timeline, indexing the trace on first use
// (again when the trace directory changed).
func (s *Server) timelineFor() (*timeline, error) {
	st := s.scan()
	if st.Error != "" {
		return nil, fmt.Errorf("%s", st.Error)
	}
	if !st.Trace {
		return nil, fmt.Errorf("%s has no trace (run the job with MPISCOPE_TRACE=1)", s.dir)
	}
	s.tlMu.Lock()
	defer s.tlMu.Unlock()
	if s.tlK == st.Version && (s.tl != nil || s.tlErr != nil) {
		return s.tl, s.tlErr
	}
	s.tl, s.tlErr = loadTimeline(s.dir)
	s.tlK = st.Version
	return s.tl, s.tlErr
}

// decode returns block b's calls sorted by t0, from the cache or the file
// (nil, with a warning kept, when the block cannot be read). It makes the
// block's summary on first decoding.
func (tl *timeline) decode(b *tblock) []tcall {
	tl.mu.Lock()
	if c, ok := tl.cache[b]; ok {
		if i := slices.Index(tl.lru, b); i >= 0 {
			tl.lru = append(append(tl.lru[:i], tl.lru[i+1:]...), b)
		}
		tl.mu.Unlock()
		return c
	}
	if _, bad := tl.bad[b]; bad {
		tl.mu.Unlock()
		return nil
	}
	tl.mu.Unlock()
	calls := tl.read(b)
	if calls == nil {
		return nil
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if c, ok := tl.cache[b]; ok {
		return c // decoded meanwhile by another request
	}
	tl.cache[b] = calls
	tl.lru = append(tl.lru, b)
	tl.cached += len(calls)
	for tl.cached > cacheCalls && len(tl.lru) > 1 {
		old := tl.lru[0]
		tl.lru = tl.lru[1:]
		tl.cached -= len(tl.cache[old])
		delete(tl.cache, old)
	}
	return calls
}

// read decodes block b into its calls sorted by t0, and makes its summary
// if it has none (nil, with a warning kept, when the block cannot be read).
func (tl *timeline) read(b *tblock) []tcall {
	r := tl.job.Ranks[b.rank]
	d := decoders.Get().(*trace.BlockDecoder)
	defer decoders.Put(d)
	_, evs, err := d.Read(r, b.span)
	if err != nil {
		tl.mu.Lock()
		tl.bad[b] = fmt.Sprintf("%v: those events of rank %d are not in the timeline", err, r.Header.Rank)
		tl.mu.Unlock()
		return nil
	}
	calls := make([]tcall, 0, len(evs))
	fnOf := tl.fnOf[b.rank]
	for k := range evs {
		e := &evs[k]
		if !e.IsCall() {
			continue
		}
		c := tcall{t0: int64(math.Round(tl.w.Ns(b.rank, e.T0))), t1: int64(math.Round(tl.w.Ns(b.rank, e.T1))), peer: -1}
		if int(e.Fn) < len(fnOf) {
			c.fn = fnOf[e.Fn]
		}
		// Bytes and peer as the walk gives them (trace.Call): the
		// message sent, else the one received or posted, else the
		// collective's bytes.
		nb := e.Flags&trace.FReq != 0 && e.Req != 0
		switch {
		case e.Flags&trace.FSend != 0 && e.SPeer >= 0:
			c.bytes, c.peer = e.SBytes, e.SPeer
		case e.Flags&trace.FRecv != 0 && e.RPeer != -1 && (nb || e.RPeer >= 0):
			c.bytes, c.peer = e.RBytes, max(e.RPeer, -1)
		case e.Flags&trace.FColl != 0:
			c.bytes = e.SBytes
		}
		calls = append(calls, c)
	}
	slices.SortStableFunc(calls, func(a, c tcall) int { return cmp.Compare(a.t0, c.t0) })
	if b.sum.Load() == nil {
		b.sum.Store(summarize(b, calls, len(tl.fns)))
	}
	return calls
}

// decoders are the block decoders of the requests and the background
// summaries (their buffers reused).
var decoders = sync.Pool{New: func() any { return new(trace.BlockDecoder) }}

// summarizeAll makes every block's summary in the background (once), one
// goroutine per CPU, the blocks taken evenly over the run first (every
// 64th, then those between), so that a zoomed-out view fills in evenly.
func (tl *timeline) summarizeAll() {
	tl.sumOnce.Do(func() {
		tl.sumStarted.Store(true)
		var all []*tblock
		for _, bs := range tl.blocks {
			all = append(all, bs...)
		}
		slices.SortStableFunc(all, func(a, b *tblock) int { return cmp.Compare(a.t0, b.t0) })
		order := make([]*tblock, 0, len(all))
		for step := 64; step >= 1; step /= 2 {
			for i := 0; i < len(all); i += step {
				if i%(2*step) != 0 || step == 64 {
					order = append(order, all[i])
				}
			}
		}
		go parallel(len(order), func(i int) {
			if b := order[i]; b.sum.Load() == nil {
				tl.read(b)
			}
		})
	})
}

// summarize makes block b's summary from its calls.
// nfn is the number of the timeline's functions.
func summarize(b *tblock, calls []tcall, nfn int) *tsum {
	s := &tsum{width: math.Max(float64(b.t1-b.t0), 1) / sumSlices}
	// (slice, function) -> ns over the functions the block uses.
	local := make([]int32, nfn)
	var fns []uint16
	for _, c := range calls {
		if local[c.fn] == 0 {
			fns = append(fns, c.fn)
			local[c.fn] = int32(len(fns)) // 1-based: 0 is unseen
		}
	}
	nfn = max(len(fns), 1)
	byFn := make([]float64, sumSlices*nfn)
	for _, c := range calls {
		if k := int(float64(c.t0-b.t0) / s.width); k >= 0 && k < sumSlices {
			s.starts[k]++
		}
		f := int(local[c.fn] - 1)
		overlap(c.t0, c.t1, float64(b.t0), s.width, sumSlices, func(k int, d float64) {
			s.busy[k] += d
			byFn[k*nfn+f] += d
		})
	}
	for k := range sumSlices {
		var best float64
		for f, fn := range fns {
			if v := byFn[k*nfn+f]; v > best || v == best && v > 0 && fn < s.top[k] {
				best, s.top[k] = v, fn
			}
		}
	}
	return s
}

// overlap calls add(k, ns) for each of n columns of width w from origin o
// that [a, b) overlaps, with the overlap.
func overlap(a, b int64, o, w float64, n int, add func(k int, d float64)) {
	fa, fb := float64(a), float64(b)
	for k := max(int((fa-o)/w), 0); k < n; k++ {
		cs, ce := o+float64(k)*w, o+float64(k+1)*w
		if cs >= fb {
			break
		}
		if d := math.Min(fb, ce) - math.Max(fa, cs); d > 0 {
			add(k, d)
		}
	}
}

// Window is the answer of /api/timeline.
type Window struct {
	End   int64        `json:"end_ns"` // the run's length (ns since the first rank's MPI_Init)
	T0    int64        `json:"t0"`
	T1    int64        `json:"t1"`
	Lanes [][2]int     `json:"lanes"` // first and last rank of each lane
	Funcs []string     `json:"funcs"`
	Mode  string       `json:"mode"`  // "calls" or "bins"
	Calls [][6]int64   `json:"calls"` // [lane, t0, t1, func, bytes, peer]
	Msgs  [][5]int64   `json:"msgs"`  // [from lane, t0, to lane, t1, bytes]
	BinNs float64      `json:"bin_ns"`
	Bins  [][4]float64 `json:"bins"`  // [lane, column, MPI share 0..1, func taking most of it]
	Total int          `json:"total"` // calls in the window (bins: about, from the blocks' summaries)
	// Partial: bins of a window some of whose blocks are still being
	// summarized in the background (Pending of them): ask again.
	Partial  bool     `json:"partial"`
	Pending  int      `json:"pending_blocks"`
	Warnings []string `json:"warnings"`
}

func (s *Server) timelineAPI(w http.ResponseWriter, r *http.Request) {
	tl, err := s.timelineFor()
	if err != nil {
		fail(w, r, http.StatusNotFound, err.Error())
		return
	}
	q := r.URL.Query()
	num := func(k string, def int64) (int64, bool) {
		v := q.Get(k)
		if v == "" {
			return def, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	}
	t0, ok0 := num("t0", 0)
	t1, ok1 := num("t1", tl.end+1)
	r0, ok2 := num("r0", 0)
	r1, ok3 := num("r1", math.MaxInt32)
	width, ok4 := num("w", 1000)
	if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 || t1 <= t0 || r1 < r0 || width < 1 {
		fail(w, r, http.StatusBadRequest, "want t0 < t1 (ns), r0 <= r1 (ranks) and w >= 1 (pixels), all integers")
		return
	}
	writeJSON(w, http.StatusOK, tl.window(t0, t1, int(min(r0, math.MaxInt32)), int(min(r1, math.MaxInt32)), int(min(width, maxWidth))))
}

// window answers one request.
func (tl *timeline) window(t0, t1 int64, r0, r1, width int) Window {
	out := Window{End: tl.end, T0: t0, T1: t1, Funcs: nonNil(tl.fns), Lanes: [][2]int{}, Calls: [][6]int64{},
		Msgs: [][5]int64{}, Bins: [][4]float64{}, Warnings: slices.Clone(nonNil(tl.warnings))}
	defer func() {
		tl.mu.Lock()
		for _, w := range tl.bad {
			out.Warnings = append(out.Warnings, w)
		}
		tl.mu.Unlock()
		slices.Sort(out.Warnings[len(tl.warnings):])
		out.Warnings = slices.Compact(out.Warnings)
	}()
	lo, _ := slices.BinarySearch(tl.ranks, r0)
	hi, _ := slices.BinarySearch(tl.ranks, r1+1)
	n := hi - lo
	if n <= 0 {
		out.Mode = "calls"
		return out
	}
	per := (n + maxLanes - 1) / maxLanes
	laneOf := func(i int) int { return (i - lo) / per }
	for i := lo; i < hi; i += per {
		out.Lanes = append(out.Lanes, [2]int{tl.ranks[i], tl.ranks[min(i+per, hi)-1]})
	}
	// The blocks that hold the window, and about how many calls it has
	// (each block's events in proportion of its overlap).
	var need []*tblock
	var guess float64
	for i := lo; i < hi; i++ {
		for _, b := range tl.blocks[i] {
			if b.t1 < t0 || b.t0 >= t1 {
				continue
			}
			need = append(need, b)
			guess += float64(b.span.Events) * float64(min(b.t1, t1)-max(b.t0, t0)+1) / float64(b.t1-b.t0+1)
		}
	}
	// The calls of a block overlapping [t0, t1).
	span := func(c []tcall) []tcall {
		a, _ := slices.BinarySearchFunc(c, t0, func(x tcall, t int64) int { return cmp.Compare(x.t0, t) })
		for a > 0 && c[a-1].t1 > t0 {
			a--
		}
		b, _ := slices.BinarySearchFunc(c, t1, func(x tcall, t int64) int { return cmp.Compare(x.t0, t) })
		return c[a:b]
	}
	binNs := float64(t1-t0) / float64(width)
	if per == 1 && guess <= float64(4*tl.detail) {
		decoded := make([][]tcall, len(need))
		parallel(len(need), func(k int) { decoded[k] = span(tl.decode(need[k])) })
		for _, c := range decoded {
			out.Total += len(c)
		}
		if out.Total <= tl.detail {
			out.Mode = "calls"
			tl.startMsgs()
			// Each rank's calls in time order (its threads' blocks
			// interleaved; a call that two blocks would both hold is
			// not possible: a thread's blocks do not overlap).
			for i := lo; i < hi; i++ {
				var rc []tcall
				for k, b := range need {
					if b.rank == i {
						rc = append(rc, decoded[k]...)
					}
				}
				slices.SortStableFunc(rc, func(a, b tcall) int { return cmp.Compare(a.t0, b.t0) })
				for _, c := range rc {
					out.Calls = append(out.Calls, [6]int64{int64(laneOf(i)), c.t0, c.t1, int64(c.fn), c.bytes, int64(c.peer)})
				}
			}
			if !tl.windowMsgs(&out, lo, hi, laneOf, t0, t1) {
				out.Warnings = append(out.Warnings, "messages are being read (drawn when you zoom or pan next)")
			}
			return out
		}
		out.Total = 0
	}
	out.Mode = "bins"
	out.BinNs = binNs
	// Blocks whose summary is fine enough for a column are binned from
	// it; the others are decoded (their summaries made on the way).
	// Blocks without a summary are decoded now as long as they hold at
	// most budgetEvents events in all (taken evenly over the window),
	// the others summarized in the background, and the answer says it is
	// partial (the browser asks again).
	var exact, later []*tblock
	var laterEvents uint64
	for _, b := range need {
		s := b.sum.Load()
		switch {
		case s != nil && s.width <= binNs:
		case float64(b.t1-b.t0)/sumSlices > binNs:
			exact = append(exact, b)
		default:
			later = append(later, b)
			laterEvents += b.span.Events
		}
	}
	if laterEvents > uint64(budgetEvents) {
		// The first such answer decodes budgetEvents evenly over the
		// window; once the background summaries run, an answer takes
		// what they made so far.
		k := float64(budgetEvents) / float64(laterEvents)
		if tl.sumStarted.Load() {
			k = 0
		}
		for j, b := range later {
			if int(float64(j)*k) != int(float64(j+1)*k) {
				exact = append(exact, b)
			} else {
				out.Pending++
			}
		}
		out.Partial = true
		tl.summarizeAll()
	} else {
		exact = append(exact, later...)
	}
	decoded := map[*tblock][]tcall{}
	var dmu sync.Mutex
	parallel(len(exact), func(k int) {
		c := tl.decode(exact[k])
		dmu.Lock()
		decoded[exact[k]] = c
		dmu.Unlock()
	})
	nl := len(out.Lanes)
	busy := make([]float64, nl*width)
	// (lane, column, function) -> ns, sparse: the entries touched.
	byFn := map[[2]int32]map[uint16]float64{}
	add := func(l, col int, fn uint16, d float64) {
		busy[l*width+col] += d
		k := [2]int32{int32(l), int32(col)}
		m := byFn[k]
		if m == nil {
			m = map[uint16]float64{}
			byFn[k] = m
		}
		m[fn] += d
	}
	for _, b := range need {
		l := laneOf(b.rank)
		// A block just decoded whose summary is fine enough is binned
		// from it too (per call would cost a map entry each).
		if c, ok := decoded[b]; ok && (b.sum.Load() == nil || b.sum.Load().width > binNs) {
			// Per call: summed per (column, function) first.
			acc := map[[2]int32]float64{}
			for _, x := range span(c) {
				out.Total++
				overlap(max(x.t0, t0), min(x.t1, t1), float64(t0), binNs, width, func(col int, d float64) {
					acc[[2]int32{int32(col), int32(x.fn)}] += d
				})
			}
			for k, d := range acc {
				add(l, int(k[0]), uint16(k[1]), d)
			}
			continue
		}
		s := b.sum.Load()
		if s == nil {
			continue // summarized in the background
		}
		for k := range sumSlices {
			a := float64(b.t0) + float64(k)*s.width
			if a >= float64(t0) && a < float64(t1) {
				out.Total += int(s.starts[k]) // calls that start in the slice: about those of the window
			}
			if a >= float64(t1) || a+s.width <= float64(t0) || s.busy[k] == 0 {
				continue
			}
			// The slice's MPI time, spread evenly over it.
			lo, hi := math.Max(a, float64(t0)), math.Min(a+s.width, float64(t1))
			f := s.busy[k] / s.width
			for col := max(int((lo-float64(t0))/binNs), 0); col < width; col++ {
				cs, ce := float64(t0)+float64(col)*binNs, float64(t0)+float64(col+1)*binNs
				if cs >= hi {
					break
				}
				if d := math.Min(hi, ce) - math.Max(lo, cs); d > 0 {
					add(l, col, s.top[k], d*f)
				}
			}
		}
	}
	for l := range nl {
		ranksIn := float64(min(lo+(l+1)*per, hi) - (lo + l*per))
		for col := range width {
			v := busy[l*width+col]
			if v <= 0 {
				continue
			}
			top, topNs := 0, -1.0
			for fn, d := range byFn[[2]int32{int32(l), int32(col)}] {
				if d > topNs || (d == topNs && int(fn) < top) {
					top, topNs = int(fn), d
				}
			}
			out.Bins = append(out.Bins, [4]float64{float64(l), float64(col), math.Min(1, v/(binNs*ranksIn)), float64(top)})
		}
	}
	return out
}
