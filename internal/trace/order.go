package trace

// recvOrder numbers a rank's received messages per channel (source,
// communicator, tag) in the order MPI matches them, so that the n-th
// receive of a channel pairs with the n-th send of it (a flow id both ends
// compute alone).
//
// MPI matches receives in the order they were posted, not the order they
// complete: of two receives that both take messages of one channel, the
// one posted first gets the message sent first (the non-overtaking rule).
// A receive's number is therefore 1 + the receives of its channel posted
// before it: those already completed on the channel, and those still
// pending whose source and tag fix the channel at posting. A wildcard
// receive posted earlier that is still pending when a later one completes
// cannot be placed (its channel is not known yet); this order then
// assumes it takes a later message.
//
// Memory: completed receives are kept per channel only while a receive
// posted before them is pending; a receive left pending for more than
// maxPending later posts (never waited for) stops holding them back.
type recvOrder struct {
	next uint64 // post index of the next receive (1-based)
	// fifo holds the receives posted from post index first on, oldest
	// first from head (post indices are consecutive: one entry each;
	// those completed are marked, pruned lazily from the head).
	fifo  []pendingRecv
	first uint64
	head  int
	chans map[chanKey]*chanOrder
	cache chanCache[*chanOrder] // in front of chans: no hashing of a 32-byte key per message
	max   uint64
}

// pendingRecv is a posted receive in the fifo: its channel (nil: a
// wildcard), and whether it is still pending.
type pendingRecv struct {
	c    *chanOrder
	live bool
}

type chanOrder struct {
	base    uint64   // completed receives no longer held
	done    []uint64 // post indices of completed receives, sorted
	waiting []uint64 // post indices of pending receives bound to this channel, sorted
	h       uint64   // flowID's hash of the channel (flowHash)
	k       chanKey  // the channel
}

// maxPending bounds how long a pending receive holds completed ones.
const maxPending = 1 << 16

// wildcard marks a pending receive whose channel is not known at posting.
var wildcard = chanKey{src: -1}

func newRecvOrder() *recvOrder {
	return &recvOrder{first: 1, chans: map[chanKey]*chanOrder{}, max: maxPending}
}

func (o *recvOrder) ch(k chanKey) *chanOrder {
	e := o.cache.slot(k)
	if e.v != nil && e.k == k {
		return e.v
	}
	c := o.chans[k]
	if c == nil {
		c = &chanOrder{h: flowHash(k), k: k}
		o.chans[k] = c
	}
	e.k, e.v = k, c
	return c
}

// chanCache is a direct-mapped cache of a walk's channels: a rank talks
// on a few channels over and over, and a compare of the key costs less
// than the map's hash of it. An entry whose v is the zero value is empty.
type chanCache[V comparable] struct {
	e [256]chanEntry[V]
}

type chanEntry[V comparable] struct {
	k chanKey
	v V
}

// slot is k's entry (holding k or another key): the fields in pairs of
// 32 bits, each pair times a large odd number, the top byte of their sum.
func (c *chanCache[V]) slot(k chanKey) *chanEntry[V] {
	h := (uint64(k.src)<<32^uint64(uint32(k.dst)))*0x9e3779b97f4a7c15 + (uint64(k.comm)<<32^uint64(uint32(k.tag)))*0xc2b2ae3d27d4eb4f
	return &c.e[h>>56]
}

// post registers a receive; k is its channel when source and tag are
// given (else wildcard). It returns the receive's post index.
func (o *recvOrder) post(k chanKey) uint64 {
	o.next++
	pi := o.next
	if o.head > 0 && o.head == len(o.fifo) {
		o.first += uint64(o.head) // empty: reuse the array
		o.fifo, o.head = o.fifo[:0], 0
	} else if o.head >= 1024 && o.head*2 >= len(o.fifo) {
		o.fifo = o.fifo[:copy(o.fifo, o.fifo[o.head:])]
		o.first += uint64(o.head)
		o.head = 0
	}
	var c *chanOrder
	if k != wildcard {
		c = o.ch(k)
		c.waiting = append(c.waiting, pi)
	}
	o.fifo = append(o.fifo, pendingRecv{c: c, live: true})
	return pi
}

// at returns the fifo entry of post index pi, nil when it is no longer
// there (pruned) or was never posted.
func (o *recvOrder) at(pi uint64) *pendingRecv {
	if pi < o.first+uint64(o.head) || pi-o.first >= uint64(len(o.fifo)) {
		return nil
	}
	return &o.fifo[pi-o.first]
}

// watermark is the oldest post index still pending (next+1 when none).
func (o *recvOrder) watermark() uint64 {
	for o.head < len(o.fifo) {
		h := o.first + uint64(o.head)
		ok := o.fifo[o.head].live
		if ok && o.next-h < o.max {
			return h
		}
		if ok {
			o.drop(h) // never completed: stop holding the others back
		}
		o.head++
	}
	return o.next + 1
}

func (o *recvOrder) drop(pi uint64) {
	p := o.at(pi)
	if p == nil || !p.live {
		return
	}
	p.live = false
	if c := p.c; c != nil {
		if n := len(c.waiting) - 1; n >= 0 && c.waiting[n] == pi {
			c.waiting = c.waiting[:n] // the latest of its channel (usual)
		} else if i := search(c.waiting, pi); i < len(c.waiting) && c.waiting[i] == pi {
			c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
		}
	}
}

// search is the index of the first element of sorted a that is >= x.
func search(a []uint64, x uint64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] < x {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// complete gives the receive posted as pi, completed on channel k, its
// sequence number on k (1-based), and the channel (flowHash in its h).
// pi 0 is a receive posted and completed at once (blocking).
func (o *recvOrder) complete(pi uint64, k chanKey) (uint64, *chanOrder) {
	var c *chanOrder
	if pi == 0 {
		pi = o.post(wildcard)
	} else if p := o.at(pi); p != nil && p.c != nil && p.c.k == k {
		c = p.c // the channel it was posted on (no lookup)
	}
	if c == nil {
		c = o.ch(k)
	}
	// Completed receives older than every pending one (this one
	// included) count for every later query: fold them into base.
	w := o.watermark()
	if n := search(c.done, w); n > 0 {
		c.base += uint64(n)
		c.done = append(c.done[:0], c.done[n:]...)
	}
	if w == pi && (len(c.done) == 0 || c.done[0] > pi) {
		// The oldest receive pending (the usual case): none of its
		// channel pending or completed before it is left unfolded, and
		// once it is dropped every later query folds it into base: count
		// it there now instead of holding it in done.
		o.drop(pi)
		c.base++
		return c.base, c
	}
	o.drop(pi)
	i := search(c.done, pi)
	seq := c.base + uint64(i) + uint64(search(c.waiting, pi)) + 1
	c.done = append(c.done, 0)
	copy(c.done[i+1:], c.done[i:])
	c.done[i] = pi
	return seq, c
}

// cancel forgets a receive that completed without a message.
func (o *recvOrder) cancel(pi uint64) { o.drop(pi) }
