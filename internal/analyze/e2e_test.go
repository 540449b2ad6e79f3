package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/cli"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
	"github.com/mpiscope/mpiscope/profile"
)

// runJob runs testdata/progs/<prog> on np ranks of family f under mpirun
// with the library preloaded, its trace and profile going to the job
// directory it returns (env adds to the environment: MPISCOPE_ANALYZE=1,
// OMPI_MCA_osc...), and the program's entry times. When inJob, the
// profile's analysis section made in the job (shown by `mpiscope
// report`) and `mpiscope analyze -format json`'s result on the same
// trace; else the offline analysis of the trace (analyze.Analyze). Either
// way every rank is analyzed.
func runJob(t *testing.T, f mpitest.Family, np int, inJob bool, prog string, env map[string]string, args ...string) (*analyze.Result, *profile.Analysis, entries) {
	t.Helper()
	dir := t.TempDir()
	exe := mpitest.Compile(t, f.MPICC, prog, dir)
	job := filepath.Join(dir, "job")
	e := map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"}
	if inJob {
		e["MPISCOPE_ANALYZE"] = "1"
	}
	for k, v := range env {
		e[k] = v
	}
	res := f.Exec(t, mpitest.Run{NP: np, Env: e, Preload: f.Lib(), Args: append([]string{exe}, args...), Dir: dir})
	if res.Err != nil {
		t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
	}
	var a *analyze.Result
	var in *profile.Analysis
	if inJob {
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if in = p.Analysis; in == nil {
			t.Fatalf("no analysis section in the profile\n%s", res.Stderr)
		}
		var out, errs bytes.Buffer
		if rc := cli.Run([]string{"report", job}, &out, &errs); rc != 0 || !strings.Contains(out.String(), "Trace analysis (in the job") {
			t.Errorf("mpiscope report: exit %d, no trace analysis section:\n%s%s", rc, out.String(), errs.String())
		}
		// The offline result to compare with: `mpiscope analyze`'s,
		// callsites resolved as in the job.
		out.Reset()
		if rc := cli.Run([]string{"analyze", "-format", "json", job}, &out, &errs); rc != 0 {
			t.Fatalf("mpiscope analyze: exit %d\n%s", rc, errs.String())
		}
		a = &analyze.Result{}
		if err := json.Unmarshal(out.Bytes(), a); err != nil {
			t.Fatal(err)
		}
	} else {
		j, err := trace.OpenJob(job)
		if err != nil {
			t.Fatal(err)
		}
		if a, err = analyze.Analyze(j, analyze.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(a.Ranks) != np {
		t.Fatalf("%d ranks analyzed, want %d", len(a.Ranks), np)
	}
	return a, in, parseEntries(t, res.Stdout)
}

// runWaits runs testdata/progs/analyze/waits.c's case and analyzes its
// trace offline.
func runWaits(t *testing.T, f mpitest.Family, np int, args ...string) (*analyze.Result, entries) {
	t.Helper()
	a, _, e := runJob(t, f, np, false, "analyze/waits.c", nil, args...)
	if a.Unmatched != 0 {
		t.Errorf("%d message ends unmatched, want 0", a.Unmatched)
	}
	return a, e
}

// entries are the times the program's ranks entered their traced calls
// (ns, CLOCK_MONOTONIC), by rank, iteration and call.
type entries map[entry]float64

type entry struct {
	rank, iter int
	what       string
}

func parseEntries(t *testing.T, out string) entries {
	t.Helper()
	e := entries{}
	for _, l := range strings.Split(out, "\n") {
		var k entry
		var ns int64
		if n, _ := fmt.Sscanf(l, "t %d %d %s %d", &k.rank, &k.iter, &k.what, &ns); n == 4 {
			e[k] = float64(ns)
		}
	}
	return e
}

// get returns an entry time, failing the test when the program did not
// print it.
func (e entries) get(t *testing.T, rank, i int, what string) float64 {
	t.Helper()
	v, ok := e[entry{rank, i, what}]
	if !ok {
		t.Fatalf("the program printed no time for rank %d, iteration %d, %s", rank, i, what)
	}
	return v
}

const iter = 5 // waits.c's ITER

// wantWaits checks each pattern's seconds per rank: want[pattern][rank] in
// seconds, the waits the program's own entry times make (on an idle
// machine, the nominal ones: nominal[pattern][rank] in ms per iteration;
// on a loaded one a rank can wake so late that the roles swap), within 10
// % (and 0.5 ms); patterns the program cannot have must be exactly 0.
func wantWaits(t *testing.T, a *analyze.Result, want map[analyze.Pattern]map[int]float64, nominal map[analyze.Pattern]map[int]float64) {
	t.Helper()
	for p := analyze.Pattern(0); p < analyze.NumPatterns; p++ {
		pt := a.Patterns[p]
		for i, r := range a.Ranks {
			got := pt.ByRank[i]
			if _, ok := want[p]; !ok {
				if got != 0 {
					t.Errorf("%s on rank %d: %.6f s, want 0", p, r, got)
				}
				continue
			}
			w := want[p][r]
			if math.Abs(got-w) > 0.1*w+0.0005 {
				t.Errorf("%s on rank %d: %.6f s, want %.6f s within 10 %% (nominal %.3f s)", p, r, got, w, nominal[p][r]*iter/1e3)
			} else {
				t.Logf("%s on rank %d: %.6f s, as run %.6f s, nominal %.3f s", p, r, got, w, nominal[p][r]*iter/1e3)
			}
		}
	}
	if t.Failed() {
		logResult(t, a)
	}
}

func logResult(t *testing.T, a *analyze.Result) {
	t.Helper()
	var b bytesBuf
	a.WriteText(&b, 0)
	t.Log("\n" + string(b))
}

type bytesBuf []byte

func (b *bytesBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// TestAnalyzeLateSender: rank S computes 20 ms then sends; the other
// rank's MPI_Recv waits 20 ms (late sender), and the roles swapped.
func TestAnalyzeLateSender(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		for s := 0; s < 2; s++ {
			t.Run(fmt.Sprint("sender", s), func(t *testing.T) {
				a, e := runWaits(t, f, 2, "late-sender", fmt.Sprint(s))
				w, n := 0.0, int64(0)
				for i := 0; i < iter; i++ {
					if d := e.get(t, s, i, "send") - e.get(t, 1-s, i, "recv"); d > 0 {
						w += d / 1e9
						n++
					}
				}
				wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateSender: {1 - s: w}},
					map[analyze.Pattern]map[int]float64{analyze.LateSender: {1 - s: 20}})
				checkRow(t, a, "late_sender", "MPI_Recv", 1-s, n)
			})
		}
	})
}

// TestAnalyzeBarrier: rank k enters MPI_Barrier k x 10 ms late.
func TestAnalyzeBarrier(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a, e := runWaits(t, f, 4, "barrier")
		w := map[int]float64{}
		n := int64(0)
		for i := 0; i < iter; i++ {
			last := 0.0
			for k := 0; k < 4; k++ {
				last = max(last, e.get(t, k, i, "barrier"))
			}
			for k := 0; k < 4; k++ {
				w[k] += (last - e.get(t, k, i, "barrier")) / 1e9
			}
			if e.get(t, 0, i, "barrier") < last {
				n++
			}
		}
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.WaitBarrier: w},
			map[analyze.Pattern]map[int]float64{analyze.WaitBarrier: {0: 30, 1: 20, 2: 10}})
		checkRow(t, a, "wait_barrier", "MPI_Barrier", 0, n)
	})
}

// TestAnalyzeLateBroadcast: the root of MPI_Bcast enters 20 ms late.
func TestAnalyzeLateBroadcast(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a, e := runWaits(t, f, 3, "bcast")
		w := map[int]float64{}
		n := int64(0)
		for i := 0; i < iter; i++ {
			root := e.get(t, 1, i, "bcast")
			for _, k := range []int{0, 2} {
				if d := root - e.get(t, k, i, "bcast"); d > 0 {
					w[k] += d / 1e9
					if k == 2 {
						n++
					}
				}
			}
		}
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateBroadcast: w},
			map[analyze.Pattern]map[int]float64{analyze.LateBroadcast: {0: 20, 2: 20}})
		checkRow(t, a, "late_broadcast", "MPI_Bcast", 2, n)
	})
}

// TestAnalyzeLateReceiver: MPI_Ssend to a receiver 20 ms late.
func TestAnalyzeLateReceiver(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a, e := runWaits(t, f, 2, "ssend")
		// Rank 0 waits for the receive to be posted; should it wake more
		// than 20 ms late, rank 1 waits for the send (late sender).
		late, early, n := 0.0, 0.0, int64(0)
		for i := 0; i < iter; i++ {
			d := e.get(t, 1, i, "recv") - e.get(t, 0, i, "ssend")
			if d > 0 {
				late += d / 1e9
				n++
			} else {
				early -= d / 1e9
			}
		}
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateReceiver: {0: late}, analyze.LateSender: {1: early}},
			map[analyze.Pattern]map[int]float64{analyze.LateReceiver: {0: 20}})
		checkRow(t, a, "late_receiver", "MPI_Ssend", 0, n)
	})
}

// TestAnalyzeNonblocking: MPI_Waitall for a partner that posts its
// MPI_Isend 20 ms late.
func TestAnalyzeNonblocking(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a, e := runWaits(t, f, 2, "nonblocking")
		// Rank 0 waits for rank 1's MPI_Isend; should rank 0 wake more
		// than 20 ms late, rank 1 waits for rank 0's.
		w := map[int]float64{}
		n := int64(0)
		for i := 0; i < iter; i++ {
			for k := 0; k < 2; k++ {
				if d := e.get(t, 1-k, i, "isend") - e.get(t, k, i, "waitall"); d > 0 {
					w[k] += d / 1e9
					if k == 0 {
						n++
					}
				}
			}
		}
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateSender: w},
			map[analyze.Pattern]map[int]float64{analyze.LateSender: {0: 20}})
		checkRow(t, a, "late_sender", "MPI_Waitall", 0, n) // on the messages' communicator
	})
}

// TestAnalyzePipeline: a ring 0 -> 1 -> 2 -> 3 -> 0, rank k computing
// (k+1) x 40 ms per iteration: the critical path runs through every rank,
// each rank's share its compute time.
func TestAnalyzePipeline(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a, e := runWaits(t, f, 4, "pipeline")
		cp := a.Critical
		// Rank k is on the path from the send of rank k-1 (rank 0: from
		// its start, then from rank 3's send) to its own send; the path
		// ends on rank 0, from rank 3's last send to the end of rank 0's
		// last receive (the program's time just after it: a little
		// later).
		w := map[int]float64{}
		for i := 0; i < iter; i++ {
			from := e.get(t, 0, 0, "start")
			if i > 0 {
				from = e.get(t, 3, i-1, "send")
			}
			for k := 0; k < 4; k++ {
				to := e.get(t, k, i, "send")
				w[k] += (to - from) / 1e9
				from = to
			}
		}
		w[0] += (e.get(t, 0, iter, "end") - e.get(t, 3, iter-1, "send")) / 1e9
		total := 0.0
		for k := 0; k < 4; k++ {
			total += w[k]
			nominal := float64(40*(k+1)*iter) / 1e3
			if got := cp.ByRank[k]; math.Abs(got-w[k]) > 0.1*w[k] {
				t.Errorf("critical path on rank %d: %.6f s, want %.6f s within 10 %% (nominal %.3f s)", k, got, w[k], nominal)
			} else {
				t.Logf("critical path on rank %d: %.6f s, as run %.6f s, nominal %.3f s", k, got, w[k], nominal)
			}
		}
		if cp.StartRank != 0 || math.Abs(cp.Seconds-total) > 0.1*total {
			t.Errorf("critical path %.6f s from rank %d, want %.6f s within 10 %% from rank 0", cp.Seconds, cp.StartRank, total)
		}
		// Every rank's sleeps (40 x (k+1) ms an iteration, at least) lie
		// on the path, outside MPI; the rest of the path is MPI.
		if sleeps := 40e-3 * (1 + 2 + 3 + 4) * iter; cp.Computation < sleeps || math.Abs(cp.Computation+cp.MPI-cp.Seconds) > 1e-6 {
			t.Errorf("computation %.6f s and MPI %.6f s on the critical path of %.6f s, want at least the %.3f s of sleeps computing, and the sum",
				cp.Computation, cp.MPI, cp.Seconds, sleeps)
		}
		if t.Failed() {
			logResult(t, a)
		}
	})
}

// checkRow checks that the pattern's time on rank is in one row of the
// given function, with n instances (none: no row).
func checkRow(t *testing.T, a *analyze.Result, pattern, fn string, rank int, n int64) {
	t.Helper()
	for _, r := range a.Rows {
		if r.Pattern == pattern && r.Rank == rank {
			if n == 0 {
				t.Errorf("%s row on rank %d: %+v, want none", pattern, rank, r)
				return
			}
			if r.Func != fn || r.Instances != n || r.Comm != "MPI_COMM_WORLD" {
				t.Errorf("%s row on rank %d: %s, %d instances on %q, want %s, %d on MPI_COMM_WORLD", pattern, rank, r.Func, r.Instances, r.Comm, fn, n)
			}
			return
		}
	}
	if n > 0 {
		t.Errorf("no %s row on rank %d", pattern, rank)
	}
}
