package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// TestHTMLAnalysis: the trace analysis in the HTML report, with the text
// report's numbers: the patterns with their spread over ranks, the rows,
// the critical path's ranks, functions and callsites, the delay costs.
func TestHTMLAnalysis(t *testing.T) {
	p := analysisFixture()
	page := render(t, p, HTML, Options{})
	for id, want := range map[string]string{
		"t-an-patterns":   "[[Late sender 0.100000 40.0 5 0.000000 (0) 0.050000 0.100000 (1)] [Wait at barrier 0.000000 0.0 0 0.000000 (0) 0.000000 0.000000 (0)]]",
		"t-an-rows":       "[[Late sender 1 MPI_Recv waits.c:40 main MPI_COMM_WORLD 0.100000 5]]",
		"t-an-path-ranks": "[[0 0.300000 60.0] [1 0.200000 40.0]]",
		"t-an-path-funcs": "[[MPI_Recv 0.100000 20.0]]",
		"t-an-path-sites": "[[MPI_Recv waits.c:40 main 0.100000 20.0]]",
		"t-an-delays":     "[[0 MPI_Send waits.c:38 main 0.100000 0.060000 0.040000 5]]",
	} {
		if got := fmt.Sprint(htmlCells(t, page, id)); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	for _, want := range []string{`<a href="#analysis">Trace analysis</a>`,
		"2 ranks, 40 events, 20 calls, 0.500000 s traced; 6 messages and 2 collectives matched.",
		"0.500000 s, from rank 0 to rank 1, 5 moves between ranks; computation 0.400000 s (80.0 %), MPI 0.100000 s."} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Large jobs: a rank table keeps the HTMLRows ranks with most time.
	p.Analysis.Ranks = nil
	p.Analysis.Path.ByRank = make([]float64, 3000)
	for i := range p.Analysis.Path.ByRank {
		p.Analysis.Path.ByRank[i] = float64(i)
	}
	page = render(t, p, HTML, Options{})
	rows := htmlCells(t, page, "t-an-path-ranks")
	if len(rows) != HTMLRows || rows[0][0] != "2999" || rows[HTMLRows-1][0] != "2000" ||
		!strings.Contains(page, "1999 more rows not in this page") {
		t.Errorf("3000 ranks: %d rows, first %v, last %v", len(rows), rows[0], rows[len(rows)-1])
	}
	if strings.Contains(render(t, fixture(), HTML, Options{}), `id="analysis"`) {
		t.Errorf("a profile without analysis has the section")
	}
}

// TestHTMLPaths: the top call paths as indented frames and the callers,
// as the text report has them.
func TestHTMLPaths(t *testing.T) {
	p := pathsProfile()
	page := render(t, p, HTML, Options{})
	got := fmt.Sprintf("%q", htmlCells(t, page, "t-paths"))
	want := fmt.Sprintf("%q", [][]string{
		{"1", "MPI_Barrier", "rec at app.c:30", "1", "-", "6", "9.000", "56.25", "0"},
		{"2", "MPI_Allreduce", "halo at app.c:3\n  precond at app.c:14\n    main at app.c:21", "3", "-", "40", "4.000", "25.00", "0"},
		{"3", "MPI_Allreduce", "halo at app.c:3\n  solve at app.c:9\n    main at app.c:20", "3", "-", "20", "2.000", "12.50", "0"},
		{"4", "MPI_Allreduce", "halo at app.c:3\n  output at app.c:17", "2", "r", "10", "1.000", "6.25", "0"},
	})
	if got != want {
		t.Errorf("paths\n%s\nwant\n%s", got, want)
	}
	got = fmt.Sprint(htmlCells(t, page, "t-callers"))
	want = "[[MPI_Allreduce halo precond at app.c:14 40 4.000 57.14] [MPI_Allreduce halo solve at app.c:9 20 2.000 28.57] [MPI_Allreduce halo output at app.c:17 10 1.000 14.29]]"
	if got != want {
		t.Errorf("callers\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(render(t, fixture(), HTML, Options{}), `id="paths"`) {
		t.Errorf("a profile without paths has the section")
	}
}

// TestHTMLWaitsComp: the wait states measured online and the overhead
// compensation, with the text report's numbers.
func TestHTMLWaitsComp(t *testing.T) {
	r := profile.Rank{Rank: 0, AppNs: 900e6, MPINs: 800e6, Calls: 10}
	funcs := []profile.Func{{Name: "MPI_Recv", Class: "p2p", Calls: 10, TimeNs: 800e6, RankTime: profile.SpreadOf(0, 800e6)}}
	p := &profile.Profile{Meta: profile.Meta{NumRanks: 1}, Ranks: []profile.Rank{r}, Funcs: funcs}
	p.CompFuncs, p.CompRanks = profile.Compensate(r, funcs, map[string]int64{"MPI_Recv": 450e6}, profile.CompRank{CallNs: 40e6, InNs: 50, CollNs: 9000, Calls: 10, DelayNs: 400e6})
	p.Waits = []profile.Wait{
		{Kind: profile.WaitLateSender, Func: "MPI_Recv", Loc: profile.Loc{Function: "main", File: "/src/w.c", Line: 12}, Comm: "world", Calls: 10,
			WaitNs: 200e6, MaxNs: 30e6, MaxRank: 0, MaxPeer: 1, RankWait: profile.SpreadOf(0, 200e6)},
		{Kind: profile.WaitNxN, Func: "MPI_Barrier", Loc: profile.Loc{Function: "main", File: "/src/w.c", Line: 20}, Comm: "world", Calls: 4,
			WaitNs: 400e6, MaxNs: 150e6, MaxRank: 0, MaxPeer: 1, RankWait: profile.SpreadOf(0, 400e6)},
	}
	page := render(t, p, HTML, Options{})
	for id, want := range map[string]string{
		"t-comp-ranks": "[[0 40000000.0 10 400.000 900.000 500.000 800.000 350.000]]",
		"t-comp-funcs": "[[MPI_Recv 10 800.000 350.000 -450.000]]",
		"t-waits":      "[[wait-at-nxn MPI_Barrier main at w.c:20 world 4 400.000 150.000 0 1 400.000] [late-sender MPI_Recv main at w.c:12 world 10 200.000 30.000 0 1 200.000]]",
	} {
		if got := fmt.Sprint(htmlCells(t, page, id)); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
}
