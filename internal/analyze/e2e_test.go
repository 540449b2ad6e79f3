package analyze_test

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/trace"
)

// runWaits runs testdata/progs/analyze/waits.c's case under mpirun with
// the library preloaded and analyzes its trace.
func runWaits(t *testing.T, f mpitest.Family, np int, args ...string) *analyze.Result {
	t.Helper()
	dir := t.TempDir()
	prog := mpitest.Compile(t, f.MPICC, "analyze/waits.c", dir)
	job := filepath.Join(dir, "job")
	res := f.Exec(t, mpitest.Run{NP: np, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0"},
		Preload: f.Lib(), Args: append([]string{prog}, args...), Dir: dir})
	if res.Err != nil {
		t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
	}
	j, err := trace.OpenJob(job)
	if err != nil {
		t.Fatal(err)
	}
	a, err := analyze.Analyze(j, analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Ranks) != np {
		t.Fatalf("%d ranks analyzed, want %d", len(a.Ranks), np)
	}
	if a.Unmatched != 0 {
		t.Errorf("%d message ends unmatched, want 0", a.Unmatched)
	}
	return a
}

const iter = 5 // waits.c's ITER

// wantWaits checks each pattern's seconds per rank: want[pattern][rank] in
// ms per iteration (absent: 0), within 10 %; patterns and ranks not given
// must be exactly 0.
func wantWaits(t *testing.T, a *analyze.Result, want map[analyze.Pattern]map[int]float64) {
	t.Helper()
	for p := analyze.Pattern(0); p < analyze.NumPatterns; p++ {
		pt := a.Patterns[p]
		for i, r := range a.Ranks {
			got := pt.ByRank[i]
			w := want[p][r] * iter / 1e3
			if w == 0 {
				if got != 0 {
					t.Errorf("%s on rank %d: %.6f s, want 0", p, r, got)
				}
				continue
			}
			if math.Abs(got-w) > 0.1*w {
				t.Errorf("%s on rank %d: %.6f s, want %.3f s within 10 %%", p, r, got, w)
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
				a := runWaits(t, f, 2, "late-sender", fmt.Sprint(s))
				wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateSender: {1 - s: 20}})
				checkRow(t, a, "late_sender", "MPI_Recv", 1-s, iter)
			})
		}
	})
}

// TestAnalyzeBarrier: rank k enters MPI_Barrier k x 10 ms late.
func TestAnalyzeBarrier(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a := runWaits(t, f, 4, "barrier")
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.WaitBarrier: {0: 30, 1: 20, 2: 10}})
		checkRow(t, a, "wait_barrier", "MPI_Barrier", 0, iter)
	})
}

// TestAnalyzeLateBroadcast: the root of MPI_Bcast enters 20 ms late.
func TestAnalyzeLateBroadcast(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a := runWaits(t, f, 3, "bcast")
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateBroadcast: {0: 20, 2: 20}})
		checkRow(t, a, "late_broadcast", "MPI_Bcast", 2, iter)
	})
}

// TestAnalyzeLateReceiver: MPI_Ssend to a receiver 20 ms late.
func TestAnalyzeLateReceiver(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a := runWaits(t, f, 2, "ssend")
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateReceiver: {0: 20}})
		checkRow(t, a, "late_receiver", "MPI_Ssend", 0, iter)
	})
}

// TestAnalyzeNonblocking: MPI_Waitall for a partner that posts its
// MPI_Isend 20 ms late.
func TestAnalyzeNonblocking(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a := runWaits(t, f, 2, "nonblocking")
		wantWaits(t, a, map[analyze.Pattern]map[int]float64{analyze.LateSender: {0: 20}})
		checkRow(t, a, "late_sender", "MPI_Waitall", 0, iter)
	})
}

// TestAnalyzePipeline: 0 -> 1 -> 2 -> 3, rank k computing (k+1) x 20 ms:
// the critical path ends on a rank leaving the last barrier, runs through
// every rank, each rank's share its compute time.
func TestAnalyzePipeline(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		a := runWaits(t, f, 4, "pipeline")
		cp := a.Critical
		total := 0.0
		for k := 0; k < 4; k++ {
			w := float64(20*(k+1)*iter) / 1e3
			total += w
			if got := cp.ByRank[k]; math.Abs(got-w) > 0.1*w {
				t.Errorf("critical path on rank %d: %.6f s, want %.3f s within 10 %%", k, got, w)
			}
		}
		if math.Abs(cp.Seconds-total) > 0.1*total {
			t.Errorf("critical path %.6f s, want %.3f s within 10 %%", cp.Seconds, total)
		}
		if cp.Computation < 0.9*total {
			t.Errorf("computation on the critical path %.6f s, want most of %.3f s", cp.Computation, total)
		}
		if t.Failed() {
			logResult(t, a)
		}
	})
}

// checkRow checks that the pattern's time on rank is in one row of the
// given function, with n instances.
func checkRow(t *testing.T, a *analyze.Result, pattern, fn string, rank int, n int64) {
	t.Helper()
	for _, r := range a.Rows {
		if r.Pattern == pattern && r.Rank == rank {
			if r.Func != fn || r.Instances != n || r.Comm != "MPI_COMM_WORLD" {
				t.Errorf("%s row on rank %d: %s, %d instances on %q, want %s, %d on MPI_COMM_WORLD", pattern, rank, r.Func, r.Instances, r.Comm, fn, n)
			}
			return
		}
	}
	t.Errorf("no %s row on rank %d", pattern, rank)
}
