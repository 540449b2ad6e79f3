package browsertest

import (
	"fmt"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/view"
	"github.com/mpiscope/mpiscope/profile"
)

// analysisTables are the analysis tables compared with the text report,
// and the page's columns the text lacks (the caller).
var analysisTables = map[string][]int{"t-an-rows": {4}, "t-an-path-ranks": nil, "t-an-path-sites": {2}, "t-an-delays": {3}}

// pages opens the job's report.html (written by the library) and then the
// same job in mpiscope view, and runs check on each.
func pages(t *testing.T, b *browser, job string, check func(t *testing.T, where string)) {
	t.Helper()
	page := filepath.Join(job, "report.html")
	b.open(t, "file://"+page)
	check(t, "report.html")
	b.quiet(t, func(u string) bool { return u == "file://"+page })
	srv := httptest.NewServer(view.New(job, view.Options{}).Handler())
	defer srv.Close()
	b.open(t, srv.URL+"/")
	check(t, "view")
	b.quiet(t, func(u string) bool { return strings.HasPrefix(u, srv.URL+"/") })
}

// TestAnalysisPage: testdata/progs/analyze/waits.c analyzed in the job
// (MPISCOPE_ANALYZE=1), in both families, in report.html and in the view.
// Late sender on 2 ranks: rank 0 sends 20 ms late, 5 times, so the only
// wait is rank 1's, in MPI_Recv, once per iteration whose send the
// program saw entered after its receive (5 on an idle machine). The
// pipeline on 4 ranks: the critical path runs through every rank and
// starts on rank 0. Every row of the analysis tables is a line of the
// text report (same numbers).
func TestAnalysisPage(t *testing.T) {
	b := newBrowser(t)
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "analyze/waits.c", t.TempDir())
		env := map[string]string{"MPISCOPE_ANALYZE": "1"}
		t.Run("late-sender", func(t *testing.T) {
			// A run with at least one late sender (on a loaded machine a
			// rank that wakes late may leave none; tried 3 times).
			var p *profile.Profile
			var job string
			late := 0
			for try := 0; late == 0 && try < 3; try++ {
				p, job, late = lateSender(t, f, prog, env)
			}
			if late == 0 {
				t.Fatal("3 runs without a late sender: the machine is too loaded")
			}
			lateS := strconv.Itoa(late)
			text := textLines(p, job)
			pages(t, b, job, func(t *testing.T, where string) {
				sameNumbers(t, b, text, analysisTables)
				rows := b.rows(t, "t-an-rows")
				if len(rows) != 1 || rows[0][0] != "Late sender" || rows[0][1] != "1" || rows[0][2] != "MPI_Recv" ||
					!strings.Contains(rows[0][3], "waits.c:") || rows[0][7] != lateS {
					t.Errorf("%s: wait-state rows %q, want one: Late sender, rank 1, MPI_Recv at waits.c, %s instances", where, rows, lateS)
				}
				for _, r := range b.rows(t, "t-an-patterns") {
					w := "0"
					if r[0] == "Late sender" {
						w = lateS
						// Its spread over ranks: none on rank 0, all on rank 1.
						if r[4] != "0.000000" || r[5] != "(0)" || r[7] != r[1] || r[8] != "(1)" {
							t.Errorf("%s: late sender's spread %q, want 0 on rank 0 and all on rank 1", where, r)
						}
						if want := fmt.Sprintf("%.6f", p.Analysis.Patterns[0].Seconds); r[1] != want && p.Analysis.Patterns[0].Pattern == "late_sender" {
							t.Errorf("%s: late sender %s s, the profile %s", where, r[1], want)
						}
					}
					if r[3] != w {
						t.Errorf("%s: %s: %s instances, want %s", where, r[0], r[3], w)
					}
				}
			})
		})
		t.Run("pipeline", func(t *testing.T) {
			p, job, _ := f.Profile(t, 4, env, prog, "pipeline")
			if p.Analysis == nil {
				t.Fatal("no analysis in the profile")
			}
			text := textLines(p, job)
			pages(t, b, job, func(t *testing.T, where string) {
				sameNumbers(t, b, text, analysisTables)
				ranks := map[string]bool{}
				for _, r := range b.rows(t, "t-an-path-ranks") {
					ranks[r[0]] = true
				}
				if len(ranks) != 4 || !ranks["0"] || !ranks["1"] || !ranks["2"] || !ranks["3"] {
					t.Errorf("%s: ranks on the critical path %v, want 0 to 3", where, ranks)
				}
				cp := eval[string](t, b, `document.getElementById("critical-path").textContent`)
				if !strings.Contains(cp, "from rank 0 to rank 0") {
					t.Errorf("%s: critical path %q, want from rank 0 to rank 0", where, cp)
				}
				sortAndFilter(t, b, "t-an-path-ranks", 1, "no such row", 0)
				if where != "view" {
					return
				}
				// The view: a rank of the path opens its drill-down, with
				// its time on the path.
				b.do(t, chromedp.Click(chromedp.CSS(`#t-an-path-ranks tr[data-rank="1"] td`)))
				waitFor(t, b, "rank 1's drill-down", `(document.querySelector("#drill-body h3")||{}).textContent.startsWith("Rank 1 on ")`)
				got := eval[string](t, b, `document.querySelector("#drill-body .rank-analysis").textContent`)
				want := fmt.Sprintf("Trace analysis: %.6f s on the critical path (%.1f %%)", p.Analysis.Path.ByRank[1], 100*p.Analysis.Path.ByRank[1]/p.Analysis.Path.Seconds)
				if !strings.HasPrefix(got, want) {
					t.Errorf("rank 1's drill-down: %q, want %q...", got, want)
				}
			})
		})
	})
}

// lateSender runs waits.c's late-sender case on 2 ranks and returns the
// profile, the job directory and the late senders the program's entry
// times make.
func lateSender(t *testing.T, f mpitest.Family, prog string, env map[string]string) (*profile.Profile, string, int) {
	t.Helper()
	p, job, res := f.Profile(t, 2, env, prog, "late-sender", "0")
	if p.Analysis == nil {
		t.Fatal("no analysis in the profile")
	}
	// The program's entry times ("t <rank> <iteration> <what> <ns>"):
	// an iteration whose send was entered after its receive is one late
	// sender (5 on an idle machine; a rank that woke late on a loaded one
	// may make it none).
	entry := map[string]int64{}
	for _, l := range strings.Split(res.Stdout, "\n") {
		var r, i int
		var what string
		var ns int64
		if n, _ := fmt.Sscanf(l, "t %d %d %s %d", &r, &i, &what, &ns); n == 4 {
			entry[fmt.Sprint(i, what)] = ns
		}
	}
	late := 0
	for i := range 5 {
		s, r := entry[fmt.Sprint(i, "send")], entry[fmt.Sprint(i, "recv")]
		if s == 0 || r == 0 {
			t.Fatalf("iteration %d: no entry times in the output\n%s", i, res.Stdout)
		}
		if s > r {
			late++
		}
	}
	return p, job, late
}

// callTree is testdata/progs/callpath/calltree.c's MPI calls by call path
// (innermost first, the program's frames only) over 2 ranks.
var callTree = map[string]int64{
	"MPI_Allreduce halo<solve<main": 20, "MPI_Allreduce halo<precond<main": 40, "MPI_Allreduce halo<output<main": 10,
	"MPI_Barrier rec<rec<rec<rec<rec<rec<main": 6, "MPI_Bcast cp_lib_bcast<driver<main": 14, "MPI_Scan inl_scan<sweep<main": 6,
}

var callTreeFuncs = map[string]bool{"halo": true, "solve": true, "precond": true, "output": true,
	"rec": true, "driver": true, "main": true, "cp_lib_bcast": true, "inl_scan": true, "sweep": true}

// TestCallPathPage: testdata/progs/callpath/calltree.c at MPISCOPE_DEPTH=8
// on 2 ranks, in both families, in report.html and in the view: the call
// paths table holds exactly the program's call tree (each frame one line,
// each caller indented one step more) and its counts; the callers of
// halo()'s MPI_Allreduce are precond (40 calls), solve (20) and output (10);
// both tables hold the text report's numbers, sort and filter.
func TestCallPathPage(t *testing.T) {
	b := newBrowser(t)
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		dir := t.TempDir()
		src := mpitest.Testdata("callpath")
		lib := filepath.Join(dir, "libcplib.so")
		if out, err := exec.Command(f.MPICC, "-g", "-O1", "-shared", "-fPIC", "-fno-omit-frame-pointer", "-o", lib,
			filepath.Join(src, "cplib.c")).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		prog := mpitest.Compile(t, f.MPICC, filepath.Join(src, "calltree.c"), dir, "-L"+dir, "-lcplib", "-Wl,-rpath,"+dir, "-fno-omit-frame-pointer")
		p, job, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_DEPTH": "8"}, prog)
		if len(p.Paths) == 0 {
			t.Fatal("no call paths in the profile")
		}
		text := textLines(p, job)
		pages(t, b, job, func(t *testing.T, where string) {
			got := map[string]int64{}
			for _, r := range b.rows(t, "t-paths") {
				var names []string
				for d, l := range strings.Split(r[2], "\n") {
					if ind := len(l) - len(strings.TrimLeft(l, " ")); ind != 2*d {
						t.Errorf("%s: path %q: frame %d indented %d, want %d", where, r[2], d, ind, 2*d)
					}
					fn, _, _ := strings.Cut(strings.TrimSpace(l), " at ")
					if !callTreeFuncs[fn] {
						break
					}
					names = append(names, fn)
				}
				if strconv.Itoa(len(strings.Split(r[2], "\n"))) != r[3] {
					t.Errorf("%s: path %q: %s frames", where, r[2], r[3])
				}
				if k := r[1] + " " + strings.Join(names, "<"); callTree[k] > 0 {
					n, _ := strconv.ParseInt(r[5], 10, 64)
					got[k] += n
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(callTree) {
				t.Errorf("%s: paths\n%v\nwant\n%v", where, got, callTree)
			}
			callers := map[string]string{}
			for _, r := range b.rows(t, "t-callers") {
				if r[0] == "MPI_Allreduce" && r[1] == "halo" {
					fn, _, _ := strings.Cut(r[2], " at ")
					callers[fn] = r[3]
				}
			}
			if fmt.Sprint(callers) != "map[output:10 precond:40 solve:20]" {
				t.Errorf("%s: callers of halo's MPI_Allreduce %v, want output 10, precond 40, solve 20", where, callers)
			}
			sameNumbers(t, b, text, map[string][]int{"t-callers": nil})
			sortAndFilter(t, b, "t-paths", 5, "precond", 1)
		})
	})
}

// TestWaitsPage: testdata/progs/piggyback/waits.c on 4 ranks with the
// channel on (MPISCOPE_PIGGYBACK=1), in both families, in report.html and
// in the view: the wait states measured online are the text report's rows
// (same numbers), with the late sender in MPI_Recv waiting for rank 0 (the
// only sender) and the staggered barrier's waits (which rank waited
// longest, and for whom, a loaded machine may change).
func TestWaitsPage(t *testing.T) {
	b := newBrowser(t)
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, "piggyback/waits.c", t.TempDir())
		p, job, _ := f.Profile(t, 4, map[string]string{"MPISCOPE_PIGGYBACK": "1"}, prog)
		if len(p.Waits) == 0 {
			t.Fatal("no wait states in the profile")
		}
		text := textLines(p, job)
		pages(t, b, job, func(t *testing.T, where string) {
			sameNumbers(t, b, text, map[string][]int{"t-waits": nil})
			kinds := map[string]string{}
			for _, r := range b.rows(t, "t-waits") {
				kinds[r[0]+" "+r[1]] = r[8] // waited for
			}
			if w, ok := kinds["wait-at-nxn MPI_Barrier"]; kinds["late-sender MPI_Recv"] != "0" || !ok || w == "" {
				t.Errorf("%s: wait states %v, want late-sender in MPI_Recv waiting for rank 0, and wait-at-nxn in MPI_Barrier", where, kinds)
			}
		})
	})
}
