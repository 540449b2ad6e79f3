package analyze

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// The delay analysis in the job (delays' formulation, distributed): a
// wait's cost is worked out at its partner's rank, whose waits it may pass
// on to and whose activity it is charged to. Each rank
//
//  1. sends each of its waits (window, waiting time, the partner's call)
//     to its partner (one MPI_Alltoallv), and works out, for each wait it
//     receives, the share of its window each of its own waits covers and
//     the rest, which its own calls caused: the geometry, which does not
//     depend on what the waits carry;
//  2. carries the costs: a wait of its own is done once every wait it
//     receives a share from is; it then sends what it was passed to its
//     partner. The waits are a graph without cycles (a wait passes only to
//     waits later in delays' order, Ready descending), so the ranks never
//     wait for each other in a circle; each wait is one message entry;
//  3. charges the rest of each wait it received to its own call keys.
//
// Every sum adds the same terms in the same order as delays (the waits in
// its processing order: Ready descending, then rank and index
// descending), so the two agree exactly.

// turnBefore tells whether wait (ra, ka) at ready comes before (rb, kb)
// in delays' processing order.
func turnBefore(readyA float64, ra int, ka int32, readyB float64, rb int, kb int32) bool {
	if readyA != readyB {
		return readyA > readyB
	}
	if ra != rb {
		return ra > rb
	}
	return ka > kb
}

// jobWait is one of this rank's waits (Ready after T0).
type jobWait struct {
	t0, ready float64 // its window
	passed    float64 // what the waits it covers passed to it
	partner   int32   // world rank (unused without ord)
	k         int32   // its index in the rank's waits
	ord       int32   // its place among the waits sent to its partner (-1: none), which names it in the costs' messages
	pending   int32   // received waits whose share it still lacks
	// edges[e0:e1] (delaysInJob) are the shares it receives, in
	// processing order.
	e0, e1 int32
}

type share struct {
	from int32   // the received wait (index)
	o    float64 // ns of its window this wait covers
}

// recvWait is a wait of another rank (or this one) whose partner this
// rank is.
type recvWait struct {
	t0, ready float64
	wait      float64
	passed    float64
	rest      float64 // the part of the window this rank's own activity caused
	src       int32
	k         int32
	pkey      int32
	// feeds[f0:f1] (delaysInJob) are the own waits it passes a share
	// to: no pointer in the struct.
	f0, f1 int32
	known  bool
}

// delayStats is what carrying the costs took one rank: the messages it
// sent (and the waits' entries in them), the messages it received, and
// how many times it waited for one (each a link of a chain of waits that
// crosses ranks; then it takes all that have come).
type delayStats struct {
	sent, entries, recvs, waits int
}

func (s delayStats) String() string {
	return fmt.Sprintf("sent=%d,entries=%d,recvs=%d,waits=%d", s.sent, s.entries, s.recvs, s.waits)
}

// delayMsgLen is one wait in the exchanges: index, T0, Ready, Wait, PKey.
const delayMsgLen = 4 + 8*3 + 4

// delaysInJob is this rank's part of the delay analysis: ws are its waits
// with a partner (rankPart.DWaits), keys its call keys' names (nil: the
// rank has no trace). It returns the delay costs this rank's activity
// caused, in the order delays creates them.
func delaysInJob(c Comm, ws []DelayWait, keys []KeyName, st *delayStats) ([]Delay, error) {
	me, size := c.Rank(), c.Size()
	le := binary.LittleEndian
	f64 := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	// 1. Each wait to its partner, in the order of the rank's waits (the
	// receiver's runs below rely on it).
	n := make([]int32, size)
	for _, w := range ws {
		if w.Ready > w.T0 && w.Partner >= 0 && w.Partner < size {
			n[w.Partner]++
		}
	}
	own := make([]jobWait, 0, len(ws))
	out := make([][]byte, size)
	for d := range out {
		out[d] = make([]byte, 0, int(n[d])*delayMsgLen)
		n[d] = 0
	}
	for k, w := range ws {
		if !(w.Ready > w.T0) {
			continue
		}
		// A wait whose partner is no rank passes nothing on, but may be
		// passed to.
		ow := jobWait{t0: w.T0, ready: w.Ready, partner: int32(w.Partner), k: int32(k), ord: -1}
		if w.Partner >= 0 && w.Partner < size {
			ow.ord = n[w.Partner]
			n[w.Partner]++
			b := le.AppendUint32(out[w.Partner], uint32(k))
			for _, x := range [3]float64{w.T0, w.Ready, w.Wait} {
				b = le.AppendUint64(b, math.Float64bits(x))
			}
			out[w.Partner] = le.AppendUint32(b, uint32(w.PKey))
		}
		own = append(own, ow)
	}
	in, err := c.Alltoallv(out)
	if err != nil {
		return nil, err
	}
	out = nil
	// A received wait's id: its sender's place (base) and its place in
	// the sender's message, which names it in the costs' messages.
	base := make([]int32, size+1)
	for s, b := range in {
		if len(b)%delayMsgLen != 0 || len(b)/delayMsgLen > math.MaxInt32-int(base[s]) {
			return nil, fmt.Errorf("delay costs: %d bytes from rank %d", len(b), s)
		}
		base[s+1] = base[s] + int32(len(b)/delayMsgLen)
	}
	total := int(base[size])
	recv, pos := receivedInTurn(in, base)
	in = nil
	// This rank's waits by window end, ascending (delays' per[rank]): in
	// the order of its waits when their ends are (a rank's calls end in
	// order, bar threads), else sorted.
	byEnd := make([]int32, len(own))
	for i := range byEnd {
		byEnd[i] = int32(i)
	}
	if !slices.IsSortedFunc(own, func(a, b jobWait) int { return cmp.Compare(a.ready, b.ready) }) {
		slices.SortStableFunc(byEnd, func(a, b int32) int {
			x, y := &own[a], &own[b]
			switch {
			case turnBefore(y.ready, me, y.k, x.ready, me, x.k):
				return -1
			case turnBefore(x.ready, me, x.k, y.ready, me, y.k):
				return 1
			}
			return 0
		})
	}
	ends := make([]float64, len(byEnd)) // beside each other for the search
	for x, i := range byEnd {
		ends[x] = own[i].ready
	}
	// The geometry of each received wait, in processing order: the own
	// waits it passes a share to (feeds), each share's ns (feedO). The
	// own waits that come later in that order than a received one are the
	// start of byEnd (cut of them), which only shrinks from one to the
	// next: those that overlap its window are found back from its end
	// (most windows overlap none or one), not by a search over all own
	// waits and a check of each one's turn (before 2026-11-29).
	var feeds []int32
	var feedO []float64
	if keys != nil {
		feeds, feedO = make([]int32, 0, total), make([]float64, 0, total)
		cut := len(byEnd)
		for i := range recv {
			d := &recv[i]
			for cut > 0 { // turnBefore, its ends read from ends, the rest on a tie
				if e := ends[cut-1]; d.ready > e || d.ready == e && turnBefore(d.ready, int(d.src), d.k, e, me, own[byEnd[cut-1]].k) {
					break
				}
				cut--
			}
			d.f0 = int32(len(feeds))
			win := d.ready - d.t0
			j := firstEndAfter(ends[:cut], d.t0)
			var covered float64
			for ; j < cut && own[byEnd[j]].t0 < d.ready; j++ {
				w := &own[byEnd[j]]
				o := min(w.ready, d.ready) - max(w.t0, d.t0)
				if o <= 0 {
					continue
				}
				o = min(o, win-covered)
				if o <= 0 {
					break
				}
				covered += o
				w.pending++
				feeds = append(feeds, byEnd[j])
				feedO = append(feedO, o)
			}
			d.f1 = int32(len(feeds))
			d.rest = 1 - covered/win
		}
	}
	byEnd, ends = nil, nil
	// Each own wait's shares in one list (edges[e0:e1]), in processing
	// order.
	e := int32(0)
	for i := range own {
		own[i].e0, own[i].e1 = e, e
		e += own[i].pending
	}
	edges := make([]share, len(feeds))
	for i := range recv {
		for f := recv[i].f0; f < recv[i].f1; f++ {
			w := &own[feeds[f]]
			edges[w.e1] = share{int32(i), feedO[f]}
			w.e1++
		}
	}
	feedO = nil
	// 2. The costs carried along the waits.
	ready := make([]int32, 0, len(own)) // each own wait goes in once
	for i := range own {
		if own[i].pending == 0 {
			ready = append(ready, int32(i))
		}
	}
	batch := make([][]byte, size)
	emitted, known := 0, 0
	var deliver func(i int32, passed float64)
	deliver = func(i int32, passed float64) {
		d := &recv[i]
		if d.known {
			return
		}
		d.passed, d.known = passed, true
		known++
		for _, w := range feeds[d.f0:d.f1] {
			if own[w].pending--; own[w].pending == 0 {
				ready = append(ready, w)
			}
		}
	}
	for {
		for len(ready) > 0 {
			w := &own[ready[len(ready)-1]]
			ready = ready[:len(ready)-1]
			for _, e := range edges[w.e0:w.e1] {
				d := &recv[e.from]
				if load := d.wait + d.passed; load > 0 {
					w.passed += load * e.o / (d.ready - d.t0)
				}
			}
			emitted++
			if w.ord < 0 {
				continue
			}
			if int(w.partner) == me {
				deliver(pos[base[me]+w.ord], w.passed)
				continue
			}
			if batch[w.partner] == nil { // all its entries at most (n: the waits sent to each rank)
				batch[w.partner] = make([]byte, 0, 12*int(n[w.partner]))
			}
			batch[w.partner] = le.AppendUint64(le.AppendUint32(batch[w.partner], uint32(w.ord)), math.Float64bits(w.passed))
		}
		for d, b := range batch {
			if len(b) > 0 {
				st.sent++
				st.entries += len(b) / 12
				if err := c.SendAsync(d, b); err != nil {
					return nil, err
				}
				batch[d] = b[:0] // SendAsync does not keep it
			}
		}
		if emitted == len(own) && known == len(recv) {
			break
		}
		if emitted < len(own) && known == len(recv) {
			return nil, fmt.Errorf("delay costs: %d waits never done", len(own)-emitted)
		}
		// Wait for one message, then take every one that has come
		// meanwhile before working and sending again (since 2026-11-28,
		// night: before, every message received was followed by the
		// batches it made ready, so more and smaller messages, each one
		// more wait for its receiver).
		src, b, err := c.RecvAny()
		if err != nil {
			return nil, err
		}
		for ok := true; ok; {
			st.recvs++
			if len(b)%12 != 0 || src < 0 || src >= size {
				return nil, fmt.Errorf("delay costs: %d bytes from rank %d", len(b), src)
			}
			for ; len(b) > 0; b = b[12:] {
				o := le.Uint32(b)
				if o >= uint32(base[src+1]-base[src]) {
					return nil, fmt.Errorf("delay costs: rank %d's wait %d is unknown here (it sent %d)", src, o, base[src+1]-base[src])
				}
				deliver(pos[base[src]+int32(o)], f64(b[4:]))
			}
			if src, b, ok, err = c.PollAny(); err != nil {
				return nil, err
			}
		}
		st.waits++
	}
	if err := c.WaitSends(); err != nil {
		return nil, err
	}
	// 3. The rest of each received wait, charged to this rank's calls.
	var costs []Delay
	// Each key's row (its place + 1; 0: none yet), a map only for keys
	// out of range.
	atKey := make([]int, len(keys))
	var atOther map[int32]int
	for i := range recv {
		d := &recv[i]
		if keys == nil || d.wait+d.passed <= 0 || d.rest <= 0 {
			continue
		}
		var x int
		var ok bool
		if d.pkey >= 0 && int(d.pkey) < len(keys) {
			x, ok = atKey[d.pkey]-1, atKey[d.pkey] > 0
		} else {
			x, ok = atOther[d.pkey]
		}
		if !ok {
			x = len(costs)
			if d.pkey >= 0 && int(d.pkey) < len(keys) {
				atKey[d.pkey] = x + 1
			} else {
				if atOther == nil {
					atOther = map[int32]int{}
				}
				atOther[d.pkey] = x
			}
			c := Delay{Rank: me}
			if d.pkey >= 0 && int(d.pkey) < len(keys) {
				c.Func, c.Callsite, c.Caller = keys[d.pkey].Func, keys[d.pkey].Site, keys[d.pkey].Caller
			}
			costs = append(costs, c)
		}
		c := &costs[x]
		c.Short += d.wait * d.rest / 1e9
		c.Long += d.passed * d.rest / 1e9
		if d.wait > 0 {
			c.Instances++
		}
	}
	for i := range costs {
		costs[i].Seconds = costs[i].Short + costs[i].Long
	}
	return costs, nil
}

// receivedInTurn decodes the waits received (in, from each rank; base:
// each rank's first id, a wait's id its sender's base plus its place in
// the sender's message) into delays' processing order (turnBefore: Ready
// descending, then rank and index descending), and returns them with the
// place of each id in that order. A rank sends its waits in the order of
// its calls, whose ends are in order (bar threads): each rank's, read
// backwards, is a run already in turn (else its order is sorted), and the
// runs are merged by a tournament over the senders (turnTree), the ends
// read in place from the messages: log2(ranks) comparisons a wait (a heap
// over the senders through a list of 16-byte keys before 2026-11-29).
func receivedInTurn(in [][]byte, base []int32) ([]recvWait, []int32) {
	le := binary.LittleEndian
	f64 := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	size := len(in)
	total := base[size]
	end := func(s int, o int32) float64 { return f64(in[s][int(o)*delayMsgLen+12:]) }
	// Each sender's run: its places by end, ascending (order[s] nil:
	// the places themselves), of which left[s] are still to come.
	order := make([][]int32, size)
	left := make([]int32, size)
	heads := make([]float64, size)
	for s := range in {
		m := base[s+1] - base[s]
		left[s], heads[s] = m, math.Inf(-1)
		if m == 0 {
			continue
		}
		prev := math.Inf(-1)
		for b := in[s]; len(b) >= delayMsgLen; b = b[delayMsgLen:] { // in place: no call an end
			e := f64(b[12:])
			if e >= prev {
				prev = e
				continue
			}
			x := make([]int32, m)
			for i := range x {
				x[i] = int32(i)
			}
			slices.SortStableFunc(x, func(a, b int32) int { return cmp.Compare(end(s, a), end(s, b)) })
			order[s] = x
			break
		}
		heads[s] = end(s, place(order[s], m-1))
	}
	t := newTurnTree(heads)
	recv := make([]recvWait, total)
	pos := make([]int32, total)
	for i := range recv {
		s := t.top()
		left[s]--
		o := place(order[s], left[s])
		if left[s] > 0 {
			t.next(end(int(s), place(order[s], left[s]-1)))
		} else {
			t.next(math.Inf(-1))
		}
		b := in[s][int(o)*delayMsgLen:]
		recv[i] = recvWait{src: s, k: int32(le.Uint32(b)), t0: f64(b[4:]), ready: f64(b[12:]), wait: f64(b[20:]), pkey: int32(le.Uint32(b[28:]))}
		pos[base[s]+o] = int32(i)
	}
	return recv, pos
}

// place is the x-th place of a run in order (nil: x).
func place(order []int32, x int32) int32 {
	if order == nil {
		return x
	}
	return order[x]
}
