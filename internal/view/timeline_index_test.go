package view

import (
	"bytes"
	"cmp"
	"compress/flate"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// refCall is a call as a whole walk of the trace gives it.
type refCall struct {
	t0, t1, bytes int64
	fn            string
	peer          int
}

// reference walks the whole trace: each rank's calls by t0, and the
// messages (sender, send time, receiver, receive time, bytes) by flow.
func reference(t *testing.T, dir string) ([][]refCall, map[[5]int64]int) {
	t.Helper()
	job, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := trace.NewWalker(job, trace.WalkOptions{})
	calls := make([][]refCall, len(job.Ranks))
	type end struct{ rank, t, bytes int64 }
	sends, recvs := map[uint64]end{}, map[uint64]end{}
	for i := range job.Ranks {
		v := callFunc(func(k *trace.Call) error {
			c := refCall{t0: int64(math.Round(k.T0)), t1: int64(math.Round(k.T1)), fn: k.Fn, peer: -1}
			switch {
			case k.Send != nil:
				c.bytes, c.peer = k.Send.Bytes, k.Send.Peer
			case k.Recv != nil:
				c.bytes, c.peer = k.Recv.Bytes, k.Recv.Peer
			case k.RecvPost != nil:
				c.bytes, c.peer = k.RecvPost.Bytes, k.RecvPost.Peer
			case k.Coll:
				c.bytes = k.CollBytes
			}
			calls[i] = append(calls[i], c)
			for _, m := range append([]trace.Msg{}, k.StartSend...) {
				sends[m.Flow] = end{int64(k.Rank), c.t0, m.Bytes}
			}
			if k.Send != nil {
				sends[k.Send.Flow] = end{int64(k.Rank), c.t0, k.Send.Bytes}
			}
			if k.Recv != nil {
				recvs[k.Recv.Flow] = end{int64(k.Rank), c.t1, k.Recv.Bytes}
			}
			for _, m := range k.RecvDone {
				recvs[m.Flow] = end{int64(k.Rank), c.t1, m.Bytes}
			}
			return nil
		})
		if err := w.WalkRank(i, v); err != nil {
			t.Fatal(err)
		}
		slices.SortStableFunc(calls[i], func(a, b refCall) int { return cmp.Compare(a.t0, b.t0) })
	}
	msgs := map[[5]int64]int{}
	for f, s := range sends {
		if r, ok := recvs[f]; ok && f != 0 {
			msgs[[5]int64{s.rank, s.t, r.rank, r.t, s.bytes}]++
		}
	}
	return calls, msgs
}

type callFunc func(c *trace.Call) error

func (f callFunc) Call(c *trace.Call) error                   { return f(c) }
func (callFunc) Region(int, int, bool, string, float64) error { return nil }
func (callFunc) Mark(int, int, string, float64) error         { return nil }

// indexed tells whether the message index has reached every block.
func indexed(tl *timeline) bool {
	for _, bs := range tl.blocks {
		for _, b := range bs {
			if b.msg.Load() == nil {
				return false
			}
		}
	}
	return true
}

// windowRefMsgs are the messages of the whole walk that a window of
// [t0, t1) between all ranks draws: sent from t0-(t1-t0) on and before t1,
// received from t0 on.
func windowRefMsgs(ref map[[5]int64]int, t0, t1 int64) []string {
	var l []string
	for m, n := range ref {
		if m[1] < t1 && m[3] >= t0 && m[1] >= t0-(t1-t0) {
			for range n {
				l = append(l, fmt.Sprint(m))
			}
		}
	}
	slices.Sort(l)
	return l
}

// TestTimelineEnd: a synthetic trace of 4 ranks in blocks of 30,000 events
// (100,000 events per rank: 4 blocks each). A window near the end of the
// run holds exactly the calls and messages a whole walk of the trace has
// there, and only the blocks that hold it were read; its messages are
// exactly the walk's whether the message index was made at load or in the
// background (the view once walked the messages from the start of the
// trace over at most 20 million calls, which the background case, cut at
// 8,000 calls, could not reach); the whole run in bins has each lane's MPI
// time, decoded and again from the blocks' summaries.
func TestTimelineEnd(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 4, Events: 400_000, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	ref, refMsgs := reference(t, dir)
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprint("background=", lazy), func(t *testing.T) {
			if lazy {
				old := syncMsgs
				syncMsgs = 1000
				defer func() { syncMsgs = old }()
			}
			tl, err := loadTimeline(dir)
			if err != nil {
				t.Fatal(err)
			}
			if lazy {
				if indexed(tl) {
					t.Fatal("messages indexed at load")
				}
				tl.startMsgs()
			}
			for !indexed(tl) {
				time.Sleep(time.Millisecond)
			}
			if len(tl.ranks) != 4 || len(tl.blocks[0]) != 4 {
				t.Fatalf("%d ranks, %d blocks of rank 0", len(tl.ranks), len(tl.blocks[0]))
			}
			// What the index keeps a block: each rank of the ring sends to
			// its 2 neighbours and receives from them (4 channels), and
			// at most the 4 requests of one exchange are pending.
			for _, bs := range tl.blocks {
				for _, b := range bs {
					m, posts := b.msg.Load(), 0
					for _, l := range m.posts {
						posts += len(l)
					}
					if len(m.counts) != 4 || posts > 4 {
						t.Errorf("rank %d, block at %d: %d channels, %d requests pending", b.rank, b.t0, len(m.counts), posts)
					}
				}
			}
			// The last 2 ms: calls that end after t0 and start before t1.
			t1 := tl.end + 1
			t0 := t1 - 2_000_000
			w := tl.window(t0, t1, 0, 3, 1000)
			if w.Mode != "calls" || w.Total != len(w.Calls) || w.Total == 0 {
				t.Fatalf("end window: mode %s, %d of %d calls", w.Mode, len(w.Calls), w.Total)
			}
			var want, got []string
			for i, rc := range ref {
				for _, c := range rc {
					if c.t1 > t0 && c.t0 < t1 || c.t0 == t0 {
						want = append(want, fmt.Sprint(i, c.t0, c.t1, c.fn, c.bytes, c.peer))
					}
				}
			}
			for _, c := range w.Calls {
				got = append(got, fmt.Sprint(c[0], c[1], c[2], w.Funcs[c[3]], c[4], c[5]))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("end window: %d calls, want %d\n%.2000s\nwant\n%.2000s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Only the last block of each rank, or its last two, was read.
			for b := range tl.cache {
				if b.t1 < t0 {
					t.Errorf("block of rank %d at %d..%d read for a window from %d", b.rank, b.t0, b.t1, t0)
				}
			}
			if len(tl.cache) < 4 || len(tl.cache) > 8 {
				t.Errorf("%d blocks read", len(tl.cache))
			}
			// The messages, here and at other places of the run: the
			// start, the middle, across the start of rank 0's second
			// block, from the start of its third (requests posted in the
			// block before and completed in it).
			b1, b2 := tl.blocks[0][1].t0, tl.blocks[0][2].t0
			for _, a := range []int64{t0, 0, tl.end / 2, tl.end / 3, t1 - 7_000_000, b1 - 1_000_000, b2} {
				w := w
				if a != t0 {
					w = tl.window(a, a+2_000_000, 0, 3, 1000)
				}
				want := windowRefMsgs(refMsgs, w.T0, w.T1)
				var got []string
				for _, m := range w.Msgs {
					got = append(got, fmt.Sprint([5]int64{int64(tl.ranks[m[0]]), m[1], int64(tl.ranks[m[2]]), m[3], m[4]}))
				}
				slices.Sort(got)
				if len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") || w.Mode != "calls" || len(w.Warnings) != 0 {
					t.Errorf("window from %d: %s, %d messages, want %d (warnings %q)\n%.1000s\nwant\n%.1000s", w.T0, w.Mode, len(got), len(want), w.Warnings,
						strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			// The whole run in 500 columns (from the blocks' summaries:
			// decoded on the first pass, kept for the second), and the
			// last 30 ms in 1,000 (columns narrower than a summary's
			// slices: per call): each lane's MPI time.
			for pass, a := range []int64{0, 0, t1 - 30_000_000} {
				b := tl.window(a, t1, 0, 3, 500*(1+pass/2))
				if b.Mode != "bins" {
					t.Fatalf("pass %d: %s", pass, b.Mode)
				}
				busy := make([]float64, 4)
				for _, x := range b.Bins {
					busy[int(x[0])] += x[2] * b.BinNs
				}
				for i, rc := range ref {
					var w float64
					for _, c := range rc {
						w += float64(max(min(c.t1, t1)-max(c.t0, a), 0))
					}
					if math.Abs(busy[i]-w) > 1e-6*w || w == 0 {
						t.Errorf("pass %d: rank %d: %.0f ns in MPI in the bins, want %.0f", pass, i, busy[i], w)
					}
				}
			}
		})
	}
}

// TestTimelineCache: the decoded blocks kept stay within cacheCalls.
func TestTimelineCache(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 2, Events: 200_000, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	old := cacheCalls
	cacheCalls = 50_000
	defer func() { cacheCalls = old }()
	tl, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	tl.window(0, tl.end+1, 0, 1, 100)
	if tl.cached > cacheCalls || len(tl.cache) == 0 || len(tl.cache) != len(tl.lru) {
		t.Errorf("%d calls in %d cached blocks (%d in the LRU list), bound %d", tl.cached, len(tl.cache), len(tl.lru), cacheCalls)
	}
	for _, bs := range tl.blocks {
		for _, b := range bs {
			if b.sum.Load() == nil {
				t.Errorf("block of rank %d at %d has no summary", b.rank, b.t0)
			}
		}
	}
}

// TestTimelineLazyMessages: on a trace beyond syncMsgs events the messages
// are indexed from the first window of single calls on, in the background:
// that window says so, and a later one has them.
func TestTimelineLazyMessages(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 2, Events: 20_000, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	old := syncMsgs
	syncMsgs = 1000
	defer func() { syncMsgs = old }()
	tl, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b := tl.window(0, tl.end+1, 0, 1, 100); b.Mode != "bins" || tl.blocks[0][0].msg.Load() != nil {
		t.Fatalf("whole run: %s; messages indexed: %v", b.Mode, tl.blocks[0][0].msg.Load() != nil)
	}
	w := tl.window(0, 2_000_000, 0, 1, 100)
	// (The background index may already have read this window's blocks:
	// then it has its messages and no warning.)
	reading := strings.Contains(strings.Join(w.Warnings, ";"), "messages are being read")
	if w.Mode != "calls" || reading != (len(w.Msgs) == 0) {
		t.Fatalf("first window of calls: %s, %d messages, %q", w.Mode, len(w.Msgs), w.Warnings)
	}
	for !indexed(tl) {
		time.Sleep(time.Millisecond)
	}
	if w = tl.window(0, 2_000_000, 0, 1, 100); len(w.Msgs) == 0 || len(w.Warnings) != 0 {
		t.Errorf("then: %d messages, %q", len(w.Msgs), w.Warnings)
	}
}

// TestTimelinePartial: a zoomed-out window whose blocks hold more than
// budgetEvents events without summaries decodes about that many now and
// says it is partial; the rest are summarized in the background, after
// which the same window has every lane's MPI time.
func TestTimelinePartial(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 2, Events: 400_000, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	ref, _ := reference(t, dir)
	old := budgetEvents
	budgetEvents = 60_000 // 2 of the 14 blocks (7 per rank, 30,000 events each but the last)
	defer func() { budgetEvents = old }()
	tl, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	w := tl.window(0, tl.end+1, 0, 1, 200)
	if !w.Partial || w.Pending != 12 || w.Mode != "bins" {
		t.Fatalf("first answer: partial %v, %d blocks pending, %s", w.Partial, w.Pending, w.Mode)
	}
	// A later answer has no more blocks pending.
	if w2 := tl.window(0, tl.end+1, 0, 1, 200); w2.Partial && w2.Pending > 12 {
		t.Errorf("second answer: %d blocks pending", w2.Pending)
	}
	for done := false; !done; {
		time.Sleep(time.Millisecond)
		done = true
		for _, bs := range tl.blocks {
			for _, b := range bs {
				done = done && b.sum.Load() != nil
			}
		}
	}
	w = tl.window(0, tl.end+1, 0, 1, 200)
	if w.Partial || w.Pending != 0 {
		t.Fatalf("then: partial %v, %d pending", w.Partial, w.Pending)
	}
	busy := make([]float64, 2)
	for _, x := range w.Bins {
		busy[int(x[0])] += x[2] * w.BinNs
	}
	for i, rc := range ref {
		var want float64
		for _, c := range rc {
			want += float64(c.t1 - c.t0)
		}
		if math.Abs(busy[i]-want) > 1e-6*want {
			t.Errorf("rank %d: %.0f ns in MPI, want %.0f", i, busy[i], want)
		}
	}
}

// reblock rewrites each rank file of the trace in dir with its events in
// blocks of n events (cut anywhere in an exchange), each event passed
// through edit first.
func reblock(t *testing.T, dir string, n int, edit func(rank int, e *trace.Event)) {
	t.Helper()
	job, err := trace.OpenJob(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range job.Ranks {
		data, err := os.ReadFile(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		br, err := trace.NewBlockReader(bytes.NewReader(data), r.Path)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		bw, err := trace.NewBlockWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		var evs []trace.Event
		tid := 0
		fw, _ := flate.NewWriter(nil, flate.BestSpeed)
		var scratch bytes.Buffer
		for {
			kind, p, err := br.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch kind {
			case trace.BEvents:
				tid, evs, err = trace.DecodeEvents(p, evs)
				if err != nil {
					t.Fatal(err)
				}
			case trace.BFinal:
				for i := 0; i < len(evs); i += n {
					part := evs[i:min(i+n, len(evs))]
					for k := range part {
						edit(r.Header.Rank, &part[k])
					}
					b, err := trace.AppendEvents(nil, tid, part, fw, &scratch)
					if err != nil {
						t.Fatal(err)
					}
					bw.Block(trace.BEvents, b)
				}
				bw.Block(kind, p)
			default:
				bw.Block(kind, p)
			}
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(r.Path, out.Bytes(), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTimelineMessagesAnywhere: the synthetic ring of 3 ranks with its
// events in blocks of 7,777 (a block may end between a receive's posting
// and its completion, or between the completions and their MPI_Waitall),
// every receive of rank 1 posted with MPI_ANY_SOURCE and MPI_ANY_TAG (its
// source and tag known from the status). Indexed in the background, a
// window of 2 ms across each block's start of each rank, one from its
// start, and one from 2 ms after (the first whose messages need no block
// before: those pending at its start are the index's), holds exactly the
// messages of a whole walk.
func TestTimelineMessagesAnywhere(t *testing.T) {
	dir := t.TempDir()
	if err := trace.WriteSynth(dir, trace.SynthSpec{Ranks: 3, Events: 90_000, Seed: 6}); err != nil {
		t.Fatal(err)
	}
	reblock(t, dir, 7777, func(rank int, e *trace.Event) {
		if rank == 1 && e.Kind == trace.KCall && e.Flags&trace.FRecv != 0 {
			e.RPeer, e.RTag = -2, -1
		}
	})
	_, refMsgs := reference(t, dir)
	old := syncMsgs
	syncMsgs = 1000
	defer func() { syncMsgs = old }()
	tl, err := loadTimeline(dir)
	if err != nil {
		t.Fatal(err)
	}
	tl.startMsgs()
	for !indexed(tl) {
		time.Sleep(time.Millisecond)
	}
	if len(tl.blocks[0]) != 4 {
		t.Fatalf("%d blocks of rank 0, want 4 (30,000 events)", len(tl.blocks[0]))
	}
	posts, pend := 0, 0
	for _, bs := range tl.blocks {
		for _, b := range bs {
			m := b.msg.Load()
			posts += len(m.posts)
			for _, l := range m.pend {
				pend += len(l)
			}
		}
	}
	if posts == 0 || pend == 0 {
		t.Fatalf("no block starts with requests pending (%d) or completions before their call (%d): the test tests nothing", posts, pend)
	}
	windows := 0
	for _, bs := range tl.blocks {
		for _, b := range bs {
			for _, a := range []int64{b.t0 - 1_000_000, b.t0, b.t0 + 2_000_001} {
				w := tl.window(a, a+2_000_000, 0, 2, 1000)
				want := windowRefMsgs(refMsgs, w.T0, w.T1)
				var got []string
				for _, m := range w.Msgs {
					got = append(got, fmt.Sprint([5]int64{int64(tl.ranks[m[0]]), m[1], int64(tl.ranks[m[2]]), m[3], m[4]}))
				}
				slices.Sort(got)
				if w.Mode != "calls" || len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") || len(w.Warnings) != 0 {
					t.Errorf("window from %d (block of rank %d): %s, %d messages, want %d (warnings %q)", a, b.rank, w.Mode, len(got), len(want), w.Warnings)
				}
				windows++
			}
		}
	}
	if windows != 36 {
		t.Errorf("%d windows", windows)
	}
}
