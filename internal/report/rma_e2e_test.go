package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/cli"
	"github.com/mpiscope/mpiscope/internal/mpitest"
)

// rmaCounts is JSON rma, in `mpiscope analyze -format json` and in the
// analysis of `mpiscope report -format json`.
type rmaCounts struct {
	Fences    uint64 `json:"fences_matched"`
	Epochs    uint64 `json:"pscw_epochs_matched"`
	Locks     uint64 `json:"lock_epochs"`
	Unmatched uint64 `json:"unmatched"`
}

// TestAnalysisRMAE2E: cases of testdata/progs/analyze/rma.c (5 iterations
// each) on both families with MPISCOPE_ANALYZE=1: `mpiscope report` on the
// job shows the one-sided synchronizations the program makes, by
// construction (efence: two fences an iteration; wait: one pair of epochs
// an iteration; lockall: rank 1's MPI_Win_lock_all, a lock epoch on each of
// the 3 ranks, and rank 2's lock on rank 0, an iteration; none unmatched),
// in text, JSON and CSV, and they are those of `mpiscope analyze -format
// json` on the job's trace.
func TestAnalysisRMAE2E(t *testing.T) {
	const iter = 5 // rma.c's ITER
	cases := []struct {
		c    string
		np   int
		want rmaCounts
	}{
		{"efence", 3, rmaCounts{Fences: 2 * iter}},
		{"wait", 2, rmaCounts{Epochs: iter}},
		{"lockall", 3, rmaCounts{Locks: (3 + 1) * iter}},
	}
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		exe := mpitest.Compile(t, f.MPICC, "analyze/rma.c", dir)
		for _, c := range cases {
			t.Run(c.c, func(t *testing.T) {
				job := filepath.Join(dir, c.c)
				// Open MPI: the one-sided component the tests can use
				// (as internal/analyze's TestAnalyzeRMA).
				res := f.Exec(t, mpitest.Run{NP: c.np, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_ANALYZE": "1",
					"OMPI_MCA_osc": "pt2pt"}, Preload: f.Lib(), Args: []string{exe, c.c}, Dir: dir})
				if res.Err != nil {
					t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
				}
				run := func(args ...string) string {
					t.Helper()
					var out, errs bytes.Buffer
					if rc := cli.Run(args, &out, &errs); rc != 0 {
						t.Fatalf("mpiscope %s: exit %d\n%s", strings.Join(args, " "), rc, errs.String())
					}
					return out.String()
				}
				var rep struct {
					Analysis *struct {
						RMA *rmaCounts `json:"rma"`
					} `json:"analysis"`
				}
				if err := json.Unmarshal([]byte(run("report", "-format", "json", job)), &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Analysis == nil || rep.Analysis.RMA == nil {
					t.Fatalf("mpiscope report -format json: no analysis.rma\n%s", res.Stderr)
				}
				var off struct {
					RMA rmaCounts `json:"rma"`
				}
				if err := json.Unmarshal([]byte(run("analyze", "-format", "json", job)), &off); err != nil {
					t.Fatal(err)
				}
				if got := *rep.Analysis.RMA; got != c.want || off.RMA != c.want {
					t.Errorf("report %+v, analyze %+v, want %+v", got, off.RMA, c.want)
				}
				w := c.want
				line := fmt.Sprintf("; one-sided: %d fences, %d PSCW epoch pairs and %d lock epochs matched\n", w.Fences, w.Epochs, w.Locks)
				if txt := run("report", job); !strings.Contains(txt, line) {
					t.Errorf("mpiscope report lacks %q:\n%s", line, txt)
				}
				csvDir := filepath.Join(dir, c.c+"-csv")
				run("report", "-format", "csv", "-o", csvDir, job)
				b, err := os.ReadFile(filepath.Join(csvDir, "analysis_rma.csv"))
				if want := fmt.Sprintf("fences_matched,pscw_epochs_matched,lock_epochs,unmatched\n%d,%d,%d,0\n", w.Fences, w.Epochs, w.Locks); err != nil || string(b) != want {
					t.Errorf("analysis_rma.csv %q (%v), want %q", b, err, want)
				}
			})
		}
	})
}
