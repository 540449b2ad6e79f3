package trace

import (
	"math/rand"
	"testing"
)

// TestRecvOrderModel checks the receive order's numbers against its
// definition, counted from every receive posted (2026-11-28: complete
// counts the oldest pending receive into base directly): a receive's
// number on its channel is 1 + the receives of that channel posted before
// it that completed on it, or are still pending with the channel fixed at
// posting. Random posts (some wildcards), completions in any order,
// cancellations and blocking receives on 3 channels.
func TestRecvOrderModel(t *testing.T) {
	type rcv struct {
		bound   int // channel fixed at posting, -1 wildcard
		done    int // channel completed on, -1 not (yet)
		pending bool
	}
	chans := []chanKey{{1, 0, 0, 5}, {2, 0, 0, 5}, {1, 0, 0, 6}}
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		o := newRecvOrder()
		var all []rcv // index pi-1
		var live []uint64
		fast := 0
		for step := 0; step < 300; step++ {
			switch x := rng.Intn(10); {
			case x < 4: // post
				b := rng.Intn(len(chans)+1) - 1
				k := wildcard
				if b >= 0 {
					k = chans[b]
				}
				pi := o.post(k)
				if pi != uint64(len(all)+1) {
					t.Fatalf("seed %d: post index %d, want %d", seed, pi, len(all)+1)
				}
				all = append(all, rcv{bound: b, done: -1, pending: true})
				live = append(live, pi)
			case x < 8 && len(live) > 0 || x == 8: // complete a pending one, or a blocking receive
				var pi uint64
				c := rng.Intn(len(chans))
				if x == 8 {
					all = append(all, rcv{bound: -1, done: -1, pending: true})
				} else {
					j := rng.Intn(len(live))
					if rng.Intn(3) > 0 {
						j = 0 // mostly the oldest
					}
					pi = live[j]
					live = append(live[:j], live[j+1:]...)
					if b := all[pi-1].bound; b >= 0 {
						c = b // a receive bound at posting completes on its channel
					}
				}
				if pi == 0 || pi == live0(live, pi) {
					fast++
				}
				seq, ch := o.complete(pi, chans[c])
				if pi == 0 {
					pi = uint64(len(all))
				}
				want := uint64(1)
				for q := uint64(1); q < pi; q++ {
					r := all[q-1]
					if r.done == c || r.pending && r.bound == c {
						want++
					}
				}
				all[pi-1].done, all[pi-1].pending = c, false
				if seq != want || ch.h != flowHash(chans[c]) {
					t.Fatalf("seed %d step %d: receive %d on channel %d numbered %d, want %d", seed, step, pi, c, seq, want)
				}
			case len(live) > 0: // cancel
				j := rng.Intn(len(live))
				pi := live[j]
				live = append(live[:j], live[j+1:]...)
				o.cancel(pi)
				all[pi-1].pending = false
			}
		}
		if fast == 0 {
			t.Fatalf("seed %d: no receive completed as the oldest pending", seed)
		}
	}
}

// live0 is pi when no receive of live is older than it, else 0.
func live0(live []uint64, pi uint64) uint64 {
	for _, q := range live {
		if q < pi {
			return 0
		}
	}
	return pi
}

// TestPostTableCache takes and reuses handles beyond the table's 4,096
// (where an emptied handle leaves the map): its cache in front of the map
// (2026-11-28) must not hand back a slice the map no longer holds.
func TestPostTableCache(t *testing.T) {
	pt := postTable{m: map[uint64]*[]*post{}}
	posts := make([]post, 6000)
	for i := range posts {
		pt.push(uint64(i+1), &posts[i])
	}
	var took []*post
	for i := range posts {
		if took = pt.take(uint64(i+1), 1, took[:0]); len(took) != 1 || took[0] != &posts[i] {
			t.Fatalf("handle %d: took %v, want its post", i+1, took)
		}
	}
	var again post
	pt.push(7, &again)
	pt.push(7, &posts[0])
	if took = pt.take(7, 2, took[:0]); len(took) != 2 || took[0] != &again || took[1] != &posts[0] {
		t.Fatalf("handle 7 reused: took %v, want its two posts oldest first", took)
	}
	if took = pt.take(7, 1, took[:0]); len(took) != 0 {
		t.Fatalf("handle 7 emptied: took %d posts", len(took))
	}
	if len(pt.m) > 4096 {
		t.Fatalf("%d handles left in the map after all were taken", len(pt.m))
	}
}

// TestFnvMix: the unrolled FNV-1a step (2026-11-28) against FNV-1a byte
// by byte, low byte first: flow ids are in converted traces.
func TestFnvMix(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 1000; i++ {
		h, v := rng.Uint64(), rng.Uint64()
		if i == 0 {
			h, v = 14695981039346656037, 0xff00ff00ff00ff00
		}
		want := h
		for b := 0; b < 8; b++ {
			want = (want ^ v>>(8*b)&0xff) * fnvPrime
		}
		if got := fnvMix(h, v); got != want {
			t.Fatalf("fnvMix(%#x, %#x) = %#x, want %#x", h, v, got, want)
		}
	}
	if got := flowID(chanKey{1, 0, 0, 5}, 1); got != 0xd7fedb42576af951 {
		t.Errorf("flowID of (1, 0, 0, 5) #1: %#x", got)
	}
}

// TestMsgPosted: a completed nonblocking message carries the entry of the
// call that posted it (Msg.Posted, 2026-11-28), on a synthetic job whose
// receives and sends are posted a call before their MPI_Waitall.
func TestMsgPosted(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSynth(dir, SynthSpec{Ranks: 3, Events: 3000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	j, err := OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWalker(j, WalkOptions{})
	posted := map[[2]uint64]float64{} // (rank, request id) -> posting call's entry
	var sends, recvs int
	if err := w.Walk(callVisitor(func(c *Call) error {
		r := uint64(c.Rank)
		for _, m := range []*Msg{c.Send, c.RecvPost} {
			if m != nil && m.Req != 0 {
				posted[[2]uint64{r, m.Req}] = c.T0
			}
		}
		for i, done := range [][]Msg{c.SendDone, c.RecvDone} {
			for _, m := range done {
				want, ok := posted[[2]uint64{r, m.Req}]
				if !ok || m.Posted != want || m.Posted == 0 {
					t.Fatalf("rank %d, %s request %d completed in %s: posted at %v, want %v (found %v)", c.Rank, [2]string{"send", "receive"}[i], m.Req, c.Fn, m.Posted, want, ok)
				}
				if i == 0 {
					sends++
				} else {
					recvs++
				}
			}
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if sends == 0 || recvs == 0 {
		t.Fatalf("%d sends and %d receives completed, want some of each", sends, recvs)
	}
}
