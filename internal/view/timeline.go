package view

import (
	"cmp"
	"errors"
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

// The timeline: the job's trace is read once, on the first request, into
// compact per-rank call lists held by the server (at most maxCalls calls and
// maxMsgs messages; beyond them the timeline says it is cut). Each request
// names a time window, a range of ranks and the width in pixels, and gets
// either the calls and messages in it (when there are at most detailCalls)
// or, per lane and pixel column, the share of time in MPI and the function
// that took most of it: what the browser draws is bounded by the request,
// whatever the size of the trace.

// maxCalls and maxMsgs bound the timeline's memory (variables for tests).
var (
	maxCalls = 20_000_000
	maxMsgs  = 2_000_000
)

const (
	detailCalls = 5000 // calls sent one by one at most; beyond, bins
	maxLanes    = 256  // rank lanes drawn at most; more ranks share lanes
	maxWidth    = 4000 // pixel columns at most
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

// timeline is a job's trace as the view keeps it.
type timeline struct {
	ranks    []int     // world rank of each lane index
	calls    [][]tcall // per rank index, sorted by t0
	msgs     []tmsg    // sorted by t0
	fns      []string
	end      int64
	detail   int  // calls sent one by one at most (detailCalls)
	cut      bool // calls or messages were left out (maxCalls, maxMsgs)
	warnings []string
}

// collector is the trace.Visitor that builds one rank's part of a
// timeline: its calls and the ends of its messages, up to its share of
// maxCalls (then its walk stops: errFull).
type collector struct {
	rank  int
	quota int
	calls []tcall
	fns   []string
	fnID  map[string]uint16
	sends []flowEnd
	recvs []flowEnd
	end   int64 // latest t1 read
	full  bool
}

// flowEnd is one end of a message: its flow id, time, bytes and rank.
type flowEnd struct {
	flow  uint64
	t     int64
	bytes int64
	rank  int32
}

// errFull ends a rank's walk when it holds its share of the calls.
var errFull = errors.New("timeline: the rank's share of calls is loaded")

func (c *collector) Call(k *trace.Call) error {
	if len(c.calls) >= c.quota {
		c.full = true
		return errFull
	}
	t0, t1 := int64(math.Round(k.T0)), int64(math.Round(k.T1))
	c.end = max(c.end, t1)
	id, ok := c.fnID[k.Fn]
	if !ok {
		id = uint16(len(c.fns))
		c.fnID[k.Fn] = id
		c.fns = append(c.fns, k.Fn)
	}
	tc := tcall{t0: t0, t1: t1, fn: id, peer: -1}
	switch {
	case k.Send != nil:
		tc.bytes, tc.peer = k.Send.Bytes, int32(k.Send.Peer)
		c.send(k.Send, t0)
	case k.Recv != nil:
		tc.bytes, tc.peer = k.Recv.Bytes, int32(k.Recv.Peer)
		c.recv(k.Recv, t1)
	case k.RecvPost != nil:
		tc.bytes, tc.peer = k.RecvPost.Bytes, int32(k.RecvPost.Peer)
	case k.Coll:
		tc.bytes = k.CollBytes
	}
	for j := range k.StartSend {
		c.send(&k.StartSend[j], t0)
	}
	for j := range k.RecvDone {
		c.recv(&k.RecvDone[j], t1)
	}
	c.calls = append(c.calls, tc)
	return nil
}

func (c *collector) send(m *trace.Msg, t int64) {
	if m.Flow != 0 {
		c.sends = append(c.sends, flowEnd{m.Flow, t, m.Bytes, int32(c.rank)})
	}
}

func (c *collector) recv(m *trace.Msg, t int64) {
	if m.Flow != 0 {
		c.recvs = append(c.recvs, flowEnd{m.Flow, t, m.Bytes, int32(c.rank)})
	}
}

func (c *collector) Region(int, int, bool, string, float64) error { return nil }
func (c *collector) Mark(int, int, string, float64) error         { return nil }

// loadTimeline reads the job's trace: the ranks in parallel (one per CPU),
// each up to its share of maxCalls, so that the time to the first answer
// is bounded whatever the trace's size; a trace beyond that shows its
// first part (the time every rank's calls cover) and says so.
func loadTimeline(dir string) (*timeline, error) {
	job, err := trace.OpenJob(dir)
	if err != nil {
		return nil, err
	}
	w := trace.NewWalker(job, trace.WalkOptions{})
	n := len(job.Ranks)
	tl := &timeline{detail: detailCalls}
	cols := make([]*collector, n)
	errs := make([]error, n)
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
				c := &collector{rank: job.Ranks[i].Header.Rank, quota: max(maxCalls/n, 1), fnID: map[string]uint16{}}
				// Room for the calls at once (a rank's file counts its
				// events): no copies as the list grows.
				c.calls = make([]tcall, 0, min(uint64(c.quota), job.Ranks[i].Events))
				cols[i] = c
				if err := w.WalkRank(i, c); err != nil && !errors.Is(err, errFull) {
					errs[i] = err
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var ce *trace.CorruptError
		if errors.As(err, &ce) {
			tl.warnings = append(tl.warnings, fmt.Sprintf("%v: rank %d's events from there on are not in the timeline", err, cols[i].rank))
		} else if err != nil {
			return nil, err
		}
	}
	tl.warnings = append(job.Warnings, tl.warnings...)
	// Lanes in rank order, function ids made common, each rank's calls
	// (threads interleaved) by time; messages matched by flow.
	slices.SortFunc(cols, func(a, b *collector) int { return cmp.Compare(a.rank, b.rank) })
	fnID := map[string]uint16{}
	ns, nr := 0, 0
	for _, c := range cols {
		ns, nr = ns+len(c.sends), nr+len(c.recvs)
	}
	sends, recvs := make([]flowEnd, 0, ns), make([]flowEnd, 0, nr)
	var cutAt int64 = math.MaxInt64
	for _, c := range cols {
		remap := make([]uint16, len(c.fns))
		for k, f := range c.fns {
			id, ok := fnID[f]
			if !ok {
				id = uint16(len(tl.fns))
				fnID[f] = id
				tl.fns = append(tl.fns, f)
			}
			remap[k] = id
		}
		for k := range c.calls {
			c.calls[k].fn = remap[c.calls[k].fn]
		}
		slices.SortStableFunc(c.calls, func(a, b tcall) int { return cmp.Compare(a.t0, b.t0) })
		tl.ranks = append(tl.ranks, c.rank)
		tl.calls = append(tl.calls, c.calls)
		tl.end = max(tl.end, c.end)
		if c.full {
			tl.cut = true
			cutAt = min(cutAt, c.end)
		}
		sends, recvs = append(sends, c.sends...), append(recvs, c.recvs...)
		c.sends, c.recvs = nil, nil
	}
	// Messages: the two ends of a flow, joined by sorting both lists by
	// flow (a map of millions of open sends took more time and memory).
	byFlow := func(a, b flowEnd) int { return cmp.Compare(a.flow, b.flow) }
	slices.SortFunc(sends, byFlow)
	slices.SortFunc(recvs, byFlow)
	for i, j := 0, 0; i < len(sends) && j < len(recvs); {
		switch s, r := sends[i], recvs[j]; {
		case s.flow < r.flow:
			i++
		case s.flow > r.flow:
			j++
		default:
			if len(tl.msgs) >= maxMsgs {
				tl.cut = true
				i, j = len(sends), len(recvs)
				break
			}
			tl.msgs = append(tl.msgs, tmsg{from: s.rank, to: r.rank, t0: s.t, t1: r.t, bytes: s.bytes})
			i++
			j++
		}
	}
	sends, recvs = nil, nil
	slices.SortStableFunc(tl.msgs, func(a, b tmsg) int { return cmp.Compare(a.t0, b.t0) })
	if tl.cut {
		if cutAt != math.MaxInt64 {
			tl.end = cutAt
		}
		tl.warnings = append(tl.warnings, fmt.Sprintf("the trace holds more than %d calls: the timeline shows its first %.3f s, the time every rank's first %d calls cover (and at most %d messages)",
			maxCalls, float64(tl.end)/1e9, max(maxCalls/max(n, 1), 1), maxMsgs))
	}
	return tl, nil
}

// timelineFor returns the job's timeline, reading the trace on first use
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

// Window is the answer of /api/timeline.
type Window struct {
	End      int64        `json:"end_ns"` // the run's length (ns since the first rank's MPI_Init)
	T0       int64        `json:"t0"`
	T1       int64        `json:"t1"`
	Lanes    [][2]int     `json:"lanes"` // first and last rank of each lane
	Funcs    []string     `json:"funcs"`
	Mode     string       `json:"mode"`  // "calls" or "bins"
	Calls    [][6]int64   `json:"calls"` // [lane, t0, t1, func, bytes, peer]
	Msgs     [][5]int64   `json:"msgs"`  // [from lane, t0, to lane, t1, bytes]
	BinNs    float64      `json:"bin_ns"`
	Bins     [][4]float64 `json:"bins"`  // [lane, column, MPI share 0..1, func taking most of it]
	Total    int          `json:"total"` // calls in the window
	Cut      bool         `json:"cut"`
	Warnings []string     `json:"warnings"`
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
		Msgs: [][5]int64{}, Bins: [][4]float64{}, Cut: tl.cut, Warnings: nonNil(tl.warnings)}
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
	// The calls of rank index i overlapping [t0, t1): those starting before
	// t1, from the first that ends after t0 (calls of one rank do not
	// overlap much: start from the first starting after t0 less the
	// longest call would be exact; the ones before are checked).
	span := func(i int) []tcall {
		c := tl.calls[i]
		a, _ := slices.BinarySearchFunc(c, t0, func(x tcall, t int64) int { return cmp.Compare(x.t0, t) })
		for a > 0 && c[a-1].t1 > t0 {
			a--
		}
		b, _ := slices.BinarySearchFunc(c, t1, func(x tcall, t int64) int { return cmp.Compare(x.t0, t) })
		return c[a:b]
	}
	for i := lo; i < hi; i++ {
		out.Total += len(span(i))
	}
	if out.Total <= tl.detail && per == 1 {
		out.Mode = "calls"
		for i := lo; i < hi; i++ {
			for _, c := range span(i) {
				out.Calls = append(out.Calls, [6]int64{int64(laneOf(i)), c.t0, c.t1, int64(c.fn), c.bytes, int64(c.peer)})
			}
		}
		lane := map[int32]int{}
		for i := lo; i < hi; i++ {
			lane[int32(tl.ranks[i])] = laneOf(i)
		}
		a, _ := slices.BinarySearchFunc(tl.msgs, t0-(t1-t0), func(m tmsg, t int64) int { return cmp.Compare(m.t0, t) })
		for _, m := range tl.msgs[a:] {
			if m.t0 >= t1 || len(out.Msgs) >= tl.detail {
				break
			}
			lf, okf := lane[m.from]
			lt, okt := lane[m.to]
			if okf && okt && m.t1 >= t0 {
				out.Msgs = append(out.Msgs, [5]int64{int64(lf), m.t0, int64(lt), m.t1, m.bytes})
			}
		}
		return out
	}
	out.Mode = "bins"
	out.BinNs = float64(t1-t0) / float64(width)
	busy := make([]float64, width)
	// (column, func) -> ns for the lane being built: a dense table (column
	// x function) whose touched entries are reset after each lane; a map
	// per call cost most of a zoomed-out answer's time.
	nfn := max(len(tl.fns), 1)
	byFn := make([]float64, width*nfn)
	var touched []int32
	top := make([]int, width)
	topNs := make([]float64, width)
	for l := range out.Lanes {
		clear(busy)
		for i := lo + l*per; i < min(lo+(l+1)*per, hi); i++ {
			for _, c := range span(i) {
				a, b := max(c.t0, t0), min(c.t1, t1)
				for col := int(float64(a-t0) / out.BinNs); col < width; col++ {
					cs := t0 + int64(float64(col)*out.BinNs)
					ce := t0 + int64(float64(col+1)*out.BinNs)
					if cs >= b {
						break
					}
					d := float64(min(b, ce) - max(a, cs))
					if d > 0 {
						busy[col] += d
						k := col*nfn + int(c.fn)
						if byFn[k] == 0 {
							touched = append(touched, int32(k))
						}
						byFn[k] += d
					}
				}
			}
		}
		clear(top)
		clear(topNs)
		for _, k := range touched {
			col, fn, v := int(k)/nfn, int(k)%nfn, byFn[k]
			if v > topNs[col] || (v == topNs[col] && fn < top[col]) {
				top[col], topNs[col] = fn, v
			}
			byFn[k] = 0
		}
		touched = touched[:0]
		ranksIn := float64(min(lo+(l+1)*per, hi) - (lo + l*per))
		for col, v := range busy {
			if v > 0 {
				out.Bins = append(out.Bins, [4]float64{float64(l), float64(col), math.Min(1, v/(out.BinNs*ranksIn)), float64(top[col])})
			}
		}
	}
	return out
}
