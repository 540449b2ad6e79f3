package analyze

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// chanComm is a job of goroutines for InJob.
type chanComm struct {
	rank int
	net  *chanNet
}

type chanNet struct {
	size   int
	a2as   atomic.Int64    // Alltoallv calls, over all ranks
	tokens atomic.Int64    // SendToken calls, over all ranks
	sends  atomic.Int64    // Send calls (the reductions' trees), over all ranks
	asyncs atomic.Int64    // SendAsync calls (the delay costs), over all ranks
	recvs  []atomic.Int64  // Recv calls, per rank
	p2p    [][]chan []byte // [src][dst]
	a2a    [][]chan []byte
	token  []chan [3]uint64
	inbox  []*mailbox
}

// mailbox is a rank's unbounded queue of asynchronous messages.
type mailbox struct {
	mu   sync.Mutex
	cond *sync.Cond
	q    []mail
}

type mail struct {
	src  int
	data []byte
}

// onRanks runs f for each rank of net on goroutines and returns each
// rank's error.
func onRanks(net *chanNet, f func(r int, c chanComm) error) []error {
	errs := make([]error, net.size)
	var wg sync.WaitGroup
	for r := range net.size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[r] = f(r, chanComm{r, net})
		}()
	}
	wg.Wait()
	return errs
}

func newChanNet(size int) *chanNet {
	n := &chanNet{size: size, token: make([]chan [3]uint64, size), recvs: make([]atomic.Int64, size)}
	for s := 0; s < size; s++ {
		n.p2p = append(n.p2p, make([]chan []byte, size))
		n.a2a = append(n.a2a, make([]chan []byte, size))
		for d := 0; d < size; d++ {
			n.p2p[s][d] = make(chan []byte, 4)
			n.a2a[s][d] = make(chan []byte, 1)
		}
		n.token[s] = make(chan [3]uint64, 2*size)
		m := &mailbox{}
		m.cond = sync.NewCond(&m.mu)
		n.inbox = append(n.inbox, m)
	}
	return n
}

func (c chanComm) Rank() int { return c.rank }
func (c chanComm) Size() int { return c.net.size }
func (c chanComm) Send(dest int, data []byte) error {
	c.net.sends.Add(1)
	c.net.p2p[c.rank][dest] <- bytes.Clone(data)
	return nil
}
func (c chanComm) Recv(src int) ([]byte, error) {
	c.net.recvs[c.rank].Add(1)
	return <-c.net.p2p[src][c.rank], nil
}
func (c chanComm) Alltoallv(out [][]byte) ([][]byte, error) {
	c.net.a2as.Add(1)
	for d := range out {
		c.net.a2a[c.rank][d] <- bytes.Clone(out[d])
	}
	in := make([][]byte, c.net.size)
	for s := range in {
		in[s] = <-c.net.a2a[s][c.rank]
	}
	return in, nil
}
func (c chanComm) SendToken(dest int, m [3]uint64) error {
	c.net.tokens.Add(1)
	c.net.token[dest] <- m
	return nil
}
func (c chanComm) RecvToken() ([3]uint64, error) { return <-c.net.token[c.rank], nil }
func (c chanComm) SendAsync(dest int, data []byte) error {
	c.net.asyncs.Add(1)
	m := c.net.inbox[dest]
	m.mu.Lock()
	m.q = append(m.q, mail{c.rank, bytes.Clone(data)})
	m.mu.Unlock()
	m.cond.Signal()
	return nil
}
func (c chanComm) RecvAny() (int, []byte, error) {
	m := c.net.inbox[c.rank]
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.q) == 0 {
		m.cond.Wait()
	}
	x := m.q[0]
	m.q = m.q[1:]
	return x.src, x.data, nil
}
func (c chanComm) PollAny() (int, []byte, bool, error) {
	m := c.net.inbox[c.rank]
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.q) == 0 {
		return 0, nil, false, nil
	}
	x := m.q[0]
	m.q = m.q[1:]
	return x.src, x.data, true, nil
}
func (c chanComm) WaitSends() error { return nil }

// inJob runs InJob on every rank of the job as goroutines; the result is
// rank 0's.
func inJob(t *testing.T, dir string, size int) *Result {
	t.Helper()
	res, _ := inJobOpt(t, dir, size, Options{})
	return res
}

// jobRun is what inJobOpt saw of a run: each rank's exchanges, the
// path's tokens over all ranks, and rank 0's path statistics (its phase's
// name: levels, exchanges).
type jobRun struct {
	exchanges int
	tokens    int
	sends     int // the reductions' messages, over all ranks
	asyncs    int // the delay costs' messages, over all ranks
	path      string
	part      string // rank 0's part phase: part, or part[trace read again]
	reads     int    // ranks that read their trace a second time (pathKeysOf)
}

// inJobOpt is inJob with options; it returns what the run exchanged as
// well.
func inJobOpt(t *testing.T, dir string, size int, opt Options) (*Result, jobRun) {
	t.Helper()
	return inJobRun(t, dir, size, opt, nil)
}

// inJobRun is inJobOpt that calls atRecords on rank 0 once the records
// are exchanged and matched (its "match" phase: every rank's walk done).
func inJobRun(t *testing.T, dir string, size int, opt Options, atRecords func()) (*Result, jobRun) {
	t.Helper()
	net := newChanNet(size)
	var wg sync.WaitGroup
	var res *Result
	var run jobRun
	var reads atomic.Int64
	defer func(f func(*trace.Walker, int, *trace.Rank, [][2]float64) []pathKey) { pathKeysOf = f }(pathKeysOf)
	pathKeysOf = func(w *trace.Walker, i int, r *trace.Rank, ss [][2]float64) []pathKey {
		reads.Add(1)
		return pathKeys(w, i, r, ss)
	}
	errs := make([]error, size)
	for r := 0; r < size; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := opt
			if r == 0 {
				o.Phase = func(name string) {
					if strings.HasPrefix(name, "path[") {
						run.path = name
					}
					if strings.HasPrefix(name, "part") {
						run.part = name
					}
					if name == "match" && atRecords != nil {
						atRecords()
					}
				}
			}
			x, err := InJobFile(chanComm{r, net}, dir, trace.RankPath(dir, r), o)
			errs[r] = err
			if r == 0 {
				res = x
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	run.exchanges, run.tokens, run.reads = int(net.a2as.Load())/size, int(net.tokens.Load()), int(reads.Load())
	run.sends, run.asyncs = int(net.sends.Load()), int(net.asyncs.Load())
	return res, run
}

// TestInJobAgrees: the analysis in the job (each rank on its own file,
// the ranks exchanging records) gives the offline result exactly, on the
// hand-made traces and on a synthetic one with messages, collectives and
// nonblocking requests.
func TestInJobAgrees(t *testing.T) {
	jobs := map[string][][]trace.Event{
		"late sender": {{send(fSend, 30000, 31000, 1)}, {recv(fRecv, 10000, 32000, 0)}},
		"late receiver": {{send(fSsend, 10000, 32000, 1), send(fSend, 40000, 40500, 1)},
			{recv(fRecv, 30000, 32500, 0), recv(fRecv, 50000, 50500, 0)}},
		"collectives": {{coll(fBarrier, 0, 21000, -1), coll(fBcast, 30000, 36000, 1), coll(fReduce, 40000, 49000, 0)},
			{coll(fBarrier, 10000, 21000, -1), coll(fBcast, 35000, 35500, 1), coll(fReduce, 43000, 43100, 0)},
			{coll(fBarrier, 20000, 21000, -1), coll(fBcast, 28000, 36000, 1), coll(fReduce, 48000, 48100, 0)}},
		"waitall": {{ir(1000, 1, 0xa), is(1500, 1, 0xb), done(25000, 0xa, 1), done(25000, 0xb, -1), call(fWaitall, 2000, 25000)},
			{ir(18000, 0, 0xa), is(20000, 0, 0xb), done(20500, 0xa, 0), done(20500, 0xb, -1), call(fWaitall, 20200, 20500)}},
		"critical path": {{call(fCommRank, 0, 100), send(fSend, 10000, 10100, 1)},
			{recv(fRecv, 0, 10200, 0), send(fSend, 30000, 30100, 2)},
			{recv(fRecv, 0, 30200, 1), call(fCommRank, 60000, 60100)}},
		"delay chain": chainJob(),
	}
	for name, ranks := range jobs {
		t.Run(name, func(t *testing.T) {
			dir := writeJob(t, ranks...)
			compareInJob(t, dir, len(ranks))
		})
	}
	// Two hosts, the second's clock samples 3000 ns off: rank 2's
	// receive seems to end before rank 0's send began, and the clock
	// repair (distributed in the job) shifts host b.
	t.Run("two hosts", func(t *testing.T) {
		dir := t.TempDir()
		hosts := []string{"a", "a", "b", "b"}
		evs := [][]trace.Event{
			{send(fSend, 10000, 10100, 2), coll(fBarrier, 20000, 30000, -1)},
			{coll(fBarrier, 21000, 30000, -1)},
			{recv(fRecv, 1000, 8000, 0), send(fSend, 9000, 9100, 3), coll(fBarrier, 22000, 30000, -1)},
			{recv(fRecv, 2000, 9500, 2), coll(fBarrier, 29000, 30000, -1)},
		}
		for r := range evs {
			var syncs []trace.Sync
			if r >= 2 {
				syncs = []trace.Sync{{LocalNs: 0, OffsetNs: -3000, RTTNs: 100 * uint64(r)}}
			}
			writeFile(t, trace.RankPath(dir, r), rankFileOn(t, r, 4, hosts[r], syncs, evs[r]))
		}
		res := compareInJob(t, dir, 4)
		// Host b shifted by +5000 ns: from rank 2's first entry (1000 -
		// 3000 + 5000) to its barrier's end (30000 - 3000 + 5000); not
		// repaired it would be -2000 to rank 0's 30000.
		if res.Messages != 2 || res.Colls != 1 || math.Abs(res.Seconds*1e9-29000) > 1e-3 {
			t.Errorf("%d messages, %d collectives, %.3f ns; want 2, 1, 29000", res.Messages, res.Colls, res.Seconds*1e9)
		}
	})
	// A damaged event block on rank 1: both analyze its events up to
	// there, with a warning naming the file (the warnings aside, the
	// same result); a damaged header leaves the rank out.
	t.Run("damaged", func(t *testing.T) {
		dir := writeJob(t,
			[]trace.Event{send(fSend, 30000, 31000, 1), send(fSend, 40000, 41000, 1)},
			[]trace.Event{recv(fRecv, 10000, 32000, 0), recv(fRecv, 35000, 42000, 0)})
		path := trace.RankPath(dir, 1)
		b, _ := os.ReadFile(path)
		b[len(b)-12] ^= 0xff
		writeFile(t, path, b)
		j, err := trace.OpenJob(dir)
		if err != nil {
			t.Fatal(err)
		}
		off, err := Analyze(j, Options{})
		if err != nil {
			t.Fatal(err)
		}
		in := inJob(t, dir, 2)
		if !strings.Contains(strings.Join(in.Warnings, "\n"), path) {
			t.Errorf("warnings %q do not name %s", in.Warnings, path)
		}
		off.Warnings, in.Warnings = nil, nil
		a, _ := json.Marshal(off)
		b, _ = json.Marshal(in)
		if !bytes.Equal(a, b) {
			t.Errorf("in the job:\n%s\noffline:\n%s", b, a)
		}
		b, _ = os.ReadFile(path)
		b[len(trace.Magic)+3] ^= 0xff
		writeFile(t, path, b)
		in = inJob(t, dir, 2)
		if !strings.Contains(strings.Join(in.Warnings, "\n"), path) || !slices.Equal(in.Ranks, []int{0}) || in.Unmatched != 2 {
			t.Errorf("rank 1 unreadable: ranks %v, %d ends unmatched, warnings %q; want [0], 2, naming %s", in.Ranks, in.Unmatched, in.Warnings, path)
		}
	})
	t.Run("synthetic", func(t *testing.T) {
		dir := t.TempDir()
		if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 40000, Seed: 3}); err != nil {
			t.Fatal(err)
		}
		res := compareInJob(t, dir, 4)
		if res.Messages != 8000 || res.Colls != 1010 || len(res.Rows) == 0 || res.Critical.Jumps == 0 {
			t.Errorf("%d messages, %d collectives, %d rows, %d jumps: want 8000, 1010 and some", res.Messages, res.Colls, len(res.Rows), res.Critical.Jumps)
		}
	})
	// Sizes that are no power of two: the trees and the token's end.
	for _, n := range []int{5, 7} {
		t.Run(fmt.Sprintf("synthetic %d ranks", n), func(t *testing.T) {
			dir := t.TempDir()
			if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: n, Events: uint64(n) * 2000, Seed: 5}); err != nil {
				t.Fatal(err)
			}
			if res := compareInJob(t, dir, n); res.Messages == 0 || len(res.Delays) == 0 {
				t.Errorf("%d messages, %d delay costs: want some", res.Messages, len(res.Delays))
			}
		})
	}
}

// TestInJobCounts: what the analysis in the job sends, on a hand-made
// chain of three ranks (0 sends to 1, then 1 to 2; each receive waits):
// the exchanges (the records and their wait candidates, the delay costs'
// waits), the point-to-point messages (P - 1 up a tree and as many down
// for the metadata, the jumps up a binomial tree to the end rank and its
// replies down it (P - 1 each way, since 2026-11-29), P - 1 up a
// tree for the parts gathered at rank 0; the time origin, the rounds and
// the last rank to finish travel with the metadata and the records,
// since 2026-11-28) and the delay costs' messages (each rank with a wait
// passes it on once: rank 2 to 1, then 1 to 0). With the path by pointer
// doubling (its jumps not gathered): its one exchange per level and 3,
// and its verdict's reduction (P - 1 up, P - 1 down) beside the jumps'
// messages and the replies that say to double.
func TestInJobCounts(t *testing.T) {
	dir := writeJob(t, []trace.Event{call(fCommRank, 0, 100), send(fSend, 10000, 10100, 1)},
		[]trace.Event{recv(fRecv, 0, 10200, 0), send(fSend, 30000, 30100, 2)},
		[]trace.Event{recv(fRecv, 0, 30200, 1), call(fCommRank, 60000, 60100)})
	for _, double := range []bool{false, true} {
		if double {
			defer func(f func(int64, int64) bool) { pathGatherFits = f }(pathGatherFits)
			pathGatherFits = func(int64, int64) bool { return false }
		}
		res, run := inJobOpt(t, dir, 3, Options{})
		levels, px := pathExchanges(t, run.path)
		wl, wx, sends := 0, 0, 5*(3-1)
		if double {
			wl, wx, sends = 1, 4, 7*(3-1)
		}
		if res.Critical.Jumps != 2 || levels != wl || px != wx || strings.HasSuffix(run.path, ",gathered]") == double {
			t.Fatalf("doubling %v: path of %d jumps, %d levels, %d exchanges (%s); want 2, %d, %d", double, res.Critical.Jumps, levels, px, run.path, wl, wx)
		}
		if run.exchanges != 2+1+px || run.sends != sends || run.asyncs != 2 || run.tokens != 0 {
			t.Errorf("doubling %v: %d exchanges, %d point-to-point messages, %d delay messages, %d tokens; want %d, %d, 2, 0",
				double, run.exchanges, run.sends, run.asyncs, run.tokens, 2+1+px, sends)
		}
	}
}

func compareInJob(t *testing.T, dir string, size int) *Result {
	j, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	off, err := Analyze(j, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.MarshalIndent(off, "", " ")
	// With the default bound, with one that makes the ranks exchange and
	// match their records in rounds (the candidates kept in files by call
	// meanwhile) beside the log of their calls, and with one so small
	// that the log does not fit (about 20 rounds): the same result.
	most := uint64(0)
	for _, r := range j.Ranks {
		most = max(most, r.Events)
	}
	tiny := max(1, int64(most)*recBytes*jobCopies/20)
	mid := max(1, int64(most)*callLogBytes*3)
	for _, bound := range []int64{0, mid, tiny} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		// Where each rank reads its trace once, the files are taken away
		// once the records are exchanged: nothing may read them again.
		var hide func()
		if bound != tiny {
			hide = func() {
				for _, r := range j.Ranks {
					if err := os.Rename(r.Path, r.Path+".away"); err != nil {
						t.Error(err)
					}
				}
			}
		}
		in, run := inJobRun(t, dir, size, Options{Memory: bound}, hide)
		if hide != nil {
			for _, r := range j.Ranks {
				if err := os.Rename(r.Path+".away", r.Path); err != nil {
					t.Fatal(err)
				}
			}
		}
		b, _ := json.MarshalIndent(in, "", " ")
		if !bytes.Equal(a, b) {
			t.Errorf("in the job, bound %d:\n%s\noffline:\n%s", bound, b, a)
		}
		// Each rank reads its trace once, its calls logged by its walk
		// for the path's shares; with the small bound the log does not
		// fit, each rank reads its trace again and rank 0's timing says
		// so.
		reads, part := 0, "part"
		for _, r := range j.Ranks {
			if _, log := jobPlan(r.Events, bound); !log {
				reads++
				if r.Header.Rank == 0 {
					part = "part[trace read again]"
				}
			}
		}
		if (bound == tiny) != (reads > 0) {
			t.Fatalf("bound %d: %d ranks without the log", bound, reads) // not what the bounds were chosen for
		}
		if run.reads != reads || run.part != part {
			t.Errorf("bound %d: %d ranks read their trace again, rank 0's phase %q; want %d, %q", bound, run.reads, run.part, reads, part)
		}
		// Each round is two exchanges (records, candidates), the delay
		// costs one, and the clock repair one more with several hosts;
		// the critical path one per level of its pointer doubling and
		// three (pathCost), and no token (tokenReplay: one per jump).
		// The rounds are the most any rank needs: not always the rank of
		// most events (one that logs its calls has less of the bound
		// for its records).
		rounds := 0
		for _, r := range j.Ranks {
			rounds = max(rounds, jobRounds(r.Events, bound))
		}
		levels, px := pathExchanges(t, run.path)
		n := run.exchanges - px
		if bound != 0 && rounds < 10 || n != 2*rounds+1 && n != 2*rounds+2 {
			t.Errorf("bound %d: %d exchanges besides the path's, want 2 x %d rounds and one (at least 10 rounds with the small bounds)", bound, n, rounds)
		}
		// With the default bound the jumps are gathered at the end rank
		// (no exchange); the small bounds leave them no room there
		// (under an eighth of a jump per event), and the ranks fall back
		// to the doubling.
		gathered := strings.HasSuffix(run.path, ",gathered]")
		if gathered != (bound == 0) {
			t.Errorf("bound %d: the path's phase %q; gathered at the end rank: want %v", bound, run.path, bound == 0)
		}
		wl, wx := pathCost(off.Critical.Jumps)
		if gathered {
			wl, wx = 0, 0
		}
		if (off.Critical.Jumps > 0 || px > 0) && (px != wx || levels != wl || run.tokens != 0) {
			t.Errorf("bound %d: the path (%d jumps) in %d exchanges, %d levels, %d tokens; want %d, %d, no token",
				bound, off.Critical.Jumps, px, levels, run.tokens, wx, wl)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("bound %d: %d files left in the temporary directory", bound, len(left))
		}
	}
	return off
}

// pathExchanges reads the levels and exchanges of the critical path from
// its phase's name (path[levels=L,exchanges=X,...]).
func pathExchanges(t *testing.T, name string) (int, int) {
	t.Helper()
	var l, x int
	if name == "" {
		return 0, 0
	}
	if _, err := fmt.Sscanf(name, "path[levels=%d,exchanges=%d,", &l, &x); err != nil {
		t.Fatalf("phase %q: %v", name, err)
	}
	return l, x
}

// TestPathDoubling: the critical path by pointer doubling (doublingReplay)
// against the offline backward replay, on random jumps: the same segments
// on every rank, start rank and jumps, exactly. Coarse times make ties and
// zero-length stretches, where the replay's cursor decides and the ranks
// fall back to the token; elsewhere no token is sent and the exchanges are
// one per doubling level and three, the levels floor(log2) of the path's
// jumps (pathCost: floor(log2 T) + 3 exchanges for a path of T jumps).
func TestPathDoubling(t *testing.T) {
	type cfg struct {
		size, jumps, grid, spread int
		tokens                    bool // some seeds must fall back
	}
	for _, c := range []cfg{{4, 3000, 1 << 40, 20, false}, {5, 500, 1 << 30, 20, false}, {1, 200, 1 << 30, 20, false}, {3, 60, 40, 20, false},
		{3, 30, 100, 1, true}, {6, 0, 10, 20, false}, {2, 300, 1 << 30, 20, false}, {8, 200, 1 << 30, 20, false}, {32, 60, 1 << 30, 20, false}} {
		fell, long := 0, 0
		for seed := range 12 {
			rng := newMix(uint64(seed*131 + c.size))
			passes := make([]*rankPass, c.size)
			ws := make([]rankWaits, c.size)
			for r := range passes {
				p := newRankPass(r, r, 1)
				m := c.jumps
				if m > 0 {
					m = int(rng.next()%uint64(c.jumps)) + c.jumps/2
				}
				for range m {
					t1 := float64(rng.next()%uint64(c.grid) + 100)
					t0 := t1 - float64(rng.next()%uint64(c.spread))
					ready := t0 + float64(rng.next()%uint64(t1-t0+1))
					ws[r].jumps = append(ws[r].jumps, jump{t1: t1, t0: t0, ready: ready, partner: int32(rng.next() % uint64(c.size))})
				}
				ws[r].sortJumps()
				p.ncalls, p.first, p.last = 1, float64(rng.next()%50), float64(c.grid)+100+float64(rng.next()%uint64(c.grid))
				passes[r] = p
			}
			want := replay(passes, ws)
			// Gathered at the end rank (gatherReplay): the offline
			// replay's segments exactly, ties included, the start rank
			// and jumps on every rank, a message up the tree and one
			// down per rank but the end rank, no exchange; with a bound too small for the
			// jumps, the same messages and the ranks told to double.
			for _, bound := range []int64{DefaultJobMemory, 4 * gatherJumpBytes} {
				net := newChanNet(c.size)
				segs := make([][][2]float64, c.size)
				infos := make([]pathInfo, c.size)
				dones := make([]bool, c.size)
				errs := onRanks(net, func(r int, cc chanComm) (err error) {
					var st pathStats
					segs[r], dones[r], err = gatherReplay(cc, ws[r].jumps, passes[r], want.info.EndRank, bound, &infos[r], &st)
					if st.gathered != dones[r] {
						t.Errorf("%+v seed %d rank %d: gathered %v, done %v", c, seed, r, st.gathered, dones[r])
					}
					return err
				})
				all := 0
				for r := range c.size {
					all += len(ws[r].jumps)
				}
				for r := range c.size {
					if errs[r] != nil {
						t.Fatalf("%+v seed %d rank %d: %v", c, seed, r, errs[r])
					}
					if wd := bound == DefaultJobMemory || all <= 1; dones[r] != wd {
						t.Errorf("%+v seed %d bound %d rank %d: gathered %v, want %v (%d jumps)", c, seed, bound, r, dones[r], wd, all)
					}
					if !dones[r] {
						continue
					}
					if len(segs[r]) == 0 {
						segs[r] = nil
					}
					if !slices.Equal(segs[r], want.segs[r]) {
						t.Errorf("%+v seed %d rank %d: gathered segments %v, want %v", c, seed, r, segs[r], want.segs[r])
					}
					if infos[r].StartRank != want.info.StartRank || infos[r].Jumps != want.info.Jumps {
						t.Errorf("%+v seed %d rank %d: gathered start rank %d, %d jumps; want %d, %d", c, seed, r, infos[r].StartRank, infos[r].Jumps,
							want.info.StartRank, want.info.Jumps)
					}
				}
				if net.sends.Load() != int64(2*(c.size-1)) || net.a2as.Load() != 0 || net.tokens.Load() != 0 {
					t.Errorf("%+v seed %d bound %d: %d messages, %d exchanges, %d tokens; want %d, 0, 0", c, seed, bound,
						net.sends.Load(), net.a2as.Load(), net.tokens.Load(), 2*(c.size-1))
				}
				// Up and down a binomial tree (since 2026-11-29): no rank
				// receives more than ceil(log2 P) messages.
				for r := range c.size {
					if n := net.recvs[r].Load(); n > int64(bits.Len(uint(c.size-1))) {
						t.Errorf("%+v seed %d bound %d: rank %d received %d messages, want at most %d", c, seed, bound, r, n, bits.Len(uint(c.size-1)))
					}
				}
			}
			net := newChanNet(c.size)
			segs := make([][][2]float64, c.size)
			infos := make([]pathInfo, c.size)
			sts := make([]pathStats, c.size)
			errs := onRanks(net, func(r int, cc chanComm) (err error) {
				segs[r], err = doublingReplay(cc, ws[r].jumps, passes[r], want.info.EndRank, &infos[r], &sts[r])
				return err
			})
			st := sts[0]
			for r := range c.size {
				if errs[r] != nil {
					t.Fatalf("%+v seed %d rank %d: %v", c, seed, r, errs[r])
				}
				if len(segs[r]) == 0 {
					segs[r] = nil
				}
				if !slices.Equal(segs[r], want.segs[r]) {
					t.Errorf("%+v seed %d rank %d: segments %v, want %v", c, seed, r, segs[r], want.segs[r])
				}
				if sts[r].levels != st.levels || sts[r].exchanges != st.exchanges || sts[r].tokens != st.tokens {
					t.Errorf("%+v seed %d: rank %d's exchanges %+v, rank 0's %+v", c, seed, r, sts[r], st)
				}
			}
			// The start rank and the jumps are known where the path starts
			// (with the token) or everywhere (doubling).
			s := want.info.StartRank
			if infos[s].StartRank != s || infos[s].Jumps != want.info.Jumps {
				t.Errorf("%+v seed %d: start rank %d, %d jumps; want %d, %d", c, seed, infos[s].StartRank, infos[s].Jumps, s, want.info.Jumps)
			}
			tokens := int(net.tokens.Load())
			if st.tokens {
				fell++
				continue
			}
			if wl, wx := pathCost(want.info.Jumps); tokens != 0 || st.exchanges != wx || st.levels != wl || net.a2as.Load() != int64(c.size*wx) {
				t.Errorf("%+v seed %d: %d jumps in %d exchanges (%d levels, %d over the ranks), %d tokens; want %d (%d levels), no token",
					c, seed, want.info.Jumps, st.exchanges, st.levels, net.a2as.Load(), tokens, wx, wl)
			}
			if want.info.Jumps > 1000 {
				long++
			}
		}
		if c.tokens != (fell > 0) || fell == 12 {
			t.Errorf("%+v: %d of 12 paths replayed by the token", c, fell)
		}
		if c.jumps >= 3000 && long == 0 {
			t.Errorf("%+v: no path of over 1000 jumps", c)
		}
	}
}

// mixRand is splitmix64, for tests that must not depend on math/rand's
// sequence.
type mixRand struct{ s uint64 }

func newMix(seed uint64) *mixRand { return &mixRand{seed} }

func (r *mixRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	return mix64(r.s)
}

// TestJobPlanWithinBound: in the job, the one-sided records' share, the
// call log (when planned) and a round's message records (their expected
// share: the rank's records over the rounds) together stay within the
// bound, for ranks of 10^3 to 10^8 events and bounds of 1 MiB to 1 GiB
// (the rounds' cap, maxRounds, aside).
func TestJobPlanWithinBound(t *testing.T) {
	for _, bound := range []int64{1 << 20, 4 << 20, DefaultJobMemory, 1 << 30} {
		for _, events := range []uint64{1e3, 1e4, 1e5, 1e6, 1e7, 1e8} {
			rounds, log := jobPlan(events, bound)
			if rounds >= maxRounds {
				continue
			}
			used := rmaJobShare(bound) + int64(events)*recBytes*jobCopies/int64(rounds)
			if log {
				used += int64(events) * callLogBytes
			}
			if used > bound {
				t.Errorf("bound %d, %d events: %d rounds, log %v: %d bytes planned", bound, events, rounds, log, used)
			}
		}
	}
}

// BenchmarkInJob runs the analysis in the job on goroutines (chanComm:
// the exchanges cost a copy, so this is the ranks' own work) over a
// synthetic job of 8 ranks and about 400,000 events (trace.WriteSynth,
// written once per machine), or over the traced run in
// $MPISCOPE_BENCH_INJOB (the job's directory, which holds trace/). It
// reports the process' CPU and heap allocations per event, in all and in
// each phase (the ranks meet at a barrier at each phase's end: the CPU
// between two is that phase's over all ranks), and the critical path's
// exchanges and KiB sent by all ranks.
func BenchmarkInJob(b *testing.B) {
	dir := os.Getenv("MPISCOPE_BENCH_INJOB")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "mpiscope-bench-injob-8x4e5")
		if _, err := os.Stat(filepath.Join(dir, "ok")); err != nil {
			os.RemoveAll(dir)
			if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 8, Events: 400_000, Seed: 1}); err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "ok"), nil, 0o666)
		}
	}
	j, err := trace.OpenJob(dir)
	if err != nil {
		b.Fatal(err)
	}
	size := len(j.Ranks)
	var events uint64
	for _, r := range j.Ranks {
		events += r.Events
	}
	phases := map[string]time.Duration{}
	allocs := map[string]uint64{}
	var exchanges, kb int
	var order []string
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		net := newChanNet(size)
		var wg sync.WaitGroup
		errs := make([]error, size)
		last, lastA := cpuTime(), heapAllocs()
		// Every rank's phase ends meet at a barrier, whose last arrival
		// charges the phase: its CPU and allocations over all ranks.
		var mu sync.Mutex
		cond := sync.NewCond(&mu)
		arrived, gen := 0, 0
		phase := func(name string) {
			mu.Lock()
			defer mu.Unlock()
			var l, x, k int
			if _, err := fmt.Sscanf(name, "path[levels=%d,exchanges=%d,kb=%d", &l, &x, &k); err == nil {
				exchanges, kb = x, kb+k
			}
			if arrived++; arrived < size {
				for g := gen; g == gen; {
					cond.Wait()
				}
				return
			}
			if k := strings.IndexByte(name, '['); k > 0 {
				name = name[:k]
			}
			now, a := cpuTime(), heapAllocs()
			if _, ok := phases[name]; !ok {
				order = append(order, name)
			}
			phases[name] += now - last
			allocs[name] += a - lastA
			last, lastA = now, a
			arrived, gen = 0, gen+1
			cond.Broadcast()
		}
		for r := range size {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[r] = InJobFile(chanComm{r, net}, dir, trace.RankPath(dir, r), Options{Phase: phase})
			}()
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				b.Fatalf("rank %d: %v", r, err)
			}
		}
	}
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(events)/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(exchanges), "path-exchanges")
	b.ReportMetric(float64(kb)/float64(b.N), "path-KiB-sent")
	for _, name := range order {
		b.ReportMetric(float64(phases[name].Nanoseconds())/float64(events)/float64(b.N), name+"-ns/event")
		b.ReportMetric(float64(allocs[name])/float64(events)/float64(b.N), name+"-B-alloc/event")
	}
}

// heapAllocs is the bytes allocated on the heap so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
