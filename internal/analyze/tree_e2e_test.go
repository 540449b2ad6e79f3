package analyze_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// TestTreeFailureE2E: p2p.c at 4 ranks analyzed in the job with rank 3's
// first message of the trees spoilt (MPISCOPE_DEBUG_ANALYZE_SPOIL=3:1:
// its value for the first reduction, to its parent rank 2, an inner rank
// of the tree rooted at 0), on both families: the job finishes, every
// rank returns from the analysis (its MPISCOPE_DEBUG_TIMING=1 line),
// rank 0 warns that it failed at rank 2, which found rank 3's message
// bad at its byte 0, and the profile is written without an analysis.
// (Only rank 0 prints its warnings, and the merged profile keeps rank
// 0's.)
func TestTreeFailureE2E(t *testing.T) {
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, "p2p.c", dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: 4, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_ANALYZE": "1",
			"MPISCOPE_TRACE": "1", "MPISCOPE_DEBUG_TIMING": "1", "MPISCOPE_DEBUG_ANALYZE_SPOIL": "3:1"}, Preload: f.Lib(), Args: []string{prog}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
		}
		p, _, err := profile.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if p.Analysis != nil || len(p.Funcs) == 0 {
			t.Errorf("analysis %+v, %d functions: want none and the profile", p.Analysis, len(p.Funcs))
		}
		const w = "mpiscope: warning: the analysis in the job failed on rank 0: the analysis failed at rank 2: from rank 3: 1 bytes, bad flag at byte 0"
		if n := strings.Count(res.Stderr, w); n != 1 {
			t.Errorf("the warning %q %d times, want once:\n%s", w, n, res.Stderr)
		}
		for r := range 4 {
			if n := strings.Count(res.Stderr, fmt.Sprintf("analysis timing: rank=%d ", r)); n != 1 {
				t.Errorf("rank %d printed its analysis timing %d times, want once:\n%s", r, n, res.Stderr)
			}
		}
	})
}
