package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/cli"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// runInJob runs a case of waits.c with MPISCOPE_ANALYZE=1 (the trace
// started by the program's MPI_Pcontrol(6)) and returns the profile's
// analysis section, `mpiscope analyze -format json`'s result on the same
// trace, and the program's entry times.
func runInJob(t *testing.T, f mpitest.Family, np int, args ...string) (*profile.Analysis, *analyze.Result, entries) {
	t.Helper()
	off, in, e := runJob(t, f, np, true, "analyze/waits.c", nil, args...)
	return in, off, e
}

// sameAnalysis checks that the analysis in the job and `mpiscope analyze`
// agree exactly (the warnings aside, which each reports as it meets them).
func sameAnalysis(t *testing.T, in *profile.Analysis, off *analyze.Result) {
	t.Helper()
	want := off.Profile()
	a, b := *in, *want
	a.Warnings, b.Warnings = nil, nil
	if !reflect.DeepEqual(a, b) {
		x, _ := json.MarshalIndent(a, "", " ")
		y, _ := json.MarshalIndent(b, "", " ")
		t.Errorf("in the job:\n%s\nmpiscope analyze:\n%s", x, y)
	}
	if len(in.Rows) == 0 || in.Messages+in.Colls == 0 {
		t.Errorf("%d rows, %d messages, %d collectives: an empty analysis", len(in.Rows), in.Messages, in.Colls)
	}
}

// TestInJobAgreesE2E: each case of waits.c analyzed in the job, on both
// families: the profile's analysis section is exactly `mpiscope analyze`'s
// result on the job's trace, and its waits are the program's (the late
// sender case checked against the program's own entry times, as
// TestAnalyzeLateSender does).
func TestInJobAgreesE2E(t *testing.T) {
	cases := []struct {
		np   int
		args []string
	}{{2, []string{"late-sender", "0"}}, {4, []string{"barrier"}}, {3, []string{"bcast"}}, {2, []string{"ssend"}},
		{2, []string{"nonblocking"}}, {4, []string{"pipeline"}}}
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, c := range cases {
			t.Run(strings.Join(c.args, "-"), func(t *testing.T) {
				in, off, e := runInJob(t, f, c.np, c.args...)
				sameAnalysis(t, in, off)
				if c.args[0] != "late-sender" {
					return
				}
				w := 0.0
				for i := 0; i < iter; i++ {
					if d := e.get(t, 0, i, "send") - e.get(t, 1, i, "recv"); d > 0 {
						w += d / 1e9
					}
				}
				if got := in.Patterns[analyze.LateSender].ByRank[1]; math.Abs(got-w) > 0.1*w+0.0005 {
					t.Errorf("late sender on rank 1: %.6f s, want %.6f s within 10 %%", got, w)
				}
			})
		}
	})
}

// TestDelayChain: rank 2 computes 30 ms before the chain 2 -> 3 -> 0 -> 1
// of sends: the waiting of ranks 3, 0 and 1 is all caused there, so the
// delay cost of rank 2's MPI_Send (its callsite in waits.c) equals the
// job's waiting within 10 %: its short-term part rank 3's wait, its long
// term the waits it propagated to ranks 0 and 1. In the job and offline
// alike.
func TestDelayChain(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		in, off, e := runInJob(t, f, 4, "chain")
		sameAnalysis(t, in, off)
		// The waiting rank 2's computation caused, as run (the
		// program's entry times): rank 3's wait for rank 2's send (short
		// term), and the parts of rank 0's and rank 1's waits during
		// which their predecessor was itself still waiting for rank 2
		// (long term). On an idle machine all three are 30 ms an
		// iteration; on a loaded one a rank can take long to pass the
		// message on, and that time is its own (the delay costs of ranks
		// 3 and 0).
		var short, long float64
		for i := 0; i < iter; i++ {
			e2 := e.get(t, 2, i, "send")
			from := e.get(t, 3, i, "recv")
			short += max(0, e2-from) / 1e9
			for _, r := range []int{0, 1} {
				from = max(from, e.get(t, r, i, "recv"))
				long += max(0, e2-from) / 1e9
			}
		}
		total := short + long
		var waits float64
		for _, p := range in.Patterns {
			waits += p.Seconds
		}
		if len(in.Delays) == 0 {
			t.Fatalf("no delay costs")
		}
		d := in.Delays[0]
		if d.Rank != 2 || d.Func != "MPI_Send" || !strings.HasPrefix(d.Callsite, "waits.c:") && !strings.Contains(d.Callsite, "/waits.c:") {
			t.Errorf("the largest delay cost: %+v, want rank 2's MPI_Send in waits.c", d)
		}
		if math.Abs(d.Seconds-total) > 0.1*total {
			t.Errorf("rank 2's delay cost %.6f s, want the waiting it caused as run, %.6f s, within 10 %%", d.Seconds, total)
		}
		if math.Abs(d.Short-short) > 0.1*short || math.Abs(d.Long-long) > 0.1*long {
			t.Errorf("short term %.6f s, long term %.6f s; want %.6f and %.6f within 10 %%", d.Short, d.Long, short, long)
		}
		t.Logf("delay cost of rank 2's %s at %s: %.6f s (short %.6f, long %.6f); caused as run %.6f s (short %.6f, long %.6f), nominal %.3f s; all waits %.6f s",
			d.Func, d.Callsite, d.Seconds, d.Short, d.Long, total, short, long, 0.09*iter, waits)
		var sum float64
		for _, x := range in.Delays {
			sum += x.Seconds
		}
		if math.Abs(sum-waits) > 1e-9*waits+1e-12 {
			t.Errorf("delay costs sum to %.9f s, waits %.9f s", sum, waits)
		}
		if t.Failed() {
			t.Log(fmt.Sprintf("%+v", in.Delays))
		}
	})
}

// TestInJobP2P: p2p.c traced from MPI_Init (blocking, nonblocking and
// persistent messages, MPI_ANY_SOURCE, a duplicate of MPI_COMM_WORLD)
// analyzed in the job with MPISCOPE_ANALYZE_MEM=256K (2,520 events per
// rank: the records exchanged and matched in four rounds, through spill
// files, beside the log of each rank's calls): exactly `mpiscope
// analyze`'s result, every message matched, each rank's trace read once.
func TestInJobP2P(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) { p2pInJob(t, f, nil) })
}

// TestInJobPieces: TestInJobP2P with the exchanges' messages cut into
// pieces of 4096 bytes and of 49 (MPISCOPE_DEBUG_ANALYZE_PIECE; 64 MiB
// otherwise): at 49 every message of wait candidates (49 bytes each) is
// a whole number of pieces and ends with an empty one. The result is
// exactly `mpiscope analyze`'s, every message matched, and every rank
// sent more pieces than messages.
func TestInJobPieces(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for _, piece := range []int{4096, 49} {
			t.Run(fmt.Sprint(piece), func(t *testing.T) {
				stderr := p2pInJob(t, f, map[string]string{"MPISCOPE_DEBUG_ANALYZE_PIECE": fmt.Sprint(piece)})
				n := 0
				for _, l := range strings.Split(stderr, "\n") {
					var rank, p, msgs, pieces int
					if _, err := fmt.Sscanf(l, "mpiscope: analysis pieces: rank=%d piece=%d msgs=%d pieces=%d", &rank, &p, &msgs, &pieces); err != nil {
						continue
					}
					n++
					if p != piece || msgs == 0 || pieces <= msgs {
						t.Errorf("rank %d: pieces of %d bytes, %d messages in %d pieces; want %d bytes, more pieces than messages", rank, p, msgs, pieces, piece)
					}
				}
				if n != 4 {
					t.Errorf("%d ranks printed their pieces, want 4:\n%s", n, stderr)
				}
			})
		}
	})
}

// p2pInJob is TestInJobP2P's run and checks with env added; it returns
// the job's standard error.
func p2pInJob(t *testing.T, f mpitest.Family, env map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	prog := mpitest.Compile(t, f.MPICC, "p2p.c", dir)
	job := filepath.Join(dir, "job")
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_ANALYZE": "1",
		"MPISCOPE_TRACE": "1", "MPISCOPE_ANALYZE_MEM": "256K", "MPISCOPE_DEBUG_TIMING": "1"}
	for k, v := range env {
		e[k] = v
	}
	res := f.Exec(t, mpitest.Run{NP: 4, Env: e, Preload: f.Lib(), Args: []string{prog}, Dir: dir})
	if res.Err != nil {
		t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
	}
	p, _, err := profile.Load(job)
	if err != nil || p.Analysis == nil {
		t.Fatalf("no analysis (%v)\n%s", err, res.Stderr)
	}
	var out, errs bytes.Buffer
	if rc := cli.Run([]string{"analyze", "-format", "json", job}, &out, &errs); rc != 0 {
		t.Fatalf("mpiscope analyze: exit %d\n%s", rc, errs.String())
	}
	var off analyze.Result
	if err := json.Unmarshal(out.Bytes(), &off); err != nil {
		t.Fatal(err)
	}
	sameAnalysis(t, p.Analysis, &off)
	if n := strings.Count(res.Stderr, "analysis timing: rank="); n != 4 {
		t.Errorf("%d ranks printed their analysis timing, want 4:\n%s", n, res.Stderr)
	}
	// Each rank read its trace once: the path's calls from the log
	// its walk kept (30 KiB here, beside the records' rounds).
	if n := strings.Count(res.Stderr, " part="); n != 4 || strings.Contains(res.Stderr, "read again") {
		t.Errorf("%d ranks took the path's calls from their log, want 4:\n%s", n, res.Stderr)
	}
	// Per rank: 1000 + 100 + 50 + 5 + 20 + 6 messages received (the
	// left neighbour's and MPI_ANY_SOURCE's).
	if p.Analysis.Unmatched != 0 || p.Analysis.Messages != 4*(1000+100+50+5+20+6) {
		t.Errorf("%d messages matched, %d ends unmatched; want %d, 0", p.Analysis.Messages, p.Analysis.Unmatched, 4*(1000+100+50+5+20+6))
	}
	return res.Stderr
}

// TestInJobNoTrace: MPISCOPE_ANALYZE=1 without a trace warns once and the
// job and its profile go on without an analysis.
func TestInJobNoTrace(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "p2p.c", dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 2, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_ANALYZE": "1"},
			Preload: f.Lib(), Args: []string{prog}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
		}
		const w = "MPISCOPE_ANALYZE=1 needs the trace"
		if n := strings.Count(res.Stderr, w); n != 1 {
			t.Errorf("the warning %q %d times, want once:\n%s", w, n, res.Stderr)
		}
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if p.Analysis != nil || len(p.Funcs) == 0 {
			t.Errorf("analysis %+v, %d functions: want none and the profile", p.Analysis, len(p.Funcs))
		}
	})
}

// TestInterCollE2E: waits.c's inter case (collectives on an
// intercommunicator between ranks {0, 1} and {2, 3}), analyzed in the job
// and by `mpiscope analyze`, on both families: the same result, every
// collective instance matched, and the waits the program's entry times
// make (each group of a barrier or allreduce waiting for the other's last
// member; a broadcast's and a reduce's between the root and the other
// group, the root group's MPI_PROC_NULL ranks out of them).
func TestInterCollE2E(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		in, off, e := runInJob(t, f, 4, "inter")
		sameAnalysis(t, in, off)
		if off.Colls != 4*iter {
			t.Errorf("%d collectives matched, want %d", off.Colls, 4*iter)
		}
		grp := [2][]int{{0, 1}, {2, 3}}
		last := func(i int, what string, g []int) float64 {
			m := 0.0
			for _, r := range g {
				m = max(m, e.get(t, r, i, what))
			}
			return m
		}
		w := map[analyze.Pattern]map[int]float64{analyze.WaitBarrier: {}, analyze.LateBroadcast: {}, analyze.WaitNxN: {}, analyze.EarlyReduce: {}}
		for i := 0; i < iter; i++ {
			for s, g := range grp {
				for _, r := range g {
					w[analyze.WaitBarrier][r] += max(0, last(i, "barrier", grp[1-s])-e.get(t, r, i, "barrier")) / 1e9
					w[analyze.WaitNxN][r] += max(0, last(i, "allreduce", grp[1-s])-e.get(t, r, i, "allreduce")) / 1e9
				}
			}
			for _, r := range grp[1] {
				w[analyze.LateBroadcast][r] += max(0, e.get(t, 0, i, "bcast")-e.get(t, r, i, "bcast")) / 1e9
			}
			first := min(e.get(t, 0, i, "reduce"), e.get(t, 1, i, "reduce"))
			w[analyze.EarlyReduce][2] += max(0, first-e.get(t, 2, i, "reduce")) / 1e9
		}
		wantWaits(t, off, w, map[analyze.Pattern]map[int]float64{analyze.WaitBarrier: {0: 20, 1: 20}, analyze.LateBroadcast: {2: 20, 3: 20},
			analyze.WaitNxN: {2: 20, 3: 20}, analyze.EarlyReduce: {2: 20}})
	})
}
