package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/internal/analyze"
	"github.com/mpiscope/mpiscope/internal/cli"
	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/profile"
)

// TestStencilInJob runs bench/progs/stencil.c (the analyzejob section's
// second program) traced and analyzed in the job on 4 ranks (a 2 x 2 grid
// of ranks: each has 2 neighbours), 60 iterations of a 16 x 16 block with
// the residual every 10: the MPI calls are those its loop makes by
// construction, every message is matched, the collective instances, calls
// and events are counted, the analysis in the job is `mpiscope analyze`'s on the same
// trace, and stencil.c's STENCIL line reads as runbench reads it.
func TestStencilInJob(t *testing.T) {
	const np, iters, side, check = 4, 60, 16, 10
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "progs", "stencil.c")
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		prog := mpitest.Compile(t, f.MPICC, src, dir)
		job := filepath.Join(dir, "job")
		res := f.Exec(t, mpitest.Run{NP: np, Env: map[string]string{"MPISCOPE_OUT": job, "MPISCOPE_SUMMARY": "0", "MPISCOPE_TRACE": "1",
			"MPISCOPE_ANALYZE": "1", "MPISCOPE_DEBUG_TIMING": "1"}, Preload: f.Lib(),
			Args: []string{prog, fmt.Sprint(iters), fmt.Sprint(side), fmt.Sprint(check)}, Dir: dir})
		if res.Err != nil {
			t.Fatalf("mpirun: %v\n%s\n%s", res.Err, res.Stdout, res.Stderr)
		}
		st, err := parseStencil(res.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		if st.ranks != np || st.px != 2 || st.py != 2 || st.side != side || st.iters != iters || !(st.computeCPU > 0) || !(st.residual > 0) {
			t.Errorf("STENCIL line: %+v, want 4 ranks on 2 x 2, side 16, 60 iterations, a computation and a residual", st)
		}
		p, _, err := profile.Load(job)
		if err != nil || p.Analysis == nil {
			t.Fatalf("no analysis (%v)\n%s", err, res.Stderr)
		}
		// Per rank: 2 neighbours, so 2 receives and 2 sends of 16
		// doubles an iteration, one MPI_Waitall; 6 residuals; the
		// parameters' broadcast (3 longs), the timings' reduction (2
		// doubles) and 2 barriers.
		const msgs = np * 2 * iters
		mpitest.Want(t, p, map[string][2]int64{"MPI_Isend": {msgs, msgs * side * 8}, "MPI_Irecv": {msgs, msgs * side * 8},
			"MPI_Waitall": {np * iters, 0}, "MPI_Allreduce": {np * iters / check, np * iters / check * 8},
			"MPI_Bcast": {np, np * 3 * 8}, "MPI_Reduce": {np, np * 2 * 8}, "MPI_Barrier": {2 * np, 0}})
		a := p.Analysis
		if a.Messages != msgs || a.Unmatched != 0 || a.Colls != iters/check+4 {
			t.Errorf("%d messages matched, %d ends unmatched, %d collective instances; want %d, 0, %d", a.Messages, a.Unmatched, a.Colls, msgs, iters/check+4)
		}
		// The calls traced: the loop's and the collectives above, and 8
		// setting up (MPI_Comm_rank, MPI_Comm_size, MPI_Dims_create,
		// MPI_Cart_create, MPI_Cart_coords, 2 MPI_Cart_shift,
		// MPI_Comm_free); the events, those and a post event for each
		// request started (docs/traces.md): 2 a message.
		const calls = np * (5*iters + iters/check + 4 + 8)
		if a.Calls != calls || a.Events != calls+2*msgs {
			t.Errorf("%d calls, %d events traced; want %d, %d", a.Calls, a.Events, calls, calls+2*msgs)
		}
		if n := strings.Count(res.Stderr, "analysis timing: rank="); n != np {
			t.Errorf("%d ranks printed their analysis timing, want %d:\n%s", n, np, res.Stderr)
		}
		var out, errs bytes.Buffer
		if rc := cli.Run([]string{"analyze", "-format", "json", job}, &out, &errs); rc != 0 {
			t.Fatalf("mpiscope analyze: exit %d\n%s", rc, errs.String())
		}
		var off analyze.Result
		if err := json.Unmarshal(out.Bytes(), &off); err != nil {
			t.Fatal(err)
		}
		want := *off.Profile()
		got := *a
		got.Warnings, want.Warnings = nil, nil
		if !reflect.DeepEqual(got, want) {
			x, _ := json.MarshalIndent(got, "", " ")
			y, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("in the job:\n%s\nmpiscope analyze:\n%s", x, y)
		}
		t.Logf("STENCIL %+v", st)
	})
}

// TestParseStencil: the STENCIL line read, and its absence or a short
// line an error.
func TestParseStencil(t *testing.T) {
	s, err := parseStencil("FINALIZE 4 1.0\nSTENCIL 32 8 4 256 1000 101.500 120.250 2500.000 1.234560e-03\n")
	want := stencilLine{ranks: 32, px: 8, py: 4, side: 256, iters: 1000, computeCPU: 101.5, compute: 120.25, iteration: 2500, residual: 1.23456e-3}
	if err != nil || s != want {
		t.Errorf("got %+v, %v; want %+v", s, err, want)
	}
	for _, bad := range []string{"", "FINALIZE 4 1.0\n", "STENCIL 32 8 4 256\n", "STENCIL 32 8 4 256 1000 x 1 1 1\n"} {
		if _, err := parseStencil(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
