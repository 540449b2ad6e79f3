package analyze

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// TestSortParts: sorting a list given in parts is the stable sort of their
// concatenation (ties in the parts' order), for every way of cutting it,
// empty parts included.
func TestSortParts(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 100000} {
		// 150,000: dense keys for 100,000 records (a bucket per key).
		for _, top := range []uint64{^uint64(0), 150000, 1000, 1} {
			a := make([][2]uint64, n)
			x := uint64(n)*2654435761 + top
			for i := range a {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				k := x
				if top != ^uint64(0) {
					k %= top + 1
				}
				a[i] = [2]uint64{k, uint64(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(p, q [2]uint64) int { return cmpU(p[0], q[0]) })
			for _, cuts := range [][]int{{}, {0}, {n / 2}, {n / 3, n / 3, 2 * n / 3}, {1, n / 7, n - 1, n}} {
				var parts [][][2]uint64
				last := 0
				for _, c := range cuts {
					c = min(max(c, last), n)
					parts = append(parts, slices.Clone(a[last:c]))
					last = c
				}
				parts = append(parts, slices.Clone(a[last:]))
				got := sortParts(parts, func(p *[2]uint64) uint64 { return p[0] })
				if !slices.Equal(got, want) {
					t.Errorf("n %d, keys up to %d, cut at %v: not the stable sort of the whole", n, top, cuts)
				}
			}
		}
	}
	// Already in order across the parts: their concatenation.
	parts := [][][2]uint64{{{1, 0}, {2, 1}}, {}, {{2, 2}, {5, 3}}}
	if got := sortParts(parts, func(p *[2]uint64) uint64 { return p[0] }); !slices.Equal(got, [][2]uint64{{1, 0}, {2, 1}, {2, 2}, {5, 3}}) {
		t.Errorf("sorted parts: %v", got)
	}
}

// TestSortPartsAllocs: sortParts compares records in place, never
// through copies (a comparison through key(&x) of a copy x allocates x):
// an unsorted list whose keys crowd into a few buckets (sorted by
// (key, position) pairs), and one of fewer than 64 records (sorted by
// insertion), take a number of allocations that does not grow with the
// records, and keep ties in their order.
func TestSortPartsAllocs(t *testing.T) {
	key := func(p *[2]uint64) uint64 { return p[0] }
	stable := func(a [][2]uint64) [][2]uint64 {
		a = slices.Clone(a)
		slices.SortStableFunc(a, func(p, q [2]uint64) int { return cmpU(p[0], q[0]) })
		return a
	}
	for _, n := range []int{30000, 300000} {
		// Three crowded buckets of 1,000 distinct keys each, in
		// descending order; each key n/3000 times: ties.
		a := make([][2]uint64, n)
		for i := range a {
			a[i] = [2]uint64{uint64(i%3)<<40 | uint64(999-i/3%1000), uint64(i)}
		}
		parts := [][][2]uint64{a[:n/2], a[n/2:]}
		if got := sortParts(parts, key); !slices.Equal(got, stable(a)) {
			t.Fatalf("%d records in crowded buckets: not the stable sort", n)
		}
		// count, out, the buckets' positions, two lists of pairs and the
		// records' copy (per run, in the mean of 10: the runtime's own
		// allocations in a collection do not reach one a run).
		if got := testing.AllocsPerRun(10, func() { sortParts(parts, key) }); got != 6 {
			t.Errorf("%d records in crowded buckets: %v allocations, want 6", n, got)
		}
	}
	small := make([][2]uint64, 63)
	for i := range small {
		small[i] = [2]uint64{uint64(62-i) / 4, uint64(i)}
	}
	want := stable(small)
	buf := make([][2]uint64, len(small))
	parts := [][][2]uint64{buf}
	copy(buf, small)
	if got := sortParts(parts, key); !slices.Equal(got, want) || &got[0] != &buf[0] {
		t.Fatalf("63 records: not the stable sort in place: %v", got)
	}
	// Sorted in place by insertion: none.
	if got := testing.AllocsPerRun(10, func() { copy(buf, small); sortParts(parts, key) }); got != 0 {
		t.Errorf("63 records in one part: %v allocations, want 0", got)
	}
}

// TestReserve: once a rank's first block is read, its pass sizes its
// lists for the whole rank from that block: on a regular trace (the
// synthetic job) no list moves to a larger array afterwards, and none
// holds more than a quarter of spare room at the end, less than append
// would leave (the first block holds a fifth of the rank's events, about
// 380 of a list's: the margin for its share of a shard, 2 % and three
// standard deviations, is 17 %).
func TestReserve(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 2, Events: 300000, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := newRankPass(0, 0, 8)
	type arrays struct{ s, r, c []*byte }
	at := func() (a arrays) {
		for s := range p.sends {
			a.s = append(a.s, first(p.sends[s]))
			a.r = append(a.r, first(p.recvs[s]))
			a.c = append(a.c, first(p.colls[s]))
		}
		return a
	}
	var after *arrays
	blocks := 0
	w := trace.NewWalker(j, trace.WalkOptions{Progress: func(rank int, ev uint64) {
		blocks++
		p.reserve(ev, j.Ranks[0].Events)
		if after == nil {
			a := at()
			after = &a
		}
	}})
	if err := w.WalkRank(0, p); err != nil {
		t.Fatal(err)
	}
	if blocks < 4 || after == nil {
		t.Fatalf("%d blocks: want several", blocks)
	}
	if end := at(); !slices.Equal(end.s, after.s) || !slices.Equal(end.r, after.r) || !slices.Equal(end.c, after.c) {
		t.Errorf("lists moved after the first block")
	}
	var n int
	for s := range p.sends {
		for _, x := range [][2]int{{len(p.sends[s]), cap(p.sends[s])}, {len(p.recvs[s]), cap(p.recvs[s])}, {len(p.colls[s]), cap(p.colls[s])}} {
			n += x[0]
			if x[1] > x[0]+x[0]/4+16 {
				t.Errorf("shard %d: %d records in room for %d", s, x[0], x[1])
			}
		}
	}
	// 15,000 iterations of 10 events on each rank: 2 sends, 2 receives,
	// an MPI_Allreduce, and an MPI_Barrier every 100.
	if n != 15000*5+150 {
		t.Errorf("%d records, want %d", n, 15000*5+150)
	}
}

// first is the address of a list's array (nil when it has none).
func first[T any](a []T) *byte {
	if cap(a) == 0 {
		return nil
	}
	return (*byte)(unsafe.Pointer(&a[:1][0]))
}

// TestMatchFlows: the table pairs the sends and receives a stable merge
// by flow pairs: flows repeated (the k-th send of a flow with its k-th
// receive, in the parts' order), flows on one side only; the counts of
// messages and unmatched ends alike.
func TestMatchFlows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var sendParts [][]sendRec
	var recvParts [][]recvRec
	var times [][]callTimes
	n := 0
	for p := 0; p < 3; p++ {
		var ss []sendRec
		var rs []recvRec
		ts := []callTimes{{}} // the sends' call: not blocking
		for i := 0; i < 400+p*50; i++ {
			n++
			// The send's entry names it, the receive's call number it.
			ss = append(ss, sendRec{flow: uint64(rng.IntN(300)), enter: float64(n)})
			rs = append(rs, recvRec{flow: uint64(rng.IntN(300) + 20), tix: uint32(len(ts))})
			ts = append(ts, callTimes{t0: 0, t1: 1e9, call: uint32(n), blocking: true})
		}
		sendParts, recvParts, times = append(sendParts, ss), append(recvParts, rs), append(times, ts)
	}
	// The reference: both sides sorted stably by flow, merged.
	var sends []sendRec
	type recvCall struct {
		flow uint64
		call uint32
	}
	var recvs []recvCall
	for p := range sendParts {
		sends = append(sends, sendParts[p]...)
		for _, r := range recvParts[p] {
			recvs = append(recvs, recvCall{r.flow, times[p][r.tix].call})
		}
	}
	slices.SortStableFunc(sends, func(a, b sendRec) int { return cmpU(a.flow, b.flow) })
	slices.SortStableFunc(recvs, func(a, b recvCall) int { return cmpU(a.flow, b.flow) })
	var want [][2]float64 // (send's entry, receive's call)
	var wantSt matchStats
	for i, j := 0, 0; i < len(sends) || j < len(recvs); {
		switch {
		case j == len(recvs) || i < len(sends) && sends[i].flow < recvs[j].flow:
			wantSt.unmatched++
			i++
		case i == len(sends) || sends[i].flow > recvs[j].flow:
			wantSt.unmatched++
			j++
		default:
			wantSt.messages++
			want = append(want, [2]float64{sends[i].enter, float64(recvs[j].call)})
			i++
			j++
		}
	}
	var out candOut
	var st matchStats
	matchFlows(sendParts, recvParts, times, &st, &out)
	var got [][2]float64
	for _, c := range out.flat {
		if c.pattern != LateSender {
			t.Fatalf("pattern %v", c.pattern)
		}
		got = append(got, [2]float64{c.waitReady, float64(c.call)})
	}
	slices.SortFunc(want, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	slices.SortFunc(got, func(a, b [2]float64) int { return cmp.Compare(a[0], b[0]) })
	if st != wantSt || !slices.Equal(got, want) {
		t.Fatalf("stats %+v, %d pairs; want %+v, %d pairs", st, len(got), wantSt, len(want))
	}
	if wantSt.messages < 800 || wantSt.unmatched < 100 {
		t.Fatalf("the fixture pairs %d and leaves %d: too few of either", wantSt.messages, wantSt.unmatched)
	}
}
