package browsertest

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/internal/view"
	"github.com/mpiscope/mpiscope/profile"
)

// waitFor polls a JavaScript condition for up to 20 s.
func waitFor(t *testing.T, b *browser, what, js string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s (%s)", what, js)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestView: mpiscope view on a traced run of testdata/progs/p2p.c (4 ranks):
// the report's tables, the drill-down from a function to its callsites, a
// callsite to its ranks and a rank to its partners, and the timeline.
func TestView(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	prog := mpitest.Compile(t, f.MPICC, "p2p.c", t.TempDir())
	p, job, _ := f.Profile(t, 4, map[string]string{"MPISCOPE_TRACE": "1"}, prog)
	srv := httptest.NewServer(view.New(job, view.Options{}).Handler())
	defer srv.Close()
	b := newBrowser(t)
	b.open(t, srv.URL+"/")
	sameNumbers(t, b, textLines(p, job), reportTables)

	// Function -> callsites.
	fn := p.Funcs[0].Name
	for _, x := range p.Funcs {
		if x.Name == "MPI_Send" {
			fn = x.Name
		}
	}
	b.do(t, chromedp.Click(chromedp.CSS(`#t-funcs tr[data-func="`+fn+`"] td`)))
	waitFor(t, b, "the function's callsites", `(document.querySelector("#drill-body h3")||{}).textContent.startsWith("`+fn+`:")`)
	want := eval[int](t, b, `document.querySelectorAll('#t-sites tr[data-func="`+fn+`"]').length`)
	if got := eval[int](t, b, `document.querySelectorAll("#drill-body tbody tr").length`); got != want || got == 0 {
		t.Errorf("drill-down of %s: %d callsites, want %d", fn, got, want)
	}
	// Callsite -> ranks -> partners.
	b.do(t, chromedp.Click(chromedp.CSS(`#drill-body tbody tr td`)))
	waitFor(t, b, "the callsite's ranks", `(document.querySelector("#drill-body h3")||{}).textContent.startsWith("Callsite ")`)
	rank := eval[int](t, b, `+document.querySelector("#drill-body tbody tr td:nth-child(2)").textContent`)
	b.do(t, chromedp.Click(chromedp.CSS(`#drill-body tbody tr td`)))
	waitFor(t, b, "the rank's partners", `(document.querySelector("#drill-body h3")||{}).textContent.startsWith("Rank `+strconv.Itoa(rank)+` on ")`)
	partners := 0
	for _, pr := range p.Peers {
		if pr.Rank == rank {
			partners++
		}
	}
	if got := eval[int](t, b, `document.querySelectorAll("#drill-body table:first-of-type tbody tr").length`); got != partners || got == 0 {
		t.Errorf("rank %d: %d partners shown, want %d", rank, got, partners)
	}
	// Then its functions per communicator (the profile's RankFuncs).
	if n := len(p.RankFuncsOf(rank)); n > 0 {
		if got := eval[int](t, b, `document.querySelectorAll("#drill-body table:last-of-type tbody tr").length`); got != n {
			t.Errorf("rank %d: %d functions shown, want %d", rank, got, n)
		}
	}

	// Timeline: the whole run aggregated, then zoomed in to single calls
	// and messages.
	waitFor(t, b, "the timeline", `document.querySelectorAll("#plot-timeline rect").length > 0`)
	lanes := eval[[]string](t, b, `Array.from(document.querySelectorAll("#plot-timeline text")).map(e => e.textContent).filter(s => s.startsWith("rank "))`)
	if strings.Join(lanes, ",") != "rank 0,rank 1,rank 2,rank 3" {
		t.Errorf("timeline lanes %q", lanes)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#plot-timeline rect.tl-bin").length`); n == 0 {
		t.Errorf("the whole run is not aggregated (%d calls > 5000)", n)
	}
	for i := 0; i < 30 && eval[int](t, b, `document.querySelectorAll("#plot-timeline rect.tl-call").length`) == 0; i++ {
		b.do(t, chromedp.Click(chromedp.CSS("#tl-in")))
		time.Sleep(300 * time.Millisecond)
	}
	calls := eval[int](t, b, `document.querySelectorAll("#plot-timeline rect.tl-call").length`)
	info := eval[string](t, b, `document.getElementById("tl-info").textContent`)
	if calls == 0 || !strings.HasPrefix(info, strconv.Itoa(calls)+" calls in view") {
		t.Errorf("zoomed in: %d calls drawn, info %q", calls, info)
	}
	b.quiet(t, func(u string) bool { return strings.HasPrefix(u, srv.URL+"/") })
}

// snapshot writes snapshot n of a 2-rank job whose rank 0 made calls
// MPI_Barrier calls, as the ranks write it.
func snapshot(t *testing.T, dir string, n int, calls int64) {
	t.Helper()
	for r := range 2 {
		q := &profile.Profile{Meta: profile.Meta{NumRanks: 2, Snapshot: n},
			Ranks: []profile.Rank{{Rank: r, AppNs: 1e9, MPINs: 1e8, Calls: calls, State: "snapshot"}},
			Funcs: []profile.Func{{Name: "MPI_Barrier", Calls: calls, TimeNs: 1e8, RankTime: profile.SpreadOf(r, 1e8)}}}
		path := profile.RankFile(profile.SnapshotDir(dir, n), r)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := profile.WriteFile(path, q); err != nil {
			t.Fatal(err)
		}
	}
}

// TestViewLive: the page follows a running job's snapshots, then its final
// profile, by itself.
func TestViewLive(t *testing.T) {
	dir := t.TempDir()
	snapshot(t, dir, 1, 300)
	srv := httptest.NewServer(view.New(dir, view.Options{Poll: 200 * time.Millisecond}).Handler())
	defer srv.Close()
	b := newBrowser(t)
	b.open(t, srv.URL+"/")
	text := func() string { return eval[string](t, b, `document.getElementById("live").textContent`) }
	if s := text(); !strings.Contains(s, "snapshot 1, the newest") || !strings.Contains(s, " s ago") {
		t.Errorf("status bar %q", s)
	}
	barrier := `(document.querySelector('#t-funcs tr[data-func="MPI_Barrier"] td:nth-child(3)')||{}).textContent`
	if c := eval[string](t, b, barrier); c != "600" {
		t.Errorf("snapshot 1: MPI_Barrier %s calls, want 600", c)
	}
	snapshot(t, dir, 2, 500)
	waitFor(t, b, "snapshot 2", `document.getElementById("live") && document.getElementById("live").textContent.includes("snapshot 2, the newest")`)
	if c := eval[string](t, b, barrier); c != "1000" {
		t.Errorf("snapshot 2: MPI_Barrier %s calls, want 1000", c)
	}
	final := &profile.Profile{Meta: profile.Meta{NumRanks: 2},
		Ranks: []profile.Rank{{Rank: 0, AppNs: 2e9, MPINs: 1e8, State: "final"}, {Rank: 1, AppNs: 2e9, MPINs: 1e8, State: "final"}},
		Funcs: []profile.Func{{Name: "MPI_Barrier", Calls: 1400, TimeNs: 2e8}}}
	if err := profile.WriteFile(filepath.Join(dir, profile.FinalFile), final); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, "the final profile", `document.getElementById("live") && document.getElementById("live").textContent.includes("Showing the final profile")`)
	if c := eval[string](t, b, barrier); c != "1400" {
		t.Errorf("final: MPI_Barrier %s calls, want 1400", c)
	}
	b.quiet(t, func(u string) bool { return strings.HasPrefix(u, srv.URL+"/") })
}

// TestViewDiff: mpiscope view A B's /diff page, on two 64-rank synthetic
// runs of different lengths: the text diff's numbers, sorting, filtering.
func TestViewDiff(t *testing.T) {
	var dirs [2]string
	var ps [2]*profile.Profile
	for i, ranks := range []string{"64", "32"} {
		dirs[i] = filepath.Join(t.TempDir(), "synth")
		cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", ranks, "-o", dirs[i])
		cmd.Dir = repo()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("synth: %v\n%s", err, out)
		}
		p, _, err := profile.Load(dirs[i])
		if err != nil {
			t.Fatal(err)
		}
		ps[i] = p
	}
	srv := httptest.NewServer(view.New(dirs[0], view.Options{Compare: dirs[1]}).Handler())
	defer srv.Close()
	b := newBrowser(t)
	b.open(t, srv.URL+"/diff")
	var txt bytes.Buffer
	report.WriteDiff(&txt, ps[0], ps[1], report.Text, report.DiffOptions{All: true})
	lines := map[string]bool{}
	for _, l := range strings.Split(txt.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	sameNumbers(t, b, lines, map[string][]int{"t-d-funcs": nil, "t-d-sites": nil, "t-d-comms": nil, "d-summary": nil})
	sortAndFilter(t, b, "t-d-funcs", 5, "mpi_allreduce", 1)
	if n := eval[int](t, b, `document.querySelectorAll("svg.diff-ranks rect").length`); n != 64+32 {
		t.Errorf("side-by-side rank plots: %d bars, want 96", n)
	}
	b.quiet(t, func(u string) bool { return strings.HasPrefix(u, srv.URL+"/") })
}
