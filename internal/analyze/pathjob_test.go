package analyze

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestPathExchanges: a path of T jumps built by hand over p ranks (the
// ranks it visits drawn at random, each jump's partner the next one's
// rank), beside a chain of 5000 jumps on one rank that the path never
// reaches, takes exactly floor(log2 T) + 3 exchanges (1 for T = 0)
// whatever the other chain's length: the doubling stops when the path is
// marked. The segments, start rank and jumps are the offline replay's.
func TestPathExchanges(t *testing.T) {
	// T -> exchanges: the two that find the successors, then levels 0 to
	// L = floor(log2 T), the last level the one whose jump at place
	// 2^L - 1 has the path's start 2^L steps on (T < 2^(L+1)): 2 + L + 1.
	// T = 0: the end rank has no jump, the first exchange says so. So 1:
	// 3; 2, 3: 4; 4 to 7: 5; 8 to 15: 6; 1024 to 2047: 13; 2048: 14
	// (ceil(log2 T) + 3 before 2026-11-28: 5 for T = 3, 6 for T = 5, 7
	// for 9, 14 for 1025).
	want := map[int]int{0: 1, 1: 3, 2: 4, 3: 4, 4: 5, 5: 5, 7: 5, 8: 6, 9: 6, 15: 6, 16: 7, 1024: 13, 1025: 13, 2047: 13, 2048: 14}
	const other = 5000
	for _, size := range []int{1, 2, 3, 7} {
		for T, wx := range want {
			rng := newMix(uint64(size*7919 + T))
			// place t of the path is on rank at[t]; at[T] is its start.
			at := make([]int32, T+1)
			for x := range at {
				at[x] = int32(rng.next() % uint64(size))
			}
			if T == 0 {
				at[0] = int32(size - 1)
			}
			big := float64(10*T + 10*other + 2000)
			ws := make([]rankWaits, size)
			for x := range T {
				t1 := big - 10*float64(x)
				ws[at[x]].jumps = append(ws[at[x]].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: at[x+1]})
			}
			off := -1 // the other chain's rank: not the path's start
			if size > 1 {
				off = int(at[T]+1) % size
				for m := range other {
					t1 := float64(1000 + 10*m)
					ws[off].jumps = append(ws[off].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: int32(off)})
				}
			}
			passes := make([]*rankPass, size)
			for r := range passes {
				ws[r].sortJumps()
				p := newRankPass(r, r, 1)
				p.ncalls, p.first, p.last = 1, 0, big-1
				if r == int(at[0]) {
					p.last = big + 1
				}
				passes[r] = p
			}
			w := replay(passes, ws)
			if w.info.Jumps != T || w.info.StartRank != int(at[T]) || w.info.EndRank != int(at[0]) {
				t.Fatalf("%d ranks, T=%d: the replay finds %+v (not the path built)", size, T, w.info)
			}
			net := newChanNet(size)
			segs := make([][][2]float64, size)
			infos := make([]pathInfo, size)
			sts := make([]pathStats, size)
			errs := onRanks(net, func(r int, c chanComm) (err error) {
				segs[r], err = doublingReplay(c, ws[r].jumps, passes[r], int(at[0]), &infos[r], &sts[r])
				return err
			})
			for r := range size {
				if errs[r] != nil {
					t.Fatalf("%d ranks, T=%d, rank %d: %v", size, T, r, errs[r])
				}
				if len(segs[r]) == 0 {
					segs[r] = nil
				}
				if !slices.Equal(segs[r], w.segs[r]) {
					t.Errorf("%d ranks, T=%d, rank %d: segments %v, want %v", size, T, r, segs[r], w.segs[r])
				}
				if infos[r].StartRank != int(at[T]) || infos[r].Jumps != T {
					t.Errorf("%d ranks, T=%d, rank %d: start rank %d, %d jumps; want %d, %d", size, T, r, infos[r].StartRank, infos[r].Jumps, at[T], T)
				}
				if st := sts[r]; st.exchanges != wx || st.tokens {
					t.Errorf("%d ranks, T=%d, rank %d: %+v, want %d exchanges and no token", size, T, r, st, wx)
				}
			}
			if a, tk := net.a2as.Load(), net.tokens.Load(); a != int64(size*wx) || tk != 0 {
				t.Errorf("%d ranks, T=%d: %d exchanges over the ranks, %d tokens; want %d, none", size, T, a, tk, size*wx)
			}
		}
	}
}

// TestPathLeaves: leaves (jumps no jump's successor, not the path's end)
// cost only their query and its reply, at no level. Two ranks, a path of
// 10 jumps alternating between them from rank 0 (its start on rank 0
// too), rank 1's chain of 5000 jumps the path never reaches, and L jumps
// on rank 0 that end after every time the path looks for (never taken)
// and whose successors are among the chain's first 100 jumps: rank 1
// sends exactly L bytes more than without them (a one-byte reply each),
// and the path and its exchanges are the same. Before 2026-11-28 every
// level sent each of them an update.
func TestPathLeaves(t *testing.T) {
	const T, other = 10, 5000
	big := float64(10*T + 10*other + 2000)
	run := func(leaves int) ([]pathStats, [][][2]float64, []pathInfo) {
		ws := make([]rankWaits, 2)
		for x := range T {
			t1 := big - 10*float64(x)
			ws[x%2].jumps = append(ws[x%2].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: int32((x + 1) % 2)})
		}
		for m := range other {
			t1 := float64(1000 + 10*m)
			ws[1].jumps = append(ws[1].jumps, jump{t1: t1, t0: t1 - 6, ready: t1 - 5, partner: 1})
		}
		for l := range leaves {
			t1 := big + 10 + float64(l)
			ws[0].jumps = append(ws[0].jumps, jump{t1: t1, t0: t1 - 1, ready: float64(1000 + 10*(l%100) + 5), partner: 1})
		}
		passes := make([]*rankPass, 2)
		for r := range passes {
			ws[r].sortJumps()
			p := newRankPass(r, r, 1)
			p.ncalls, p.first, p.last = 1, 0, big-1
			if r == 0 {
				p.last = big + 1
			}
			passes[r] = p
		}
		w := replay(passes, ws)
		if w.info.Jumps != T || w.info.StartRank != 0 || w.info.EndRank != 0 {
			t.Fatalf("%d leaves: the replay finds %+v (not the path built)", leaves, w.info)
		}
		net := newChanNet(2)
		segs := make([][][2]float64, 2)
		infos := make([]pathInfo, 2)
		sts := make([]pathStats, 2)
		errs := onRanks(net, func(r int, c chanComm) (err error) {
			segs[r], err = doublingReplay(c, ws[r].jumps, passes[r], 0, &infos[r], &sts[r])
			return err
		})
		for r := range 2 {
			if errs[r] != nil {
				t.Fatalf("%d leaves, rank %d: %v", leaves, r, errs[r])
			}
			if len(segs[r]) == 0 {
				segs[r] = nil
			}
			if !slices.Equal(segs[r], w.segs[r]) {
				t.Errorf("%d leaves, rank %d: segments %v, want %v", leaves, r, segs[r], w.segs[r])
			}
		}
		return sts, segs, infos
	}
	st0, _, info0 := run(0)
	for _, leaves := range []int{1, 100, 1000} {
		st, _, info := run(leaves)
		if st[1].sent-st0[1].sent != int64(leaves) || st[1].exchanges != st0[1].exchanges || st[1].tokens || info[0] != info0[0] {
			t.Errorf("%d leaves: rank 1 sent %d bytes in %d exchanges, without them %d in %d (%+v, %+v): want %d bytes more, as many exchanges",
				leaves, st[1].sent, st[1].exchanges, st0[1].sent, st0[1].exchanges, info[0], info0[0], leaves)
		}
	}
}

// spyComm records the point-to-point messages of a chanComm.
type spyComm struct {
	chanComm
	mu  *sync.Mutex
	log *[]spyMsg
}

type spyMsg struct {
	src, dst int
	data     []byte
}

func (c spyComm) Send(dest int, data []byte) error {
	c.mu.Lock()
	*c.log = append(*c.log, spyMsg{c.rank, dest, slices.Clone(data)})
	c.mu.Unlock()
	return c.chanComm.Send(dest, data)
}

// TestPathGatherTree: the jumps gathered up a binomial tree rooted at the
// end rank (gatherReplay, since 2026-11-29), at 1, 2, 3, 5, 8 and 32
// ranks, rank r with 3 + r mod 4 jumps at random (the path's end on any
// rank), and bounds of room for all the jumps, one less, the most of one
// rank (each rank's part fits, the whole does not: an inner rank's
// subtree passes first) and none. Each rank but the end rank sends one
// message to its parent (relative rank rel - its lowest set bit); it is
// the flag alone exactly when its subtree (rel to rel + lowest bit - 1)
// has more jumps than there is room for, else it carries the subtree's
// ranks. The end rank replies down the same tree, a message to each rank
// but itself: every rank then knows the path (the offline replay's
// segments, start rank and jumps) or that none is gathered. No rank
// receives more than ceil(log2 P) messages; each receives one per child
// and one from its parent.
func TestPathGatherTree(t *testing.T) {
	for _, size := range []int{1, 2, 3, 5, 8, 32} {
		for seed := range 3 {
			passes, ws, want := gatherJob(t, size, uint64(seed))
			all, most := 0, 0
			for r := range size {
				all += len(ws[r].jumps)
				most = max(most, len(ws[r].jumps))
			}
			end := want.info.EndRank
			for _, room := range []int{all, all - 1, most, 0} {
				bound := int64(room) * 4 * gatherJumpBytes
				net := newChanNet(size)
				var mu sync.Mutex
				var log []spyMsg
				segs := make([][][2]float64, size)
				infos := make([]pathInfo, size)
				dones := make([]bool, size)
				errs := onRanks(net, func(r int, cc chanComm) (err error) {
					var st pathStats
					segs[r], dones[r], err = gatherReplay(spyComm{cc, &mu, &log}, ws[r].jumps, passes[r], end, bound, &infos[r], &st)
					return err
				})
				what := fmt.Sprintf("%d ranks seed %d room %d of %d (most %d)", size, seed, room, all, most)
				for r := range size {
					if errs[r] != nil {
						t.Fatalf("%s rank %d: %v", what, r, errs[r])
					}
					if dones[r] != (room == all) {
						t.Errorf("%s rank %d: gathered %v, want %v", what, r, dones[r], room == all)
					}
					if !dones[r] {
						continue
					}
					if len(segs[r]) == 0 {
						segs[r] = nil
					}
					if !slices.Equal(segs[r], want.segs[r]) || infos[r].StartRank != want.info.StartRank || infos[r].Jumps != want.info.Jumps {
						t.Errorf("%s rank %d: segments %v, start rank %d, %d jumps; want %v, %d, %d", what, r, segs[r], infos[r].StartRank,
							infos[r].Jumps, want.segs[r], want.info.StartRank, want.info.Jumps)
					}
				}
				rel := func(r int) int { return (r - end + size) % size }
				up, down := make([]int, size), make([]int, size)
				recvs := make([]int, size)
				for _, m := range log {
					recvs[m.dst]++
					x, y := rel(m.src), rel(m.dst)
					switch {
					case x != 0 && y == x-x&-x:
						up[m.src]++
						// The subtree's jumps against the room.
						sub := 0
						for z := x; z < min(x+x&-x, size); z++ {
							sub += len(ws[(z+end)%size].jumps)
						}
						if flag := len(m.data) == 1 && m.data[0] == 1; flag != (sub > room) {
							t.Errorf("%s: rank %d (relative %d) sends %d bytes up, its subtree %d jumps: the flag alone %v, want %v",
								what, m.src, x, len(m.data), sub, flag, sub > room)
						}
					case y != 0 && x == y-y&-y:
						down[m.dst]++
						if flag := len(m.data) == 1 && m.data[0] == 1; flag != (room != all) {
							t.Errorf("%s: rank %d's reply to rank %d: %d bytes, the flag alone %v, want %v", what, m.src, m.dst, len(m.data), flag, room != all)
						}
					default:
						t.Errorf("%s: a message from rank %d to %d (relative %d to %d): not on the tree", what, m.src, m.dst, x, y)
					}
				}
				inner := false
				for r := range size {
					w := 0
					if r != end {
						w = 1
					}
					if up[r] != w || down[r] != w {
						t.Errorf("%s: rank %d sends %d up and receives %d down, want %d, %d", what, r, up[r], down[r], w, w)
					}
					kids := 0
					treeKids(rel(r), size, func(int, int) error { kids++; return nil })
					if recvs[r] != kids+w || recvs[r] > bits.Len(uint(size-1)) || int(net.recvs[r].Load()) != recvs[r] {
						t.Errorf("%s: rank %d received %d messages (%d counted), want %d (its children and parent), at most %d",
							what, r, recvs[r], net.recvs[r].Load(), kids+w, bits.Len(uint(size-1)))
					}
					if x := rel(r); room == most && x != 0 && kids > 0 {
						sub := 0
						for z := x; z < min(x+x&-x, size); z++ {
							sub += len(ws[(z+end)%size].jumps)
						}
						inner = inner || sub > room
					}
				}
				// At 8 and 32 ranks, an inner rank's subtree passes the
				// room of the rank with most jumps (room == most).
				if size >= 8 && room == most && !inner {
					t.Errorf("%s: no inner rank's subtree passes the room", what)
				}
				if len(log) != 2*(size-1) || net.a2as.Load() != 0 || net.tokens.Load() != 0 {
					t.Errorf("%s: %d messages, %d exchanges, %d tokens; want %d, 0, 0", what, len(log), net.a2as.Load(), net.tokens.Load(), 2*(size-1))
				}
			}
		}
	}
}

// TestPathGatherCorrupt: a bundle that is not one (a bad flag, a count of
// ranks that is not the subtree's, an entry cut short or of another rank,
// a jump whose partner is cut short, bytes after the last entry) gets the end rank an error naming the
// sender and the byte, never a panic. Three ranks, the end rank 0 (its
// children ranks 1 and 2, one rank each), rank 2's bundle good (rank 2,
// no calls, no jumps), rank 1's as listed.
func TestPathGatherCorrupt(t *testing.T) {
	good := func(r byte) []byte { return append([]byte{0, 1, 0, r}, make([]byte, 8+8+1+1)...) }
	for name, b := range map[string][]byte{
		"flag":      {7},
		"ranks":     {0, 2, 0},
		"cut":       good(1)[:10],
		"rank":      good(2),
		"trailing":  append(good(1), 0),
		"jump":      append(append(append([]byte{0, 1, 1, 1}, make([]byte, 16)...), 0, 1), append(make([]byte, 16), 0x80)...),
		"no header": {0},
	} {
		net := newChanNet(3)
		net.p2p[1][0] <- b
		net.p2p[2][0] <- good(2)
		p := newRankPass(0, 0, 1)
		var info pathInfo
		var st pathStats
		_, done, err := gatherReplay(chanComm{0, net}, nil, p, 0, DefaultJobMemory, &info, &st)
		t.Logf("%s: %v", name, err)
		if err == nil || done {
			t.Errorf("%s: %v, done %v; want an error", name, err, done)
		} else if !strings.Contains(err.Error(), "rank 1") {
			t.Errorf("%s: %v; want it to name rank 1", name, err)
		}
	}
}
