package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestDiffHTML: every row of the HTML diff's tables is a line of the text
// diff (the same numbers), and the page holds both runs' plots.
func TestDiffHTML(t *testing.T) {
	var page, txt bytes.Buffer
	if err := WriteDiffHTML(&page, fixture(), changed(), DiffOptions{SourceA: "A<b>", SourceB: "B"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteDiff(&txt, fixture(), changed(), Text, DiffOptions{SourceA: "A<b>", SourceB: "B", All: true}); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(txt.String(), "\n") {
		lines[strings.Join(strings.Fields(l), " ")] = true
	}
	p := page.String()
	n := 0
	for _, id := range []string{"t-d-funcs", "t-d-sites", "t-d-comms", "t-d-sizes", "d-summary"} {
		rows := htmlCells(t, p, id)
		if len(rows) == 0 {
			t.Errorf("%s: no rows", id)
		}
		for _, r := range rows {
			var cells []string
			for _, c := range r {
				cells = append(cells, strings.Fields(c)...)
			}
			if l := strings.Join(cells, " "); !lines[l] {
				t.Errorf("%s: row %q is not a line of the text diff", id, l)
			}
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d rows", n)
	}
	if !strings.Contains(p, "A&lt;b&gt;") || strings.Contains(p, "A<b>") {
		t.Errorf("source not escaped")
	}
	if strings.Count(p, `class="diff-ranks"`) != 2 || !strings.Contains(p, `id="diff-funcs"`) || !strings.Contains(p, "connect-src 'none'") {
		t.Errorf("page lacks the side-by-side plots or its policy")
	}
	if !strings.Contains(p, "NOTE: the runs differ in rank count") {
		t.Errorf("no note on the rank count")
	}
}
