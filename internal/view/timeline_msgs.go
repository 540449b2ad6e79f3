package view

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// The timeline's messages, for a window anywhere in the run. A message is
// the n-th send of its channel (sender, receiver, communicator, tag) paired
// with the n-th receive of it, so pairing the messages of a window needs,
// at its first block, how many sends and receives each channel had before
// (prefix counts) and the requests still pending there. A background pass
// reads each rank's blocks in file order once and keeps that per block
// (a msnap): the counts of the channels the block uses (32 bytes each in
// a small map), and the requests pending at its start and completions
// read before their call, when there are any: a few hundred bytes a
// block, so about 10 MB for the 20,000 blocks of a trace of 600 million
// events, whatever the number of messages (measured: 4 channels a
// block, at most 4 requests pending, on the synthetic ring of the tests).
// A window then decodes its blocks (and the next of each rank, for
// receives that complete after it: a message received later than that is
// not drawn) and pairs their message ends from the counts of its first
// block, without a walk from the start of the trace. Until the pass has
// reached a window's first block of some rank, the window says so.
//
// The ends are those the trace walk (trace.Walker) gives: sends at
// posting (MPI_Send, MPI_Isend, MPI_Start of a persistent send), receives
// at completion, their source and tag from the status when the receive
// was posted with wildcards. Receives of a channel are numbered in the
// order they complete (the walk numbers them in the order they were
// posted: the two differ only when receives of one channel complete out
// of posting order).

// mchan is a message channel: world ranks of both ends, the job-wide
// communicator id, the tag.
type mchan struct {
	src, dst int32
	comm     int32
	tag      int32
}

// mcount is a channel's sends and receives before a point.
type mcount struct{ send, recv uint64 }

// mpost is a nonblocking request pending: a receive (its channel but the
// source and tag may be wildcards) or anything else its completion takes.
type mpost struct {
	seq        uint64 // posting order on the rank
	recv, send bool
	peer, tag  int32
	comm       *trace.GComm
}

// msnap is what a block's messages need of what came before it.
type msnap struct {
	counts map[mchan]mcount      // before the block, for the channels it uses
	posts  map[uint64][]mpost    // pending requests by handle, posting order
	pend   map[int][]trace.Event // per thread, completions and starts read but not yet their call
	next   uint64
}

// mstate is a rank's message state while reading its blocks in order.
type mstate struct {
	counts map[mchan]mcount
	posts  map[uint64][]mpost
	pend   map[int][]trace.Event
	next   uint64
	snap   map[mchan]mcount // counts before the current block, of the channels touched so far
	ends   func(send bool, ch mchan, seq uint64, t int64, bytes int64)
}

func newMstate() *mstate {
	return &mstate{counts: map[mchan]mcount{}, posts: map[uint64][]mpost{}, pend: map[int][]trace.Event{}}
}

// fromSnap restarts the state at a block from its snapshot.
func (s *mstate) fromSnap(p *msnap) {
	*s = mstate{counts: map[mchan]mcount{}, posts: map[uint64][]mpost{}, pend: map[int][]trace.Event{}, next: p.next, ends: s.ends}
	for h, l := range p.posts {
		s.posts[h] = slices.Clone(l)
	}
	for t, l := range p.pend {
		s.pend[t] = slices.Clone(l)
	}
}

// begin starts a block: with its snapshot (the counts of its channels as
// the pass found them) when given.
func (s *mstate) begin(p *msnap) *msnap {
	if p != nil {
		for k, c := range p.counts {
			s.counts[k] = c
		}
		s.snap = nil
		return nil
	}
	out := &msnap{counts: map[mchan]mcount{}, next: s.next}
	for h, l := range s.posts {
		if len(l) > 0 {
			if out.posts == nil {
				out.posts = map[uint64][]mpost{}
			}
			out.posts[h] = slices.Clone(l)
		}
	}
	for t, l := range s.pend {
		if len(l) > 0 {
			if out.pend == nil {
				out.pend = map[int][]trace.Event{}
			}
			out.pend[t] = slices.Clone(l)
		}
	}
	s.snap = out.counts
	return out
}

func (s *mstate) touch(k mchan) mcount {
	c := s.counts[k]
	if s.snap != nil {
		if _, ok := s.snap[k]; !ok {
			s.snap[k] = c
		}
	}
	return c
}

func (s *mstate) sent(k mchan, t, bytes int64) {
	c := s.touch(k)
	c.send++
	s.counts[k] = c
	if s.ends != nil {
		s.ends(true, k, c.send, t, bytes)
	}
}

func (s *mstate) received(k mchan, t, bytes int64) {
	c := s.touch(k)
	c.recv++
	s.counts[k] = c
	if s.ends != nil {
		s.ends(false, k, c.recv, t, bytes)
	}
}

// maxPosts bounds the requests kept pending under one handle (as the walk does).
const maxPosts = 1 << 16

func (s *mstate) push(h uint64, p mpost) {
	s.next++
	p.seq = s.next
	l := append(s.posts[h], p)
	if len(l) > maxPosts {
		l = l[1:]
	}
	s.posts[h] = l
}

// msgBlock reads one block's events (thread tid's) of rank i as the walk
// does for messages.
func (tl *timeline) msgBlock(s *mstate, i, tid int, evs []trace.Event) {
	r := tl.job.Ranks[i]
	me := int32(r.Header.Rank)
	comm := func(id int32) *trace.GComm {
		if d, ok := r.Comms[int(id)]; ok {
			return tl.w.Comms[d.Key]
		}
		return nil
	}
	ns := func(tick uint64) int64 { return int64(math.Round(tl.w.Ns(i, tick))) }
	for k := range evs {
		e := &evs[k]
		switch e.Kind {
		case trace.KComplete, trace.KPost:
			s.pend[tid] = append(s.pend[tid], *e)
			continue
		case trace.KCall, trace.KRma, trace.KIo:
		default:
			continue
		}
		g := comm(e.Comm)
		t0, t1 := ns(e.T0), ns(e.T1)
		nb := e.Flags&trace.FReq != 0 && e.Req != 0
		var po mpost
		if e.Flags&trace.FSend != 0 && e.SPeer >= 0 {
			if g != nil {
				s.sent(mchan{me, e.SPeer, int32(g.ID), e.STag}, t0, e.SBytes)
			}
			po.send = true
		}
		if e.Flags&trace.FRecv != 0 && e.RPeer != -1 {
			if nb {
				po.recv, po.peer, po.tag, po.comm = true, max(e.RPeer, -1), e.RTag, g
			} else if e.RPeer >= 0 && g != nil {
				s.received(mchan{e.RPeer, me, int32(g.ID), e.RTag}, t1, e.RBytes)
			}
		}
		if nb {
			s.push(e.Req, po)
		}
		var cpl []trace.Event
		for _, p := range s.pend[tid] {
			if p.Kind == trace.KComplete {
				cpl = append(cpl, p)
				continue
			}
			pg := comm(p.Comm)
			var sp mpost
			switch {
			case p.Flags&trace.FColl != 0:
			case p.Flags&trace.FSend != 0 && p.SPeer >= 0:
				if pg != nil {
					s.sent(mchan{me, p.SPeer, int32(pg.ID), p.STag}, t0, p.SBytes)
				}
				sp.send = true
			case p.Flags&trace.FRecv != 0 && p.RPeer != -1:
				sp.recv, sp.peer, sp.tag, sp.comm = true, max(p.RPeer, -1), p.RTag, pg
			}
			s.push(p.Req, sp)
		}
		s.pend[tid] = s.pend[tid][:0]
		// The k completions of a handle take its k latest posts; all
		// are taken in posting order.
		type match struct {
			e *trace.Event
			p mpost
		}
		var matched []match
		seen := map[uint64]int{}
		for j := range cpl {
			seen[cpl[j].Req]++
		}
		for j := range cpl {
			h := cpl[j].Req
			n, ok := seen[h]
			if !ok {
				continue
			}
			delete(seen, h)
			l := s.posts[h]
			n = min(n, len(l))
			took := l[len(l)-n:]
			x := 0
			for y := j; y < len(cpl) && x < len(took); y++ {
				if cpl[y].Req == h {
					matched = append(matched, match{&cpl[y], took[x]})
					x++
				}
			}
			if l = l[:len(l)-n]; len(l) == 0 {
				delete(s.posts, h)
			} else {
				s.posts[h] = l
			}
		}
		slices.SortStableFunc(matched, func(a, b match) int { return cmp.Compare(a.p.seq, b.p.seq) })
		for _, m := range matched {
			p, po := m.e, m.p
			if !po.recv || p.Flags&trace.FRecv != 0 && p.RPeer == trace.Cancelled {
				continue
			}
			peer, tag, bytes := po.peer, po.tag, int64(0)
			isr := po.send && peer >= 0 && tag >= 0
			if p.Flags&trace.FRecv != 0 && p.RPeer >= 0 && !isr {
				src := p.RPeer
				if p.Flags&trace.FLocal != 0 {
					src = -1
					if po.comm != nil && int(p.RPeer) < len(po.comm.World) {
						src = int32(po.comm.World[p.RPeer])
					}
				}
				peer, tag, bytes = src, p.RTag, p.RBytes
			}
			if peer < 0 || po.comm == nil {
				continue
			}
			s.received(mchan{peer, me, int32(po.comm.ID), tag}, t1, bytes)
		}
	}
}

// indexMsgs reads every rank's blocks in file order (the ranks in
// parallel) and gives each block its msnap.
func (tl *timeline) indexMsgs() {
	parallel(len(tl.blocks), func(i int) {
		s := newMstate()
		d := new(trace.BlockDecoder)
		for _, b := range tl.blocks[i] {
			snap := s.begin(nil)
			tid, evs, err := d.Read(tl.job.Ranks[i], b.span)
			if err != nil {
				tl.mu.Lock()
				tl.bad[b] = fmt.Sprintf("%v: the messages of rank %d from there on are not in the timeline", err, tl.ranks[i])
				tl.mu.Unlock()
				return
			}
			tl.msgBlock(s, i, tid, evs)
			b.msg.Store(snap)
		}
	})
}

// startMsgs starts the message index in the background (once).
func (tl *timeline) startMsgs() {
	tl.msgOnce.Do(func() { go tl.indexMsgs() })
}

// windowMsgs adds the messages sent in [t0-(t1-t0), t1) between ranks
// lo..hi-1 that are received from t0 on. It tells false when the index
// has not reached the window's blocks of some rank yet.
func (tl *timeline) windowMsgs(out *Window, lo, hi int, laneOf func(int) int, t0, t1 int64) bool {
	a := t0 - (t1 - t0)
	type end struct {
		rank int32
		t    int64
		b    int64
	}
	type key struct {
		ch  mchan
		seq uint64
	}
	sends, recvs := map[key]end{}, map[key]end{}
	lane := map[int32]int{}
	for i := lo; i < hi; i++ {
		lane[int32(tl.ranks[i])] = laneOf(i)
	}
	d := decoders.Get().(*trace.BlockDecoder)
	defer decoders.Put(d)
	for i := lo; i < hi; i++ {
		bs := tl.blocks[i]
		first, last := -1, -1
		for k, b := range bs {
			if b.t1 >= a && b.t0 < t1 {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		if first < 0 {
			continue
		}
		last = min(last+1, len(bs)-1) // receives completed after the window
		p := bs[first].msg.Load()
		if p == nil {
			return false
		}
		s := &mstate{}
		me := int32(tl.ranks[i])
		s.ends = func(send bool, ch mchan, seq uint64, t, bytes int64) {
			if send {
				if t >= a && t < t1 {
					sends[key{ch, seq}] = end{me, t, bytes}
				}
			} else if t >= t0 {
				recvs[key{ch, seq}] = end{me, t, bytes}
			}
		}
		s.fromSnap(p)
		for k := first; k <= last; k++ {
			q := bs[k].msg.Load()
			if q == nil {
				break // not indexed yet: receives beyond are not known
			}
			s.begin(q)
			tid, evs, err := d.Read(tl.job.Ranks[i], bs[k].span)
			if err != nil {
				break
			}
			tl.msgBlock(s, i, tid, evs)
		}
	}
	var list []tmsg
	for k, s := range sends {
		r, ok := recvs[k]
		if !ok {
			continue
		}
		if _, ok := lane[s.rank]; !ok {
			continue
		}
		if _, ok := lane[r.rank]; !ok {
			continue
		}
		list = append(list, tmsg{from: s.rank, to: r.rank, t0: s.t, t1: r.t, bytes: s.b})
	}
	slices.SortFunc(list, func(x, y tmsg) int {
		return cmp.Or(cmp.Compare(x.t0, y.t0), cmp.Compare(x.from, y.from), cmp.Compare(x.to, y.to), cmp.Compare(x.t1, y.t1))
	})
	for _, m := range list[:min(len(list), tl.detail)] {
		out.Msgs = append(out.Msgs, [5]int64{int64(lane[m.from]), m.t0, int64(lane[m.to]), m.t1, m.bytes})
	}
	return true
}
