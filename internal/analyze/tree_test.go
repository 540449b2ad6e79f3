package analyze

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// treeComm is a chanComm that records its point-to-point messages and
// tokens (in each sender's order) and can corrupt a received message:
// bad(src, dst, n, b), n counting the messages from src to dst from 0,
// returns what the receiver gets (b itself: unchanged).
type treeComm struct {
	chanComm
	t *treeLog
}

type treeLog struct {
	mu   sync.Mutex
	msgs []spyMsg
	toks [][2]int // token messages: source, destination
	n    map[[2]int]int
	bad  func(src, dst, n int, b []byte) []byte
	a2a  []int // each rank's exchanges
	badX func(src, dst, k int, b []byte) []byte
}

func (c treeComm) Send(dest int, data []byte) error {
	c.t.mu.Lock()
	c.t.msgs = append(c.t.msgs, spyMsg{c.rank, dest, slices.Clone(data)})
	c.t.mu.Unlock()
	return c.chanComm.Send(dest, data)
}

func (c treeComm) Recv(src int) ([]byte, error) {
	b, err := c.chanComm.Recv(src)
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	k := [2]int{src, c.rank}
	n := c.t.n[k]
	c.t.n[k]++
	if c.t.bad != nil {
		b = c.t.bad(src, c.rank, n, b)
	}
	return b, err
}

// Alltoallv counts this rank's exchanges and lets badX corrupt what it
// receives (k: the exchange's number on this rank, from 0).
func (c treeComm) Alltoallv(out [][]byte) ([][]byte, error) {
	in, err := c.chanComm.Alltoallv(out)
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.t.a2a == nil {
		c.t.a2a = make([]int, c.net.size)
	}
	k := c.t.a2a[c.rank]
	c.t.a2a[c.rank]++
	if c.t.badX != nil {
		for s := range in {
			in[s] = c.t.badX(s, c.rank, k, in[s])
		}
	}
	return in, err
}

func (c treeComm) SendToken(dest int, m [3]uint64) error {
	c.t.mu.Lock()
	c.t.toks = append(c.t.toks, [2]int{c.rank, dest})
	c.t.mu.Unlock()
	return c.chanComm.SendToken(dest, m)
}

// onTree runs f on every rank of a job of size goroutines through
// treeComm; it fails the test when a rank has not returned after 20
// seconds (a rank left waiting), and when a message sent was never
// received (its sender would be left blocked in MPI).
func onTree(t *testing.T, size int, bad func(src, dst, n int, b []byte) []byte, f func(r int, c Comm) error) ([]error, *treeLog) {
	t.Helper()
	return onTreeWith(t, size, &treeLog{n: map[[2]int]int{}, bad: bad}, f)
}

// onTreeWith is onTree with the log lg.
func onTreeWith(t *testing.T, size int, lg *treeLog, f func(r int, c Comm) error) ([]error, *treeLog) {
	t.Helper()
	net := newChanNet(size)
	done := make(chan []error, 1)
	go func() {
		done <- onRanks(net, func(r int, c chanComm) error { return f(r, treeComm{c, lg}) })
	}()
	select {
	case errs := <-done:
		for s := range size {
			for d := range size {
				if n := len(net.p2p[s][d]); n > 0 {
					t.Errorf("%d ranks: %d messages from rank %d to %d never received", size, n, s, d)
				}
			}
			if n := len(net.token[s]); n > 0 {
				t.Errorf("%d ranks: %d tokens to rank %d never received", size, n, s)
			}
		}
		return errs, lg
	case <-time.After(20 * time.Second):
		t.Fatalf("%d ranks: a rank is still waiting after 20 s", size)
		return nil, nil
	}
}

// onTreeX is onTree with badX corrupting the exchanges' messages.
func onTreeX(t *testing.T, size int, badX func(src, dst, k int, b []byte) []byte, f func(r int, c Comm) error) ([]error, *treeLog) {
	t.Helper()
	return onTreeWith(t, size, &treeLog{n: map[[2]int]int{}, badX: badX}, f)
}

var treeSizes = []int{1, 2, 3, 5, 8, 32}

// lastHop is the most sends, one after the other, before a rank has the
// root's message down the tree: each rank's sends in the log's order (a
// child's message leaves after those to the children before it).
func lastHop(msgs []spyMsg, size int) int {
	at := make([]int, size)
	sent := make([]int, size)
	most := 0
	for _, m := range msgs {
		sent[m.src]++
		at[m.dst] = at[m.src] + sent[m.src]
		most = max(most, at[m.dst])
	}
	return most
}

// TestTreeShape: allReduce, reduceTo0 and treeTokens at 1, 2, 3, 5, 8 and
// 32 ranks use the one binomial tree (tree.go): up, each rank r > 0
// sends exactly one message, to r without its lowest set bit, after
// receiving its children's (r + b for the powers of two b below that
// bit) smallest first; down, the same pairs the other way, each rank
// sending to its children largest first, so that the last rank has the
// root's message after ceil(log2 P) sends one after the other (smallest
// first would take 1 + 2 + ... + ceil(log2 P): 15 at 32 ranks). P - 1
// messages each way. The merge sees the ranks in order.
func TestTreeShape(t *testing.T) {
	for _, size := range treeSizes {
		depth := bits.Len(uint(size - 1))
		// allReduce of the ranks' lists: their concatenation, in rank
		// order, on every rank.
		outs := make([][]int, size)
		errs, lg := onTree(t, size, nil, func(r int, c Comm) error {
			v := []int{r}
			return allReduce(c, &v, &outs[r], func(a, b *[]int) { *a = append(*a, *b...) })
		})
		want := make([]int, size)
		for r := range want {
			want[r] = r
		}
		for r := range size {
			if errs[r] != nil || !slices.Equal(outs[r], want) {
				t.Errorf("%d ranks: rank %d: %v, %v; want %v", size, r, outs[r], errs[r], want)
			}
		}
		if len(lg.msgs) != 2*(size-1) {
			t.Errorf("%d ranks: allReduce sent %d messages, want %d", size, len(lg.msgs), 2*(size-1))
		}
		// The first P - 1 are the reduction's: the end of each up
		// message is the flag 0.
		up, down := make([]int, size), make([]int, size)
		var downs []spyMsg
		for _, m := range lg.msgs {
			switch {
			case m.src != 0 && m.dst == treeParent(m.src):
				up[m.src]++
			case m.dst != 0 && m.src == treeParent(m.dst):
				down[m.dst]++
				downs = append(downs, m)
			default:
				t.Errorf("%d ranks: a message from rank %d to %d: not on the tree", size, m.src, m.dst)
			}
		}
		for r := 1; r < size; r++ {
			if up[r] != 1 || down[r] != 1 {
				t.Errorf("%d ranks: rank %d sent %d up, received %d down; want 1, 1", size, r, up[r], down[r])
			}
		}
		if h := lastHop(downs, size); h != depth {
			t.Errorf("%d ranks: the last rank has the broadcast after %d sends, want %d", size, h, depth)
		}
		// Each rank's sends down, largest step first.
		for r := range size {
			var kids []int
			for _, m := range downs {
				if m.src == r {
					kids = append(kids, m.dst)
				}
			}
			var want []int
			treeKidsDown(r, size, func(kid, _ int) error { want = append(want, kid); return nil })
			if !slices.Equal(kids, want) || !slices.IsSortedFunc(kids, func(a, b int) int { return b - a }) {
				t.Errorf("%d ranks: rank %d sends down to %v, want %v (largest first)", size, r, kids, want)
			}
		}
		// reduceTo0 alone: P - 1 messages, only up; rank 0 has the sum.
		var sum int64
		errs, lg = onTree(t, size, nil, func(r int, c Comm) error {
			v, out := int64(r), int64(-1)
			err := reduceTo0(c, &v, &out, func(a, b *int64) { *a += *b })
			if r == 0 {
				sum = out
			}
			return err
		})
		if len(lg.msgs) != size-1 || sum != int64(size*(size-1)/2) || errors.Join(errs...) != nil {
			t.Errorf("%d ranks: reduceTo0 sent %d messages, sum %d, %v; want %d, %d", size, len(lg.msgs), sum, errors.Join(errs...), size-1, size*(size-1)/2)
		}
		for _, m := range lg.msgs {
			if m.src == 0 || m.dst != treeParent(m.src) {
				t.Errorf("%d ranks: reduceTo0's message from rank %d to %d: not up the tree", size, m.src, m.dst)
			}
		}
		// treeTokens rooted at each rank: each other rank receives
		// one token, from its parent relative to the root; the last
		// after ceil(log2 P) sends.
		for root := range size {
			errs, lg = onTree(t, size, nil, func(r int, c Comm) error {
				if r != root {
					if _, err := c.RecvToken(); err != nil {
						return err
					}
				}
				return treeTokens(c, root, [3]uint64{2 | uint64(root)<<8})
			})
			if len(lg.toks) != size-1 || errors.Join(errs...) != nil {
				t.Errorf("%d ranks, root %d: %d tokens, %v; want %d", size, root, len(lg.toks), errors.Join(errs...), size-1)
			}
			got := make([]int, size)
			var msgs []spyMsg
			for _, m := range lg.toks {
				x, y := (m[0]-root+size)%size, (m[1]-root+size)%size
				if y == 0 || x != treeParent(y) {
					t.Errorf("%d ranks, root %d: a token from rank %d to %d (relative %d to %d): not down the tree", size, root, m[0], m[1], x, y)
				}
				got[m[1]]++
				msgs = append(msgs, spyMsg{src: x, dst: y})
			}
			for r := range size {
				if w := flagInt(r != root); got[r] != w {
					t.Errorf("%d ranks, root %d: rank %d received %d tokens, want %d", size, root, r, got[r], w)
				}
			}
			if h := lastHop(msgs, size); h != depth {
				t.Errorf("%d ranks, root %d: the last rank has the token after %d sends, want %d", size, root, h, depth)
			}
		}
	}
}

func flagInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// treeRoles are the relative ranks of a job of size ranks where a test
// injects a failure: an inner rank (with a parent and children), a leaf
// (no children; the last rank) and the root.
func treeRoles(size int) map[string]int {
	roles := map[string]int{"root": 0, "leaf": size - 1}
	for rel := 1; rel < size; rel++ {
		kids := 0
		treeKids(rel, size, func(int, int) error { kids++; return nil })
		if kids > 0 {
			roles["inner"] = rel
			break
		}
	}
	return roles
}

// injection is a bad message received, and what the ranks must return:
// found[r] is the sender whose message rank r finds bad (its error names
// that sender and a byte); every other rank of fail returns that failure
// as learnt through the tree (a jobError of one of those ranks, with its
// text), every rank outside fail nil.
type injection struct {
	what  string
	bad   func(src, dst, n int, b []byte) []byte
	found map[int]int
	fail  []int
}

// treeInjections are the failures TestTreeFailure and TestPathGatherFailure
// inject at size ranks, relative to the root (abs: relative to absolute),
// corrupting a message with spoil: sent by an inner rank, by a leaf
// (going up), by the root (going down: each of its children finds it
// bad, and every rank fails but the root, which has sent all it had to
// send), and received by a leaf going down (the only message it
// receives: then it and nobody else fails, see tree.go).
func treeInjections(size int, abs func(int) int, spoil func([]byte) []byte) []injection {
	all := make([]int, size)
	for r := range all {
		all[r] = abs(r)
	}
	var out []injection
	roles := treeRoles(size)
	for _, role := range []string{"inner", "leaf", "root"} {
		x := roles[role]
		src := abs(x)
		in := injection{what: role + " sends", found: map[int]int{}, fail: all}
		if x != 0 {
			dst := abs(treeParent(x))
			in.found[dst] = src
			in.bad = func(s, d, n int, b []byte) []byte {
				if s == src && d == dst && n == 0 {
					return spoil(b)
				}
				return b
			}
		} else {
			treeKids(0, size, func(kid, _ int) error { in.found[abs(kid)] = src; return nil })
			in.fail = all[1:] // the root sends and has done
			in.bad = func(s, d, n int, b []byte) []byte {
				if s == src && n == 0 && treeParent((d-src+size)%size) == 0 {
					return spoil(b)
				}
				return b
			}
		}
		out = append(out, in)
	}
	leaf, parent := abs(size-1), abs(treeParent(size-1))
	out = append(out, injection{what: "leaf receives", found: map[int]int{leaf: parent}, fail: []int{leaf},
		bad: func(s, d, n int, b []byte) []byte {
			if s == parent && d == leaf && n == 0 {
				return spoil(b)
			}
			return b
		}})
	return out
}

// check checks errs against the injection; want(src) is what the
// error of a rank that found src's message bad says.
func (in injection) check(t *testing.T, what string, errs []error, want func(src int) []string) {
	t.Helper()
	for r, err := range errs {
		if src, ok := in.found[r]; ok {
			for _, w := range want(src) {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%s, %s: rank %d returned %v; want it to say %q", what, in.what, r, err, w)
				}
			}
			continue
		}
		if !slices.Contains(in.fail, r) {
			if err != nil {
				t.Errorf("%s, %s: rank %d returned %v, want nil", what, in.what, r, err)
			}
			continue
		}
		var je *jobError
		if !errors.As(err, &je) || errs[je.rank] == nil || je.msg != errs[je.rank].Error() {
			t.Errorf("%s, %s: rank %d returned %v; want the failure found at another rank", what, in.what, r, err)
			continue
		}
		if _, ok := in.found[je.rank]; !ok {
			t.Errorf("%s, %s: rank %d returned %v: rank %d found no bad message", what, in.what, r, err, je.rank)
		}
	}
}

// TestTreeFailure: a bad message (its flag byte changed) sent by an inner
// rank, by a leaf, by the root, or received by a leaf going down, at 5,
// 8 and 32 ranks, in allReduce of a float64 and in reduceTo0: every rank
// returns (none is left waiting, no message is left unreceived, in the
// tree's count of messages), the rank that found it with an error naming
// the sender and the byte, every other with that failure learnt through
// the tree: allReduce every rank (bar a bad message going down, which
// only its receivers and their subtrees see), reduceTo0 the
// ranks on the way from the finder up to rank 0 (the others have sent
// their part and return).
func TestTreeFailure(t *testing.T) {
	spoil := func(b []byte) []byte {
		b = slices.Clone(b)
		b[len(b)-1] = 9
		return b
	}
	want := func(src int) []string { return []string{fmt.Sprintf("from rank %d: 9 bytes, bad flag at byte 8", src)} }
	for _, size := range []int{5, 8, 32} {
		for _, in := range treeInjections(size, func(r int) int { return r }, spoil) {
			what := fmt.Sprintf("allReduce, %d ranks", size)
			errs, lg := onTree(t, size, in.bad, func(r int, c Comm) error {
				v := float64(r)
				return allReduce(c, &v, &v, func(a, b *float64) { *a = min(*a, *b) })
			})
			in.check(t, what, errs, want)
			if len(lg.msgs) != 2*(size-1) {
				t.Errorf("%s, %s: %d messages, want %d", what, in.what, len(lg.msgs), 2*(size-1))
			}
			if in.what != "inner sends" && in.what != "leaf sends" {
				continue // reduceTo0 sends nothing down
			}
			what = fmt.Sprintf("reduceTo0, %d ranks", size)
			errs, lg = onTree(t, size, in.bad, func(r int, c Comm) error {
				v := float64(r)
				return reduceTo0(c, &v, &v, func(a, b *float64) { *a = min(*a, *b) })
			})
			var up []int
			for x := range in.found {
				for ; x != 0; x = treeParent(x) {
					up = append(up, x)
				}
			}
			in.fail = append(up, 0)
			in.check(t, what, errs, want)
			if len(lg.msgs) != size-1 {
				t.Errorf("%s, %s: %d messages, want %d", what, in.what, len(lg.msgs), size-1)
			}
		}
	}
}

// gatherJob is a job of size ranks with random jumps for the path's
// gather (as TestPathGatherTree's), and its offline replay.
func gatherJob(t *testing.T, size int, seed uint64) ([]*rankPass, []rankWaits, pathResult) {
	rng := newMix(seed*977 + uint64(size))
	passes := make([]*rankPass, size)
	ws := make([]rankWaits, size)
	for r := range size {
		p := newRankPass(r, r, 1)
		for range 3 + r%4 {
			t1 := float64(rng.next()%(1<<30) + 100)
			t0 := t1 - float64(rng.next()%20)
			ready := t0 + float64(rng.next()%uint64(t1-t0+1))
			ws[r].jumps = append(ws[r].jumps, jump{t1: t1, t0: t0, ready: ready, partner: int32(rng.next() % uint64(size))})
		}
		ws[r].sortJumps()
		p.ncalls, p.first, p.last = 1, float64(rng.next()%50), float64(1<<30)+100+float64(rng.next()%(1<<30))
		passes[r] = p
	}
	want := replay(passes, ws)
	if !want.info.Found || want.info.EndRank < 0 {
		t.Fatalf("%d ranks seed %d: no path (%+v)", size, seed, want.info)
	}
	return passes, ws, want
}

// TestPathGatherFailure: the path's gather (gatherReplay) at 5, 8 and 32
// ranks with a bad bundle sent by an inner rank, by a leaf (going up),
// by the end rank (going down) or received by a leaf going down, its
// flag byte changed or cut to 2 bytes: every rank returns (none is left
// waiting, no message left unreceived, 2 (P - 1) messages), the rank
// that found it with an error naming the sender and the byte, every
// other rank with that failure through the tree, bar a bad bundle going
// down (seen by its receivers' subtrees only; the end rank has sent
// all). Before 2026-11-29 an inner rank returned at once: its parent
// and its children waited forever.
func TestPathGatherFailure(t *testing.T) {
	spoils := map[string]func([]byte) []byte{
		"flag": func(b []byte) []byte { b = slices.Clone(b); b[0] = 7; return b },
		"cut":  func(b []byte) []byte { return slices.Clone(b[:2]) },
	}
	for _, size := range []int{5, 8, 32} {
		passes, ws, want := gatherJob(t, size, 1)
		end := want.info.EndRank
		abs := func(x int) int { return (x + end) % size }
		for name, spoil := range spoils {
			for _, in := range treeInjections(size, abs, spoil) {
				what := fmt.Sprintf("%d ranks (end rank %d), %s", size, end, name)
				segs := make([][][2]float64, size)
				infos := make([]pathInfo, size)
				errs, lg := onTree(t, size, in.bad, func(r int, c Comm) (err error) {
					var st pathStats
					var done bool
					segs[r], done, err = gatherReplay(c, ws[r].jumps, passes[r], end, DefaultJobMemory, &infos[r], &st)
					if err == nil && !done {
						err = fmt.Errorf("not gathered")
					}
					return err
				})
				in.check(t, what, errs, func(src int) []string {
					if name == "flag" {
						return []string{fmt.Sprintf("rank %d's", src), "bad flag at byte 0"}
					}
					return []string{fmt.Sprintf("rank %d's", src), "2 bytes", "bad at byte 2"}
				})
				for r := range size {
					if errs[r] == nil && !slices.Equal(segs[r], want.segs[r]) && len(segs[r])+len(want.segs[r]) > 0 {
						t.Errorf("%s, %s: rank %d: segments %v, want %v", what, in.what, r, segs[r], want.segs[r])
					}
				}
				if len(lg.msgs) != 2*(size-1) {
					t.Errorf("%s, %s: %d messages, want %d", what, in.what, len(lg.msgs), 2*(size-1))
				}
			}
		}
	}
}

// TestPathNoRank: a jump on the path whose partner is no rank (at 5, 8
// and 32 ranks: a path of 20 jumps built by hand, its jump at place 10
// to rank P + 3). The gather says the ranks must double (2 (P - 1)
// messages), the doubling's verdict sends them to the token, and the
// rank holding it at that jump cannot pass it on: it sends the failure
// down the tree rooted at itself (P - 1 tokens) and every rank returns
// an error naming that rank, the jump and the partner. Before
// 2026-11-29 that rank returned alone and the others waited for the
// token forever.
func TestPathNoRank(t *testing.T) {
	const T, badAt = 20, 10
	for _, size := range []int{5, 8, 32} {
		rng := newMix(uint64(size))
		at := make([]int32, T+1)
		for x := range at {
			at[x] = int32(rng.next() % uint64(size))
		}
		for at[badAt] == at[badAt+1] || at[badAt] == at[badAt-1] {
			at[badAt] = (at[badAt] + 1) % int32(size)
		}
		big := float64(10*T + 2000)
		ws := make([]rankWaits, size)
		for x := range T {
			t1 := big - 10*float64(x)
			pr := at[x+1]
			if x == badAt {
				pr = int32(size + 3)
			}
			ws[at[x]].jumps = append(ws[at[x]].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: pr})
		}
		passes := chainPasses(ws, int(at[0]), big)
		errs, lg := onTree(t, size, nil, func(r int, c Comm) error {
			var info pathInfo
			var st pathStats
			_, done, err := gatherReplay(c, ws[r].jumps, passes[r], int(at[0]), DefaultJobMemory, &info, &st)
			if err == nil && !done {
				_, err = doublingReplay(c, ws[r].jumps, passes[r], int(at[0]), &info, &st)
			}
			return err
		})
		holder := int(at[badAt])
		in := injection{what: "a partner no rank", found: map[int]int{holder: holder}, fail: make([]int, size)}
		for r := range in.fail {
			in.fail[r] = r
		}
		in.check(t, fmt.Sprintf("%d ranks", size), errs, func(int) []string {
			return []string{fmt.Sprintf("critical path: the path's jump %d from its end (rank %d's) has partner %d, no rank", badAt+1, holder, size+3)}
		})
		// The gather's messages, the verdict's 2 (P - 1), the token's
		// hops to place 10 and the failure's P - 1.
		hops := 0
		for x := range badAt {
			if at[x] != at[x+1] {
				hops++
			}
		}
		if len(lg.msgs) != 4*(size-1) || len(lg.toks) != hops+size-1 {
			t.Errorf("%d ranks: %d messages, %d tokens; want %d, %d", size, len(lg.msgs), len(lg.toks), 4*(size-1), hops+size-1)
		}
	}
}

// TestPathDoublingFailure: the doubling (doublingReplay) of a path of 20
// jumps built by hand at 5, 8 and 32 ranks (7 exchanges: the queries,
// the replies, levels 0 to 4), rank 1's message to rank 2 bad in
// exchange k (the queries and the levels' cut to their flag byte, the
// replies' flag changed): rank 2 fails, takes part in the next step the
// others take (exchange k + 1 with the failure in place of its messages,
// or the verdict), the others see the failure there and go to the
// verdict, whose reduction carries it to all. Every rank returns (none
// is left waiting), rank 2 with an error naming rank 1 and the byte, the
// others with rank 2's failure; every rank made the same exchanges, k +
// 2 (the last, 7: k + 1), and the verdict's 2 (P - 1) messages were sent.
// Before 2026-11-29 rank 2 returned at once and the others waited for it
// in the next exchange.
func TestPathDoublingFailure(t *testing.T) {
	const T = 20
	for _, size := range []int{5, 8, 32} {
		rng := newMix(uint64(size) * 31)
		at := make([]int32, T+1)
		for x := range at {
			at[x] = int32(rng.next() % uint64(size))
		}
		big := float64(10*T + 2000)
		ws := make([]rankWaits, size)
		for x := range T {
			t1 := big - 10*float64(x)
			ws[at[x]].jumps = append(ws[at[x]].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: at[x+1]})
		}
		passes := chainPasses(ws, int(at[0]), big)
		// Without a failure: 7 exchanges.
		_, lg := onTree(t, size, nil, func(r int, c Comm) error {
			var info pathInfo
			var st pathStats
			_, err := doublingReplay(c, ws[r].jumps, passes[r], int(at[0]), &info, &st)
			return err
		})
		if lg.a2a[0] != 7 {
			t.Fatalf("%d ranks: %d exchanges without a failure, want 7", size, lg.a2a[0])
		}
		for k := range 7 {
			bad := func(s, d, x int, b []byte) []byte {
				if s != 1 || d != 2 || x != k {
					return b
				}
				if k == 1 {
					b = slices.Clone(b)
					b[0] = 5
					return b
				}
				return slices.Clone(b[:1])
			}
			errs, lg := onTreeX(t, size, bad, func(r int, c Comm) error {
				var info pathInfo
				var st pathStats
				_, err := doublingReplay(c, ws[r].jumps, passes[r], int(at[0]), &info, &st)
				return err
			})
			want := []string{"critical path: 1 bytes from rank 1"}
			switch {
			case k == 1:
				want = []string{"from rank 1, want at least", "the flag 0 at byte 0"}
			case k >= 2:
				want = []string{fmt.Sprintf("rank 1's level %d message: bad counts at byte 1 of 1", k-2)}
			}
			in := injection{what: fmt.Sprintf("exchange %d", k), found: map[int]int{2: 1}, fail: make([]int, size)}
			for r := range in.fail {
				in.fail[r] = r
			}
			in.check(t, fmt.Sprintf("%d ranks", size), errs, func(int) []string { return want })
			wx := min(k+2, 7)
			for r := range size {
				if lg.a2a[r] != wx {
					t.Errorf("%d ranks, exchange %d: rank %d made %d exchanges, want %d", size, k, r, lg.a2a[r], wx)
				}
			}
			if len(lg.msgs) != 2*(size-1) {
				t.Errorf("%d ranks, exchange %d: %d messages, want %d", size, k, len(lg.msgs), 2*(size-1))
			}
		}
	}
}

// chainPasses sorts each rank's jumps of a path built by hand and makes
// the ranks' passes: every rank's last event at big - 1 but the path's
// end rank's, at big + 1.
func chainPasses(ws []rankWaits, end int, big float64) []*rankPass {
	passes := make([]*rankPass, len(ws))
	for r := range passes {
		ws[r].sortJumps()
		p := newRankPass(r, r, 1)
		p.ncalls, p.first, p.last = 1, 0, big-1
		if r == end {
			p.last = big + 1
		}
		passes[r] = p
	}
	return passes
}
