// Package browsertest checks the HTML report and mpiscope view in a real
// browser: headless Chromium driven by chromedp. It is a module of its own
// so that the main module's build does not need chromedp; `make test` runs
// it (mk/html.mk), and with CI=true a missing chromium fails the tests.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mpiscope/mpiscope/internal/mpitest"
	"github.com/mpiscope/mpiscope/internal/report"
	"github.com/mpiscope/mpiscope/internal/testutil"
	"github.com/mpiscope/mpiscope/profile"
)

// repo is the repository's root directory.
func repo() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// browser is one headless Chromium and what its page did.
type browser struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string // console errors, exceptions, error log entries
	requests []string // URLs requested
}

// newBrowser starts Chromium (skipping, or failing in CI, when there is none).
func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := ""
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		testutil.SkipOrFail(t, "no chromium on PATH (scripts/deps.sh installs it)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1300, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithListener(b.event))
	t.Cleanup(func() { cancelC(); cancelA() })
	b.ctx = ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	return b
}

// event records the page's errors and requests (it runs in the tab's loop).
func (b *browser) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *cdpruntime.EventConsoleAPICalled:
		if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range ev.Args {
				args = append(args, fmt.Sprint(a.Value)+a.Description)
			}
			b.errors = append(b.errors, "console: "+strings.Join(args, " "))
		}
	case *cdpruntime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.errors = append(b.errors, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
			b.errors = append(b.errors, "log: "+ev.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
	}
}

func (b *browser) do(t *testing.T, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression into *out.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// open loads url and resets what was recorded.
func (b *browser) open(t *testing.T, url string) {
	t.Helper()
	b.mu.Lock()
	b.errors, b.requests = nil, nil
	b.mu.Unlock()
	b.do(t, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("#mpiscope-data")))
}

// quiet checks that the page logged no error and requested nothing but
// the allowed URLs.
func (b *browser) quiet(t *testing.T, allowed func(string) bool) {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // let late events arrive
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		t.Errorf("page error: %s", e)
	}
	for _, u := range b.requests {
		if !allowed(u) {
			t.Errorf("page requested %s", u)
		}
	}
}

// rows returns the visible rows' cell texts of the table id.
func (b *browser) rows(t *testing.T, id string) [][]string {
	t.Helper()
	return eval[[][]string](t, b, `Array.from(document.querySelectorAll("#`+id+` tbody tr")).filter(r => !r.hidden).map(r => Array.from(r.cells).map(c => c.textContent))`)
}

// textLines is the set of the text report's lines, white space collapsed.
func textLines(p *profile.Profile, source string) map[string]bool {
	var buf bytes.Buffer
	report.Write(&buf, p, report.Text, report.Options{All: true, Source: source})
	set := map[string]bool{}
	for _, l := range strings.Split(buf.String(), "\n") {
		set[strings.Join(strings.Fields(l), " ")] = true
	}
	return set
}

// sameNumbers checks that each row of the page's tables is a line of the
// text report (drop: per table, the page's columns the text lacks).
func sameNumbers(t *testing.T, b *browser, text map[string]bool, tables map[string][]int) {
	t.Helper()
	for id, drop := range tables {
		rows := b.rows(t, id)
		if len(rows) == 0 {
			t.Errorf("table %s is empty", id)
		}
		for _, r := range rows {
			var cells []string
			for i, c := range r {
				if !slices.Contains(drop, i) && strings.TrimSpace(c) != "" {
					cells = append(cells, strings.Fields(c)...)
				}
			}
			if line := strings.Join(cells, " "); !text[line] {
				t.Errorf("table %s: row %q is not a line of the text report", id, line)
			}
		}
	}
}

// sortAndFilter clicks the header of column col of table id twice and checks
// the order, then types q into its filter and checks what is left.
func sortAndFilter(t *testing.T, b *browser, id string, col int, q string, wantLeft int) {
	t.Helper()
	sel := fmt.Sprintf("#%s thead th:nth-child(%d)", id, col+1)
	values := func() []float64 {
		return eval[[]float64](t, b, `Array.from(document.querySelectorAll("#`+id+` tbody tr:not(.total)")).map(r => parseFloat(r.cells[`+fmt.Sprint(col)+`].getAttribute("data-v")))`)
	}
	b.do(t, chromedp.Click(chromedp.CSS(sel)))
	if v := values(); !slices.IsSortedFunc(v, func(a, c float64) int { return cmpF(c, a) }) {
		t.Errorf("%s: after one click column %d is not descending: %v", id, col, v)
	}
	b.do(t, chromedp.Click(chromedp.CSS(sel)))
	if v := values(); !slices.IsSorted(v) || len(v) < 2 || v[0] == v[len(v)-1] {
		t.Errorf("%s: after two clicks column %d is not ascending (or all equal): %v", id, col, v)
	}
	b.do(t, chromedp.SendKeys(chromedp.CSS(`input[data-for="`+id+`"]`), q))
	if n := len(b.rows(t, id)); n != wantLeft {
		t.Errorf("%s: filter %q leaves %d rows, want %d", id, q, n, wantLeft)
	}
	eval[int](t, b, `(function(){var i=document.querySelector('input[data-for="`+id+`"]'); i.value=""; i.dispatchEvent(new Event("input")); return 0})()`)
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// heatCells checks the heat map's cells against the profile's sent traffic.
func heatCells(t *testing.T, b *browser, p *profile.Profile) {
	t.Helper()
	n := p.Meta.NumRanks
	block := (n + 127) / 128
	want := map[[2]int]int64{}
	var total int64
	for _, pr := range p.Peers {
		if pr.SentMsgs > 0 || pr.SentBytes > 0 {
			want[[2]int{pr.Rank / block, pr.Peer / block}] += pr.SentBytes
			total += pr.SentBytes
		}
	}
	got := eval[[][3]int64](t, b, `Array.from(document.querySelectorAll("#plot-matrix rect.cell")).map(r => [+r.dataset.from, +r.dataset.to, +r.dataset.v])`)
	if len(got) != len(want) {
		t.Errorf("heat map: %d cells, want %d", len(got), len(want))
	}
	for _, c := range got {
		if w := want[[2]int{int(c[0]), int(c[1])}]; w != c[2] {
			t.Errorf("heat map cell %d->%d: %d bytes, want %d", c[0], c[1], c[2], w)
		}
	}
}

// reportTables are the tables compared with the text report and the page
// columns the text lacks.
var reportTables = map[string][]int{"t-ranks": nil, "t-funcs": nil, "t-sites": {3}, "t-comms": nil, "t-p2p": nil}

// TestSample: the bundled sample's report.html, written by the library at
// MPI_Finalize, in both MPI families.
func TestSample(t *testing.T) {
	b := newBrowser(t)
	mpitest.Families(t, func(t *testing.T, f mpitest.Family) {
		prog := mpitest.Compile(t, f.MPICC, filepath.Join(repo(), "examples", "sample.c"), t.TempDir())
		p, job, _ := f.Profile(t, 4, nil, prog)
		page := filepath.Join(job, "report.html")
		if _, err := os.Stat(page); err != nil {
			t.Fatalf("the library wrote no report.html: %v", err)
		}
		b.open(t, "file://"+page)
		sameNumbers(t, b, textLines(p, job), reportTables)
		sortAndFilter(t, b, "t-funcs", 2, "mpi_allreduce", 1)
		heatCells(t, b, p)
		bars := eval[int](t, b, `document.querySelectorAll("#plot-ranks g.rank-bar").length`)
		if bars != 4 {
			t.Errorf("%d rank bars, want 4", bars)
		}
		b.quiet(t, func(u string) bool { return u == "file://"+page })

		if f.Name == "openmpi" { // MPISCOPE_REPORT=0: neither report file
			_, job, _ := f.Profile(t, 2, map[string]string{"MPISCOPE_REPORT": "0"}, prog)
			for _, n := range []string{"report.txt", "report.html"} {
				if _, err := os.Stat(filepath.Join(job, n)); err == nil {
					t.Errorf("MPISCOPE_REPORT=0 wrote %s", n)
				}
			}
		}
	})
}

// TestSynth64: a 64-rank synthetic job (bench/cmd/synth).
func TestSynth64(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "synth")
	cmd := exec.Command("go", "run", "./bench/cmd/synth", "-ranks", "64", "-o", dir)
	cmd.Dir = repo()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("synth: %v\n%s", err, out)
	}
	p, _, err := profile.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, p, report.Options{Source: dir}, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	b.open(t, "file://"+page)
	tables := map[string][]int{"t-regions": {1}, "t-events": nil}
	for k, v := range reportTables {
		tables[k] = v
	}
	sameNumbers(t, b, textLines(p, dir), tables)
	sortAndFilter(t, b, "t-funcs", 2, "mpi_allreduce", 1)
	sortAndFilter(t, b, "t-ranks", 3, "node00000", 64) // the total row holds no host
	heatCells(t, b, p)
	n := eval[[2]int](t, b, `[document.querySelectorAll("#t-ranks tbody tr").length, document.querySelectorAll("#plot-hists svg").length]`)
	if n[0] != 65 || n[1] != len(p.Hists) {
		t.Errorf("%d rank rows (want 65), %d histograms (want %d)", n[0], n[1], len(p.Hists))
	}
	eval[int](t, b, `(function(){var s=document.getElementById("rank-order"); s.value="sorted"; s.dispatchEvent(new Event("change")); return 0})()`)
	marks := eval[[]string](t, b, `Array.from(document.querySelectorAll("#plot-ranks text.mark")).map(e => e.textContent)`)
	if len(marks) != 2 || !strings.Contains(marks[0], fmt.Sprintf("min rank %d ", minRank(p))) {
		t.Errorf("rank plot marks %q, want min rank %d first", marks, minRank(p))
	}
	b.quiet(t, func(u string) bool { return u == "file://"+page })
}

func minRank(p *profile.Profile) int {
	best := 0
	for i, r := range p.Ranks {
		if r.MPINs < p.Ranks[best].MPINs {
			best = i
		}
	}
	return p.Ranks[best].Rank
}

// TestEscape: a program's region names, event texts and file paths with
// markup, quotes and bytes that are not UTF-8 show as text.
func TestEscape(t *testing.T) {
	f := mpitest.Get(t, "openmpi")
	evil := "<b onmouseover='window.pwned=3'>\"\xfd"
	dir := filepath.Join(t.TempDir(), evil)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(repo(), "internal", "browsertest", "testdata", "escape.c"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, evil+".c")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := mpitest.Compile(t, f.MPICC, file, dir)
	p, job, _ := f.Profile(t, 2, nil, prog)
	page := filepath.Join(job, "report.html")
	b := newBrowser(t)
	b.open(t, "file://"+page)
	type result struct {
		Scripts int      `json:"scripts"`
		Markup  int      `json:"markup"`
		Pwned   bool     `json:"pwned"`
		Regions []string `json:"regions"`
		Events  []string `json:"events"`
		Sites   []string `json:"sites"`
	}
	got := eval[result](t, b, `({scripts: document.scripts.length, markup: document.querySelectorAll("main b, main img, main script").length,
		pwned: window.pwned !== undefined,
		regions: Array.from(document.querySelectorAll("#t-regions tbody td:first-child")).map(e => e.textContent),
		events: Array.from(document.querySelectorAll("#t-events tbody td:first-child")).map(e => e.textContent),
		sites: Array.from(document.querySelectorAll("#t-sites tbody td:nth-child(3)")).map(e => e.textContent)})`)
	if got.Scripts != 2 || got.Markup != 0 || got.Pwned {
		t.Errorf("page: %d scripts (want 2), %d elements from the program's strings (want 0), pwned %v", got.Scripts, got.Markup, got.Pwned)
	}
	wantRegion := `<script>window.pwned=1</script>"'\xff`
	wantEvent := `<img src=x onerror="window.pwned=2">'\xfe`
	if !slices.Equal(got.Regions, []string{wantRegion}) || !slices.Equal(got.Events, []string{wantEvent}) {
		t.Errorf("regions %q, events %q; want [%q], [%q]", got.Regions, got.Events, wantRegion, wantEvent)
	}
	wantFile := `<b onmouseover='window.pwned=3'>"\xfd.c:`
	n := 0
	for _, s := range got.Sites {
		if strings.Contains(s, wantFile) {
			n++
		}
	}
	if n != len(p.Sites) || n == 0 {
		t.Errorf("%d of %d callsites show the file as %q: %q", n, len(p.Sites), wantFile, got.Sites)
	}
	b.quiet(t, func(u string) bool { return strings.HasPrefix(u, "file://") && !strings.Contains(u, "x") })
}

// TestEmptyPage: a profile with nothing in it draws nothing and logs no
// error.
func TestEmptyPage(t *testing.T) {
	page := filepath.Join(t.TempDir(), "empty.html")
	var buf bytes.Buffer
	if err := report.WriteHTML(&buf, &profile.Profile{}, report.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(page, buf.Bytes(), 0o644)
	b := newBrowser(t)
	b.open(t, "file://"+page)
	if n := eval[int](t, b, `document.querySelectorAll("svg").length`); n != 0 {
		t.Errorf("%d plots on an empty page", n)
	}
	b.quiet(t, func(u string) bool { return u == "file://"+page })
}
