package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The diff of two runs as an HTML page (mpiscope view A B): the text
// diff's tables with its numbers, sortable and filterable, and side by
// side the two runs' MPI time per function and per rank, drawn here as SVG.

// WriteDiffHTML writes the changes from a to b as an HTML page; v adds what
// the view serves (nil: a page that fetches nothing).
func WriteDiffHTML(w io.Writer, a, b *profile.Profile, o DiffOptions, v *HTMLView) error {
	if a == nil {
		a = &profile.Profile{}
	}
	if b == nil {
		b = &profile.Profile{}
	}
	if v == nil {
		v = &HTMLView{}
	}
	d := makeDiff(a, b, o)
	var s strings.Builder
	connect := "'none'"
	if v.Connect {
		connect = "'self'"
	}
	s.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&s, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src %s\">\n", connect)
	fmt.Fprintf(&s, "<title>mpiscope diff: %s</title>\n<style>\n%s</style></head><body>\n", esc(orDash(d.b.command)), htmlCSS)
	s.WriteString(`<nav><b>mpiscope</b> <a href="#header">Runs</a> <a href="#summary">Summary</a> <a href="#plots">Side by side</a>` +
		` <a href="#d-funcs">Functions</a> <a href="#d-sites">Callsites</a> <a href="#d-comms">Communicators</a> <a href="#d-sizes">Message sizes</a></nav>` + "\n<main>\n")
	s.WriteString(v.Top)
	diffHTMLHeader(&s, d)
	diffHTMLTables(&s, d, o)
	diffHTMLPlots(&s, a, b, d)
	s.WriteString(v.Bottom)
	s.WriteString("</main>\n<script type=\"application/json\" id=\"mpiscope-data\">{\"funcs\":[],\"hists\":[],\"sites\":[],\"mpi_ns\":0}</script>\n<script>\n")
	s.WriteString(htmlJS)
	s.WriteString("</script>\n")
	if v.Script != "" {
		s.WriteString("<script>\n" + v.Script + "</script>\n")
	}
	s.WriteString("</body></html>\n")
	_, err := io.WriteString(w, s.String())
	return err
}

func diffHTMLHeader(s *strings.Builder, d *diff) {
	s.WriteString("<section id=\"header\"><h1>mpiscope diff (B against A)</h1>\n")
	for _, w := range d.differ {
		s.WriteString(`<p class="warn">NOTE: the runs differ in ` + esc(w) + "</p>\n")
	}
	for _, n := range d.a.notes {
		s.WriteString(`<p class="warn">NOTE: A: ` + esc(n) + "</p>\n")
	}
	for _, n := range d.b.notes {
		s.WriteString(`<p class="warn">NOTE: B: ` + esc(n) + "</p>\n")
	}
	s.WriteString("<dl class=\"kv\">\n")
	kv := func(k, v string) { fmt.Fprintf(s, "<dt>%s</dt><dd>%s</dd>\n", esc(k), esc(v)) }
	both := func(k, a, b string) {
		if a == b {
			kv(k, a)
		} else {
			kv(k, "A: "+a)
			kv("", "B: "+b)
		}
	}
	kv("A", orDash(d.a.source))
	kv("B", orDash(d.b.source))
	both("Command", orDash(d.a.command), orDash(d.b.command))
	both("Ranks", strconv.Itoa(d.a.ranks), strconv.Itoa(d.b.ranks))
	both("MPI library", orDash(d.a.library), orDash(d.b.library))
	both("Family", orDash(d.a.family), orDash(d.b.family))
	if d.perRank {
		kv("Values", fmt.Sprintf("per rank (A divided by %d ranks, B by %d)", int(math.Round(1/d.a.scale)), int(math.Round(1/d.b.scale))))
	} else {
		kv("Values", "sums over ranks")
	}
	kv("Order", "each table by absolute change in time; rows without change are left out")
	s.WriteString("</dl></section>\n")
}

func diffHTMLTables(s *strings.Builder, d *diff, o DiffOptions) {
	cnt := d.cnt
	pctOf := func(v dval) hcell {
		p, ok := v.changePct()
		switch {
		case !ok:
			p = math.MaxFloat64
		case v.change() == 0:
			p = 0
		}
		return hn(changePctStr(v), p)
	}
	u := d.summaryUnit()
	hsection(s, "summary", "Summary (times in "+u.name+")")
	t := newHTable("d-summary", L("Quantity"), R("A"), R("B"), R("Change"), R("Change%"))
	for _, r := range []struct {
		name string
		v    dval
		f    func(float64) string
	}{{"App time", d.app, u.f}, {"MPI time", d.mpi, u.f}, {"Calls", d.calls, cnt}, {"Bytes", d.bytes, cnt}} {
		t.add(hs(r.name), hn(r.f(r.v.a), r.v.a), hn(r.f(r.v.b), r.v.b), hn(signed(r.f(r.v.change()), r.v.change()), r.v.change()), pctOf(r.v))
	}
	t.add(hs("MPI%"), hn(pctStr(d.pct.a), d.pct.a), hn(pctStr(d.pct.b), d.pct.b), hn(signed(pctStr(d.pct.change()), d.pct.change()), d.pct.change()), hs("(points)"))
	t.render(s)
	s.WriteString("</section>\n")

	for i, tb := range []struct {
		id, title string
		cols      []column
		rows      []*drow
	}{
		{"d-funcs", "Functions", []column{L("Function")}, d.funcs},
		{"d-sites", "Callsites", []column{L("Function"), L("Location"), L("Region")}, d.sites},
		{"d-comms", "Communicators", []column{L("Communicator")}, d.comms},
		{"d-sizes", "Message sizes", []column{L("Function"), R("Size (bytes)")}, d.sizes},
	} {
		var maxNs float64
		for _, r := range tb.rows {
			maxNs = max(maxNs, math.Abs(r.timeNs.a), math.Abs(r.timeNs.b))
		}
		u := pickUnit(maxNs)
		hsection(s, tb.id, fmt.Sprintf("%s (by absolute change in time; times in %s)", tb.title, u.name))
		if len(tb.rows) == 0 {
			if d.shown[i] == 0 {
				s.WriteString("<p>(none in either run)</p></section>\n")
			} else {
				s.WriteString("<p>(no change)</p></section>\n")
			}
			continue
		}
		cols := append(slices.Clone(tb.cols), R("Time A"), R("Time B"), R("Change"), R("Change%"),
			R("Calls A"), R("Calls B"), R("Change"), R("Bytes A"), R("Bytes B"), R("Change"))
		t := newHTable("t-"+tb.id, cols...)
		n := htmlLimit(Options{All: o.All, Top: o.Top}, len(tb.rows))
		for _, r := range tb.rows[:n] {
			var cells []hcell
			for k, l := range r.label {
				if tb.id == "d-sizes" && k == 1 {
					lo, _ := sizeRange(r.log2)
					cells = append(cells, hn(l, float64(lo)))
				} else {
					cells = append(cells, hs(l))
				}
			}
			num := func(f func(float64) string, x float64) hcell { return hn(f(x), x) }
			cells = append(cells, num(u.f, r.timeNs.a), num(u.f, r.timeNs.b), hn(signed(u.f(r.timeNs.change()), r.timeNs.change()), r.timeNs.change()),
				pctOf(r.timeNs), num(cnt, r.calls.a), num(cnt, r.calls.b), hn(signed(cnt(r.calls.change()), r.calls.change()), r.calls.change()),
				num(cnt, r.bytes.a), num(cnt, r.bytes.b), hn(signed(cnt(r.bytes.change()), r.bytes.change()), r.bytes.change()))
			t.add(cells...)
		}
		t.more(n, len(tb.rows))
		t.notes = append(t.notes, fmt.Sprintf("(%d of %d rows changed)", len(tb.rows), d.shown[i]))
		t.render(s)
		s.WriteString("</section>\n")
	}
}

// diffHTMLPlots draws the two runs side by side: MPI time of the functions
// that changed most, and MPI time per rank.
func diffHTMLPlots(s *strings.Builder, a, b *profile.Profile, d *diff) {
	hsection(s, "plots", "Side by side: A (light) and B (dark)")
	rows := d.funcs[:min(len(d.funcs), htmlFuncBars)]
	if len(rows) > 0 {
		var maxv float64
		for _, r := range rows {
			maxv = max(maxv, math.Abs(r.timeNs.a), math.Abs(r.timeNs.b))
		}
		const W, L, rowH = 900, 220, 22
		fmt.Fprintf(s, `<div class="plot"><h3>MPI time of the functions that changed most</h3><svg id="diff-funcs" width="%d" height="%d" viewBox="0 0 %d %d">`,
			W, len(rows)*rowH+10, W, len(rows)*rowH+10)
		for i, r := range rows {
			y := i*rowH + 4
			wa, wb := (W-L-20)*math.Abs(r.timeNs.a)/max(maxv, 1), (W-L-20)*math.Abs(r.timeNs.b)/max(maxv, 1)
			fmt.Fprintf(s, `<text x="0" y="%d">%s</text>`, y+12, esc(r.label[0]))
			fmt.Fprintf(s, `<rect class="bar-a" x="%d" y="%d" width="%.1f" height="8" fill="#9cb8dc"><title>A: %s</title></rect>`, L, y, wa, esc(human(int64(r.timeNs.a))))
			fmt.Fprintf(s, `<rect class="bar-b" x="%d" y="%d" width="%.1f" height="8" fill="#2f6fb5"><title>B: %s</title></rect>`, L, y+9, wb, esc(human(int64(r.timeNs.b))))
		}
		s.WriteString("</svg></div>\n")
	}
	s.WriteString(`<div class="plot" style="display:flex;gap:12px;flex-wrap:wrap">`)
	for _, run := range []struct {
		name string
		p    *profile.Profile
		fill string
	}{{"A", a, "#9cb8dc"}, {"B", b, "#2f6fb5"}} {
		p := recordedTime(run.p)
		fmt.Fprintf(s, `<div><h3>MPI time per rank, run %s (%d ranks)</h3>`, run.name, len(p.Ranks))
		if len(p.Ranks) == 0 {
			s.WriteString("<p>(no rank data)</p></div>")
			continue
		}
		rp := rankPlots(p.Ranks)
		// One plot's bars at most 200 wide: bins of the bins.
		const W, H = 440, 160
		var maxv int64 = 1
		for _, o := range rp.Order {
			maxv = max(maxv, o[5])
		}
		bw := float64(W-10) / float64(len(rp.Order))
		fmt.Fprintf(s, `<svg class="diff-ranks" width="%d" height="%d" viewBox="0 0 %d %d">`, W, H+16, W, H+16)
		for i, o := range rp.Order {
			h := float64(H-10) * float64(o[3]) / float64(maxv)
			label := "rank " + strconv.FormatInt(o[0], 10)
			if o[0] != o[1] {
				label = fmt.Sprintf("ranks %d-%d (mean)", o[0], o[1])
			}
			fmt.Fprintf(s, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s: %s</title></rect>`,
				5+float64(i)*bw, float64(H)-h, max(bw-0.5, 0.5), h, run.fill, label, esc(human(o[3])))
		}
		fmt.Fprintf(s, `<text x="5" y="%d">max %s (rank %d), mean %s</text></svg></div>`, H+14, esc(human(rp.Max)), rp.MaxR, esc(human(int64(rp.Mean))))
	}
	s.WriteString("</div></section>\n")
}
