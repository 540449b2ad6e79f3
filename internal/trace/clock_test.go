package trace

import "testing"

// TestHostClocks: ranks on rank 0's host use rank 0's conversion (offset
// 0, whatever their own samples say); ranks of another host share the
// conversion of that host's rank with the quickest samples.
func TestHostClocks(t *testing.T) {
	mk := func(rank int, host string, off int64, rtt uint64) *Rank {
		return &Rank{Header: &Header{Rank: rank, Host: host, Timer: "tsc"},
			Calib: Calib{Tick0: 0, Ns0: uint64(1000 * rank), NsPerTick: 1},
			Syncs: []Sync{{LocalNs: 0, OffsetNs: off, RTTNs: rtt}}}
	}
	j := &Job{Ranks: []*Rank{mk(0, "a", 0, 0), mk(1, "a", 700, 2000), mk(2, "b", 5000, 3000), mk(3, "b", 5400, 1000)}}
	w := NewWalker(j, WalkOptions{})
	ns := func(r int) float64 { return w.Clocks[r].Ns(1_000_000) }
	if ns(1) != ns(0) {
		t.Errorf("rank 1 (rank 0's host): %v, rank 0: %v; want equal", ns(1), ns(0))
	}
	if ns(2) != ns(3) || ns(3) != 1_000_000+3000+5400 {
		t.Errorf("ranks 2 and 3 (host b): %v and %v, want both %v (rank 3's samples)", ns(2), ns(3), 1_000_000+3000+5400)
	}
}

// TestRepair: rank 1 (another host) receives a message 100 ns before rank 0
// began sending it, as a clock sample off by more than the message's
// latency would show; the walker shifts host b's clock by exactly what the
// messages require (the reply's slack allows it) and rank 0 stays put.
func TestRepair(t *testing.T) {
	job := t.TempDir()
	synthRank(t, job, 0, 2, []Event{send(0, 1000, 1300, 1, 1, 8), recv(1, 2100, 2600, 1, 2, 8)}, 10, nil, true)
	synthRank(t, job, 1, 2, []Event{recv(1, 500, 900, 0, 1, 8), send(0, 2000, 2100, 0, 2, 8)}, 10, nil, true)
	j, err := OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	j.Ranks[1].Header.Host = "b"
	sent, recvd := map[uint64]float64{}, map[uint64]float64{}
	w := NewWalker(j, WalkOptions{})
	if err := w.Walk(callVisitor(func(c *Call) error {
		if c.Send != nil {
			sent[c.Send.Flow] = c.T0
		}
		if c.Recv != nil {
			recvd[c.Recv.Flow] = c.T1
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	if w.Warning != "" || w.Clocks[0].Shift != 0 || w.Clocks[1].Shift != 100 {
		t.Fatalf("shifts %v, %v (warning %q), want 0 and 100", w.Clocks[0].Shift, w.Clocks[1].Shift, w.Warning)
	}
	if len(sent) != 2 || len(recvd) != 2 {
		t.Fatalf("%d sends, %d receives, want 2 and 2", len(sent), len(recvd))
	}
	for id, s := range sent {
		if r, ok := recvd[id]; !ok || r < s {
			t.Errorf("message %x: received %v (found %v), sent %v", id, r, ok, s)
		}
	}
	// The repair holds at most MaxOpen messages open: with 1, the second
	// of two messages 0 -> 1 (the one received "early") is not seen.
	job3 := t.TempDir()
	synthRank(t, job3, 0, 2, []Event{send(0, 1000, 1300, 1, 1, 8), send(0, 3000, 3100, 1, 1, 8)}, 10, nil, true)
	synthRank(t, job3, 1, 2, []Event{recv(1, 1200, 1500, 0, 1, 8), recv(1, 2500, 2900, 0, 1, 8)}, 10, nil, true)
	j3, _ := OpenJob(job3)
	j3.Ranks[1].Header.Host = "b"
	if w := NewWalker(j3, WalkOptions{}); w.Clocks[1].Shift != 100 {
		t.Errorf("two messages: shift %v, want 100", w.Clocks[1].Shift)
	}
	if w := NewWalker(j3, WalkOptions{MaxOpen: 1}); w.Clocks[1].Shift != 0 {
		t.Errorf("MaxOpen 1: shift %v, want 0 (the second message not held)", w.Clocks[1].Shift)
	}
	// On one host nothing moves: the clock is shared.
	j.Ranks[1].Header.Host = "h"
	if w := NewWalker(j, WalkOptions{}); w.Clocks[1].Shift != 0 {
		t.Errorf("same host: shift %v, want 0", w.Clocks[1].Shift)
	}
	// Inconsistent messages (each direction needs the other clock ahead)
	// leave the clocks alone, with a warning.
	job2 := t.TempDir()
	synthRank(t, job2, 0, 2, []Event{send(0, 1000, 1300, 1, 1, 8), recv(1, 2100, 2200, 1, 2, 8)}, 10, nil, true)
	synthRank(t, job2, 1, 2, []Event{recv(1, 500, 900, 0, 1, 8), send(0, 2300, 2400, 0, 2, 8)}, 10, nil, true)
	j2, _ := OpenJob(job2)
	j2.Ranks[1].Header.Host = "b"
	if w := NewWalker(j2, WalkOptions{}); w.Warning == "" || w.Clocks[1].Shift != 0 {
		t.Errorf("inconsistent: shift %v, warning %q", w.Clocks[1].Shift, w.Warning)
	}
}

// TestRecvOrder checks that received messages are numbered per channel in
// posting order, whatever the completion order.
func TestRecvOrder(t *testing.T) {
	a := chanKey{1, 0, "world", 5}
	b := chanKey{2, 0, "world", 5}
	o := newRecvOrder()
	r1 := o.post(a)        // Irecv from 1 tag 5
	r2 := o.post(wildcard) // Irecv any source
	r3 := o.post(a)        // Irecv from 1 tag 5
	// Completed in reverse order: r3 still takes the second message of a
	// (r1 posted before it on a), the wildcard r2 the first of b, a
	// blocking receive on a then the third, r1 the first.
	for i, c := range []struct {
		pi   uint64
		k    chanKey
		want uint64
	}{{r3, a, 2}, {r2, b, 1}, {0, a, 3}, {r1, a, 1}, {0, a, 4}, {0, b, 2}} {
		if got := o.complete(c.pi, c.k); got != c.want {
			t.Errorf("completion %d: seq %d, want %d", i, got, c.want)
		}
	}
	if ca := o.chans[a]; len(o.pending) != 0 || len(ca.done) > 1 || ca.base+uint64(len(ca.done)) != 4 {
		t.Errorf("state kept after every receive completed: %d pending, %v done, base %d", len(o.pending), o.chans[a].done, o.chans[a].base)
	}
	// A receive never completed stops holding the others after max posts.
	o = newRecvOrder()
	o.max = 10
	o.post(a)
	for i := 0; i < 100; i++ {
		o.complete(0, b)
	}
	if n := len(o.chans[b].done); n > 10 {
		t.Errorf("%d completed receives held by one never completed", n)
	}
	if got := o.complete(0, b); got != 101 {
		t.Errorf("seq %d, want 101", got)
	}
	// A cancelled receive is forgotten.
	o = newRecvOrder()
	r := o.post(a)
	o.cancel(r)
	if got := o.complete(0, a); got != 1 {
		t.Errorf("after a cancelled receive: seq %d, want 1", got)
	}
}
