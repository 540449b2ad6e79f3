package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mpiscope/mpiscope/profile"
)

// htmlCells returns the text of the cells of each row of the table id.
func htmlCells(t *testing.T, page, id string) [][]string {
	t.Helper()
	i := strings.Index(page, `<table class="t" id="`+id+`">`)
	if i < 0 {
		t.Fatalf("no table %s", id)
	}
	j := strings.Index(page[i:], "</table>")
	rowRE := regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	cellRE := regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	var rows [][]string
	for _, m := range rowRE.FindAllStringSubmatch(page[i:i+j], -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, c[1])
		}
		if len(cells) > 0 {
			rows = append(rows, cells)
		}
	}
	return rows
}

// TestHTMLNumbers checks the HTML tables hold the text report's numbers.
func TestHTMLNumbers(t *testing.T) {
	p := fixture()
	page := render(t, p, HTML, Options{})
	txt := render(t, p, Text, Options{})
	funcs := htmlCells(t, page, "t-funcs")
	if len(funcs) != len(p.Funcs) {
		t.Fatalf("%d function rows, want %d", len(funcs), len(p.Funcs))
	}
	for _, row := range funcs {
		line := strings.Join(fields(t, txt, row[0]+" "), " ")
		if got := strings.Join(row, " "); got != line {
			t.Errorf("function row\n got %s\nwant %s", got, line)
		}
	}
	ranks := htmlCells(t, page, "t-ranks")
	if len(ranks) != 5 || ranks[4][0] != "*" {
		t.Fatalf("rank rows %v", ranks)
	}
	// MPI_Send: 1000 calls, 8000 bytes (fixture).
	if funcs[len(funcs)-2][0] == "" || !strings.Contains(page, `<td class="n" data-v="8000">8000</td>`) {
		t.Errorf("no 8000-byte cell")
	}
	var d plotData
	m := regexp.MustCompile(`<script type="application/json" id="mpiscope-data">(.*?)</script>`).FindStringSubmatch(page)
	if m == nil || json.Unmarshal([]byte(m[1]), &d) != nil {
		t.Fatalf("no plot data")
	}
	if d.Ranks == nil || len(d.Ranks.Order) != 4 || d.Ranks.Bin != 1 || d.Ranks.MaxR != 1 || d.Ranks.MinR != 2 {
		t.Errorf("rank plot %+v", d.Ranks)
	}
}

// TestHTMLEscape: names from the program are text, never markup.
func TestHTMLEscape(t *testing.T) {
	p := fixture()
	evil := "<script>alert(1)</script>\"'&\xff\xfe"
	p.Regions = append(p.Regions, profile.Region{Path: "x/" + evil, Visits: 1, WallNs: 5, MPINs: 1, Ranks: 1})
	p.Events = append(p.Events, profile.Event{Text: evil, Count: 3, Ranks: 1})
	p.Sites = append(p.Sites, profile.Site{Func: "MPI_Send", Loc: profile.Loc{Function: "f" + evil, File: "/tmp/" + evil + ".c", Line: 3},
		Region: "x/" + evil, Calls: 1, TimeNs: 1})
	p.Meta.Command = []string{"./a", evil}
	p.Hists = append(p.Hists, profile.Hist{Func: evil, Bins: []profile.Bin{{Log2: 3, Calls: 1, Bytes: 4}}})
	page := render(t, p, HTML, Options{Notes: []string{evil}, Source: evil})
	if n := strings.Count(page, "<script"); n != 2 {
		t.Errorf("%d <script tags, want 2 (data and code)", n)
	}
	if strings.Contains(page, "alert(1)</script>") || strings.Contains(page, "\xff") {
		t.Errorf("unescaped text in page")
	}
	want := `&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;\xff\xfe`
	if c := strings.Count(page, want); c < 6 {
		t.Errorf("escaped text %d times, want at least 6", c)
	}
}

// bigProfile is a job of n ranks, each sending to its two neighbours.
func bigProfile(n int) *profile.Profile {
	p := &profile.Profile{Meta: profile.Meta{NumRanks: n, Command: []string{"./big"}}}
	for r := range n {
		p.Ranks = append(p.Ranks, profile.Rank{Rank: r, AppNs: 10 * sec, MPINs: int64(r+1) * 1000, Calls: 10, State: "final"})
		for _, q := range []int{(r + 1) % n, (r + n - 1) % n} {
			p.Peers = append(p.Peers, profile.Peer{Rank: r, Peer: q, SentMsgs: 2, SentBytes: 16})
		}
	}
	p.Funcs = []profile.Func{{Name: "MPI_Send", Calls: 10 * int64(n), TimeNs: int64(n) * 1000, RankTime: spreadOf(1, 2)}}
	p.Sort()
	return p
}

// TestHTMLLarge: tables and plots aggregate, the page stays small.
func TestHTMLLarge(t *testing.T) {
	for _, c := range []struct {
		ranks, maxBytes, rankRows, blocks, cells int
	}{
		{64, 200 << 10, 65, 64, 128},
		{1000, 2 << 20, 1001, 125, 125 * 3},
		{100000, 4 << 20, HTMLRows + 1, 128, 128 * 3},
	} {
		page := render(t, bigProfile(c.ranks), HTML, Options{})
		if len(page) > c.maxBytes {
			t.Errorf("%d ranks: %d bytes, want at most %d", c.ranks, len(page), c.maxBytes)
		}
		if n := len(htmlCells(t, page, "t-ranks")); n != c.rankRows {
			t.Errorf("%d ranks: %d rank rows, want %d", c.ranks, n, c.rankRows)
		}
		d := plots(bigProfile(c.ranks), computeTotals(bigProfile(c.ranks)))
		if d.Matrix.Blocks != c.blocks || len(d.Matrix.Cells) != c.cells {
			t.Errorf("%d ranks: matrix %d blocks, %d cells; want %d, %d", c.ranks, d.Matrix.Blocks, len(d.Matrix.Cells), c.blocks, c.cells)
		}
		var sent int64
		for _, cell := range d.Matrix.Cells {
			sent += cell[2]
		}
		if sent != int64(c.ranks)*32 {
			t.Errorf("%d ranks: matrix holds %d bytes, want %d", c.ranks, sent, c.ranks*32)
		}
		if len(d.Ranks.Order) > htmlRankBars || len(d.Ranks.Sorted) > htmlRankBars || d.Ranks.MaxR != c.ranks-1 || d.Ranks.MinR != 0 {
			t.Errorf("%d ranks: rank plot %d bars, %d sorted, max %d, min %d", c.ranks, len(d.Ranks.Order), len(d.Ranks.Sorted), d.Ranks.MaxR, d.Ranks.MinR)
		}
	}
}

// TestHTMLSource: a callsite shows its source line when the file is readable.
func TestHTMLSource(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app.c")
	if err := os.WriteFile(src, []byte("int main() {\n\tMPI_Barrier(MPI_COMM_WORLD); /* <b> */\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := fixture()
	p.Sites = []profile.Site{{Func: "MPI_Barrier", Loc: profile.Loc{Function: "main", File: src, Line: 2}, Calls: 1, TimeNs: 10},
		{Func: "MPI_Send", Loc: profile.Loc{Function: "main", File: filepath.Join(dir, "gone.c"), Line: 2}, Calls: 1, TimeNs: 5}}
	rows := htmlCells(t, render(t, p, HTML, Options{}), "t-sites")
	if len(rows) != 2 || rows[0][3] != "MPI_Barrier(MPI_COMM_WORLD); /* &lt;b&gt; */" || rows[1][3] != "" {
		t.Errorf("source cells: %q", rows)
	}
}

func TestHTMLClean(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "é": "é", "\xff": `\xff`, "a\nb": `a\x0ab`, "\u0085": `\xc2\x85`} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
