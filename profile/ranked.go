package profile

import (
	"cmp"
	"slices"
	"strings"
)

// RankFunc is one rank's calls of one MPI function on one communicator:
// the per-rank split that Func (a total and a spread over ranks) and Comm
// (a total over functions) do not keep. Only pairs the rank called are
// present (sparse: ranks x functions called x communicators used).
type RankFunc struct {
	Rank   int
	Func   string
	Comm   string // communicator key, "" for calls without one (MPI_Wait, ...)
	Calls  int64
	TimeNs int64
	Bytes  int64
}

// CommPeer is the point-to-point traffic of Rank with Peer on one
// communicator other than MPI_COMM_WORLD, as seen by Rank: the split of
// Peer by communicator. Rank and Peer are MPI_COMM_WORLD ranks (the
// communicator's ranks translated); Comm is the communicator's key. The
// traffic on MPI_COMM_WORLD itself is Peer minus the CommPeers of the pair.
type CommPeer struct {
	Rank      int
	Comm      string
	Peer      int
	SentMsgs  int64
	SentBytes int64
	RecvMsgs  int64
	RecvBytes int64
}

// SplitRanks is the largest job whose split is kept per rank; beyond it
// ranks are summed in blocks (SplitBlocks), so that the split's size does
// not grow with the ranks: at most about 1,024 blocks x functions x
// communicators, and 128 x 128 blocks per communicator.
const SplitRanks = 4096

// SplitBlocks returns the ranks per RankFunc and per CommPeer entry of a
// job of numRanks ranks: 1 up to SplitRanks, else ceil(numRanks/1024)
// and ceil(numRanks/128) (the HTML report's heat-map blocks).
func SplitBlocks(numRanks int) (funcBlock, peerBlock int) {
	if numRanks <= SplitRanks {
		return 1, 1
	}
	return (numRanks + 1023) / 1024, (numRanks + 127) / 128
}

// Section tags of the per-rank splits (docs/format.md). They leave room
// below for sections other branches of the format add.
const (
	secRankFuncs = 40
	secCommPeers = 41
)

func cmpRankFunc(a, b *RankFunc) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Func, b.Func), strings.Compare(a.Comm, b.Comm))
}

func cmpCommPeer(a, b *CommPeer) int {
	return cmp.Or(cmp.Compare(a.Rank, b.Rank), strings.Compare(a.Comm, b.Comm), cmp.Compare(a.Peer, b.Peer))
}

func addRankFunc(a, b *RankFunc) {
	a.Calls += b.Calls
	a.TimeNs += b.TimeNs
	a.Bytes += b.Bytes
}

func addCommPeer(a, b *CommPeer) {
	a.SentMsgs += b.SentMsgs
	a.SentBytes += b.SentBytes
	a.RecvMsgs += b.RecvMsgs
	a.RecvBytes += b.RecvBytes
}

// rankList accumulates a rank-keyed list. Rank profiles (and the partial
// merges of a tree reduction) arrive with increasing, disjoint ranks: their
// entries are appended and nothing is indexed, so a merge costs one copy of
// its inputs. Only when an input overlaps or comes out of order is the list
// sorted and equal keys combined, once, in result.
type rankList[T any] struct {
	list   []T
	sorted bool // list is strictly increasing by key
}

func (r *rankList[T]) add(l []T, cmpf func(a, b *T) int) {
	if len(r.list) == 0 {
		r.sorted = true
	}
	for i := range l {
		if r.sorted && len(r.list) > 0 && cmpf(&r.list[len(r.list)-1], &l[i]) >= 0 {
			r.sorted = false
		}
		r.list = append(r.list, l[i])
	}
}

func (r *rankList[T]) result(cmpf func(a, b *T) int, merge func(a, b *T)) []T {
	if len(r.list) == 0 {
		return nil
	}
	if r.sorted {
		return r.list
	}
	slices.SortStableFunc(r.list, func(a, b T) int { return cmpf(&a, &b) })
	out := r.list[:1]
	for i := 1; i < len(r.list); i++ {
		if last := &out[len(out)-1]; cmpf(last, &r.list[i]) == 0 {
			merge(last, &r.list[i])
		} else {
			out = append(out, r.list[i])
		}
	}
	return out
}

func (e *encoder) rankFuncs(block int, l []RankFunc) {
	e.uvarint(uint64(max(block, 1)))
	e.uvarint(uint64(len(l)))
	prev := int64(0)
	for i := range l {
		f := &l[i]
		e.varint(int64(f.Rank) - prev)
		prev = int64(f.Rank)
		e.str(f.Func)
		e.str(f.Comm)
		e.varint(f.Calls)
		e.varint(f.TimeNs)
		e.varint(f.Bytes)
	}
}

func (e *encoder) commPeers(block int, l []CommPeer) {
	e.uvarint(uint64(max(block, 1)))
	e.uvarint(uint64(len(l)))
	prev := int64(0)
	for i := range l {
		q := &l[i]
		e.varint(int64(q.Rank) - prev)
		prev = int64(q.Rank)
		e.str(q.Comm)
		e.varint(int64(q.Peer) - int64(q.Rank))
		e.varint(q.SentMsgs)
		e.varint(q.SentBytes)
		e.varint(q.RecvMsgs)
		e.varint(q.RecvBytes)
	}
}

// rank reads a rank coded as a delta from prev, checking its range.
func (d *decoder) deltaRank(prev int64) (int64, bool) {
	off := d.pos
	r := prev + d.varint()
	if int64(int(r)) != r {
		d.fail(off, "rank out of range in %s", d.ctx)
		return 0, false
	}
	return r, true
}

// block reads a section's ranks per entry (at least 1).
func (d *decoder) block() int {
	off := d.pos
	b := d.uvarint()
	if d.err == nil && (b == 0 || b > 1<<31) {
		d.fail(off, "ranks per entry %d out of range in %s", b, d.ctx)
	}
	return int(b)
}

func (d *decoder) rankFuncs(dst []RankFunc) (int, []RankFunc) {
	block := d.block()
	n := d.count("rank function", 6)
	if n == 0 {
		return block, nil
	}
	l := reuse(dst, n)
	prev := int64(0)
	for i := 0; i < n && d.err == nil; i++ {
		f := &l[i]
		r, ok := d.deltaRank(prev)
		if !ok {
			break
		}
		prev = r
		f.Rank = int(r)
		f.Func = d.str()
		f.Comm = d.str()
		f.Calls = d.varint()
		f.TimeNs = d.varint()
		f.Bytes = d.varint()
	}
	return block, l
}

func (d *decoder) commPeers(dst []CommPeer) (int, []CommPeer) {
	block := d.block()
	n := d.count("communicator peer", 7)
	if n == 0 {
		return block, nil
	}
	l := reuse(dst, n)
	prev := int64(0)
	for i := 0; i < n && d.err == nil; i++ {
		q := &l[i]
		r, ok := d.deltaRank(prev)
		if !ok {
			break
		}
		prev = r
		q.Rank = int(r)
		q.Comm = d.str()
		peer, ok := d.deltaRank(r)
		if !ok {
			break
		}
		q.Peer = int(peer)
		q.SentMsgs = d.varint()
		q.SentBytes = d.varint()
		q.RecvMsgs = d.varint()
		q.RecvBytes = d.varint()
	}
	return block, l
}

// RankFuncsOf returns the entries of rank in p.RankFuncs (sorted), a
// subslice of it: those of its block when entries are blocks of ranks.
func (p *Profile) RankFuncsOf(rank int) []RankFunc {
	if b := p.RankFuncBlock; b > 1 {
		rank = rank / b * b
	}
	lo, _ := slices.BinarySearchFunc(p.RankFuncs, rank, func(f RankFunc, r int) int { return cmp.Compare(f.Rank, r) })
	hi := lo
	for hi < len(p.RankFuncs) && p.RankFuncs[hi].Rank == rank {
		hi++
	}
	return p.RankFuncs[lo:hi]
}
