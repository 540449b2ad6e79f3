package report

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mpiscope/mpiscope/profile"
)

// The HTML report: one self-contained page (inline CSS, an inline script
// that sorts and filters the tables and draws the plots as SVG, the plot
// data inline as JSON), no request to anywhere (its Content-Security-Policy
// forbids them). Tables are rendered here, as HTML, with the text report's
// numbers; the script only reorders, hides and draws. Everything from the
// profile is escaped (html.go: esc), invalid UTF-8 shown as \xNN.

//go:embed htmlassets/report.css
var htmlCSS string

//go:embed htmlassets/report.js
var htmlJS string

// HTMLRows is the number of rows an HTML table holds unless Options.All:
// beyond it the page keeps the first HTMLRows (the ranks table: the
// HTMLRows/2 highest and lowest MPI%), and the plots aggregate.
const HTMLRows = 1000

// Plot limits: ranks beyond htmlRankBars are drawn as bins of consecutive
// ranks (and the sorted view as that many quantiles); the communication
// matrix has at most htmlMatrixBlocks blocks of ranks per side.
const (
	htmlRankBars     = 1000
	htmlMatrixBlocks = 128
	htmlFuncBars     = 20
)

// HTMLView adds to the page what mpiscope view serves beyond the report.
type HTMLView struct {
	Top    string // trusted HTML shown under the title (status bar)
	Bottom string // trusted HTML appended to the main column (timeline, drill-down)
	Script string // an inline script run after the report's
	// Connect lets the page's scripts fetch from its own origin (the
	// report file itself may fetch nothing).
	Connect bool
}

// WriteHTML writes p as the HTML report; v is nil for the report file.
func WriteHTML(w io.Writer, p *profile.Profile, o Options, v *HTMLView) error {
	if p == nil {
		p = &profile.Profile{}
	}
	p = recordedTime(p)
	_, err := io.WriteString(w, htmlPage(p, o, v))
	return err
}

// clean makes s safe to show as text: invalid UTF-8 bytes and control
// characters become \xNN (the page is UTF-8).
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
			for _, c := range []byte(s[i : i+n]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// esc is s cleaned and escaped for HTML text and attribute values.
func esc(s string) string { return html.EscapeString(clean(s)) }

// hcell is a table cell: its text, and for numbers the value it sorts by.
type hcell struct {
	s    string
	v    float64
	num  bool
	safe bool // s is already escaped (hlines)
}

func hs(s string) hcell { return hcell{s: s} }
func hn(s string, v float64) hcell {
	return hcell{s: s, v: v, num: true}
}
func hi(v int64) hcell { return hn(itoa(v), float64(v)) }

// hlines is a text cell of several lines (each escaped; the cell keeps
// line breaks and leading spaces).
func hlines(lines ...string) hcell {
	for i, l := range lines {
		lines[i] = esc(l)
	}
	return hcell{s: strings.Join(lines, "\n"), safe: true}
}

// htable is a sortable, filterable HTML table.
type htable struct {
	id    string
	cols  []column
	rows  [][]hcell
	notes []string
	attrs []string // per row: extra attributes of the <tr> (trusted), or ""
}

func newHTable(id string, cols ...column) *htable { return &htable{id: id, cols: cols} }

func (t *htable) add(cells ...hcell) { t.addAttr("", cells...) }

func (t *htable) addAttr(attr string, cells ...hcell) {
	t.rows = append(t.rows, cells)
	t.attrs = append(t.attrs, attr)
}

func (t *htable) more(shown, total int) {
	if shown < total {
		t.notes = append(t.notes, fmt.Sprintf("%d more rows not in this page (mpiscope report --all --format html shows them)", total-shown))
	}
}

func (t *htable) render(b *strings.Builder) {
	fmt.Fprintf(b, `<div class="tw"><input class="flt" type="search" placeholder="filter rows" data-for="%s" aria-label="filter"><span class="cnt"></span>`, t.id)
	fmt.Fprintf(b, `<table class="t" id="%s"><thead><tr>`, t.id)
	for _, c := range t.cols {
		cls := "n"
		if c.left {
			cls = "s"
		}
		fmt.Fprintf(b, `<th class="%s" title="click to sort">%s</th>`, cls, esc(c.name))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for i, r := range t.rows {
		b.WriteString("<tr")
		if t.attrs[i] != "" {
			b.WriteString(" " + t.attrs[i])
		}
		b.WriteByte('>')
		for _, c := range r {
			if c.num {
				b.WriteString(`<td class="n" data-v="`)
				b.WriteString(strconv.FormatFloat(finite(c.v), 'g', -1, 64))
				b.WriteString(`">`)
			} else {
				b.WriteString("<td>")
			}
			if c.safe {
				b.WriteString(c.s)
			} else {
				b.WriteString(esc(c.s))
			}
			b.WriteString("</td>")
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>")
	for _, n := range t.notes {
		b.WriteString(`<p class="note">` + esc(n) + "</p>")
	}
	b.WriteString("</div>\n")
}

// htmlLimit is the number of rows of n an HTML table shows.
func htmlLimit(o Options, n int) int {
	if o.All {
		return n
	}
	return min(n, max(HTMLRows, o.top()))
}

// hsection opens a section with its id and title.
func hsection(b *strings.Builder, id, title string) {
	fmt.Fprintf(b, "<section id=\"%s\"><h2>%s</h2>\n", id, esc(title))
}

// plotData is what the script draws, marshalled into the page.
type plotData struct {
	Ranks  *rankPlot   `json:"ranks,omitempty"`
	Funcs  []funcPlot  `json:"funcs"`
	MPINs  int64       `json:"mpi_ns"`
	Matrix *matrixPlot `json:"matrix,omitempty"`
	// The heat map per communicator and the per-rank bars by function
	// (html_ranked.go), from the profile's RankFuncs and CommPeers.
	CommMatrices []commMatrix  `json:"comm_matrices,omitempty"`
	RankFuncs    *rankFuncPlot `json:"rank_funcs,omitempty"`
	Hists        []histPlot    `json:"hists"`
	Sites        []sitePlot    `json:"sites"`
	NumRank      int           `json:"num_ranks"`
}

// rankPlot: per rank (or per bin of consecutive ranks) app and MPI time in
// rank order, and the ranks sorted by MPI time (or quantiles of them).
type rankPlot struct {
	Bin    int       `json:"bin"`    // ranks per bar in Order (1: one bar per rank)
	Order  [][]int64 `json:"order"`  // [first rank, last rank, app mean, MPI mean, MPI min, MPI max]
	Sorted [][]int64 `json:"sorted"` // [rank, app, MPI], ascending MPI time
	MinR   int       `json:"min_rank"`
	MaxR   int       `json:"max_rank"`
	Min    int64     `json:"min_ns"`
	Max    int64     `json:"max_ns"`
	Mean   float64   `json:"mean_ns"`
}

type funcPlot struct {
	Name    string  `json:"name"`
	TimeNs  int64   `json:"time_ns"`
	Min     float64 `json:"min"`
	MinRank int     `json:"min_rank"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	MaxRank int     `json:"max_rank"`
}

// matrixPlot: the sent point-to-point traffic in blocks of Block ranks,
// cells [row block, column block, bytes, messages], non-empty ones only.
type matrixPlot struct {
	N      int        `json:"n"`
	Block  int        `json:"block"`
	Blocks int        `json:"blocks"`
	Cells  [][4]int64 `json:"cells"`
}

type histPlot struct {
	Func string     `json:"func"`
	Bins [][]string `json:"bins"` // [label, calls, bytes, time ns] (strings: exact int64)
}

// sitePlot is one address of a callsite row (ID) with the spread of its
// time over ranks, for the view's drill-down (function -> callsites ->
// ranks).
type sitePlot struct {
	ID       int     `json:"id"`
	Func     string  `json:"func"`
	Location string  `json:"location"`
	Region   string  `json:"region"`
	Calls    int64   `json:"calls"`
	TimeNs   int64   `json:"time_ns"`
	N        int64   `json:"ranks"`
	Min      float64 `json:"min"`
	MinRank  int     `json:"min_rank"`
	Mean     float64 `json:"mean"`
	Max      float64 `json:"max"`
	MaxRank  int     `json:"max_rank"`
}

func htmlPage(p *profile.Profile, o Options, v *HTMLView) string {
	if v == nil {
		v = &HTMLView{}
	}
	var b strings.Builder
	tot := computeTotals(p)
	title := "mpiscope: " + orDash(commandLine(p.Meta.Command))
	connect := "'none'"
	if v.Connect {
		connect = "'self'"
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src %s\">\n", connect)
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s</style></head><body>\n", esc(title), htmlCSS)
	b.WriteString(`<nav><b>mpiscope</b> <a href="#header">Job</a>`)
	navs := [][2]string{{"comp", "Compensation"}, {"busy", "In progress"}, {"ranks", "Ranks"}, {"funcs", "Functions"}, {"sites", "Callsites"},
		{"paths", "Call paths"}, {"sizes", "Message sizes"}, {"comms", "Communicators"}, {"p2p", "Point-to-point"}, {"regions", "Regions"},
		{"events", "Events"}, {"waits", "Wait states"}, {"analysis", "Trace analysis"}}
	for _, n := range navs {
		if htmlHas(p, n[0]) {
			fmt.Fprintf(&b, ` <a href="#%s">%s</a>`, n[0], n[1])
		}
	}
	b.WriteString("</nav>\n<main>\n")
	b.WriteString(v.Top)
	htmlHeader(&b, p, o, tot)
	htmlComp(&b, p, o) // html_analysis.go, as the next three
	htmlBusy(&b, p, o)
	htmlRanks(&b, p, o, tot)
	htmlFuncs(&b, p, o, tot)
	htmlSites(&b, p, o, tot)
	htmlPaths(&b, p, o, tot)
	htmlHists(&b, p, o)
	htmlComms(&b, p, o, tot)
	htmlPeers(&b, p, o)
	htmlRegions(&b, p, o)
	htmlEvents(&b, p, o)
	htmlWaits(&b, p, o)
	htmlAnalysis(&b, p, o)
	b.WriteString(v.Bottom)
	b.WriteString("</main>\n")
	data, _ := json.Marshal(plots(p, tot)) // escapes <, > and & (safe inside <script>)
	b.WriteString(`<script type="application/json" id="mpiscope-data">`)
	b.Write(data)
	b.WriteString("</script>\n<script>\n")
	b.WriteString(htmlJS)
	b.WriteString("</script>\n")
	if v.Script != "" {
		b.WriteString("<script>\n" + v.Script + "</script>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// htmlHas tells whether the page has the section id.
func htmlHas(p *profile.Profile, id string) bool {
	switch id {
	case "busy":
		return len(p.Busy) > 0
	case "sites":
		return len(p.Sites) > 0
	case "sizes":
		return len(p.Hists) > 0
	case "comms":
		return len(p.Comms) > 0
	case "p2p":
		return len(p.Peers) > 0
	case "regions":
		return len(p.Regions) > 0
	case "events":
		return len(p.Events) > 0
	case "comp":
		return len(p.CompRanks) > 0
	case "paths":
		return len(p.Paths) > 0
	case "waits":
		return len(p.Waits) > 0
	case "analysis":
		return p.Analysis != nil
	}
	return true
}

func htmlHeader(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	m := p.Meta
	b.WriteString("<section id=\"header\"><h1>mpiscope report</h1>\n")
	for _, n := range o.Notes {
		b.WriteString(`<p class="warn">NOTE: ` + esc(n) + "</p>\n")
	}
	b.WriteString("<dl class=\"kv\">\n")
	kv := func(k, v string) { fmt.Fprintf(b, "<dt>%s</dt><dd>%s</dd>\n", esc(k), esc(v)) }
	for _, f := range metaFields(p, o) {
		kv(f.k, f.v)
	}
	var set []string
	for _, s := range m.Settings {
		set = append(set, s.Name+"="+s.Value)
	}
	kv("Settings", orDash(strings.Join(set, " ")))
	kv("Status", status(p))
	kv("App time", human(tot.appNs))
	kv("MPI time", human(tot.mpiNs)+" ("+pctStr(pct(tot.mpiNs, tot.appNs))+"% of app time)")
	if s := offSummary(p); s.ranks > 0 {
		kv("Recording off", fmt.Sprintf("%s over %d of %d ranks (min %s on rank %d, max %s on rank %d); not in App time or MPI%%",
			human(s.total), s.ranks, len(p.Ranks), human(s.min), s.minRank, human(s.max), s.maxRank))
	}
	if st := rankStates(p); st != "" {
		kv("Rank states", st)
	}
	if tot.dropped > 0 {
		kv("Dropped", fmt.Sprintf("%d records lost because a fixed table was full; totals are lower bounds", tot.dropped))
	}
	b.WriteString("</dl></section>\n")
}

func htmlBusy(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Busy) == 0 {
		return
	}
	u := unitOf(p.Busy, func(c profile.Call) int64 { return c.ElapsedNs })
	hsection(b, "busy", "In progress (MPI calls not yet returned; times in "+u.name+")")
	t := newHTable("t-busy", R("Rank"), R("Thread"), L("Function"), R("Blocked"), L("Callsite"), L("Comm"), R("Peer/root"), R("Tag"))
	idx := sortedIdx(len(p.Busy), func(i, j int) int {
		a, c := p.Busy[i], p.Busy[j]
		return cmp.Or(cmp.Compare(c.ElapsedNs, a.ElapsedNs), profile.CompareCalls(a, c))
	})
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		c := p.Busy[i]
		site := location(c.Loc, true)
		if c.Region != "" {
			site += " [" + c.Region + "]"
		}
		t.add(hi(int64(c.Rank)), hi(int64(c.Thread)), hs(c.Func), hn(u.i(c.ElapsedNs), float64(c.ElapsedNs)), hs(site),
			hs(orDash(c.Comm)), hn(peerStr(c), float64(c.Peer)), hn(tagStr(c), float64(c.Tag)))
	}
	t.more(n, len(idx))
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlRanks(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	var maxNs int64
	for _, r := range p.Ranks {
		maxNs = max(maxNs, r.AppNs, r.MPINs)
	}
	maxNs = max(maxNs, tot.appNs, tot.mpiNs)
	u := pickUnit(float64(maxNs))
	hsection(b, "ranks", "MPI time per rank (times in "+u.name+")")
	if len(p.Ranks) == 0 {
		b.WriteString("<p>(no rank data)</p></section>\n")
		return
	}
	b.WriteString(`<div class="plot"><label>Order <select id="rank-order"><option value="rank">rank order</option><option value="sorted">sorted by MPI time</option></select></label>` +
		` <label>Bars <select id="rank-scale"><option value="mpi">MPI time</option><option value="app">app time and MPI time</option></select></label>` +
		` <span class="legend"><i class="app"></i>app time <i class="mpi"></i>MPI time <i class="mean"></i>mean MPI time</span><div id="plot-ranks"></div></div>` + "\n")
	if len(p.RankFuncs) > 0 {
		b.WriteString(`<div class="plot"><span class="hint">MPI time per rank by function (order as above; a bar of several ranks is their sum)</span><div id="plot-rankfuncs"></div></div>` + "\n")
	}
	t := newHTable("t-ranks", R("Rank"), L("Host"), R("App time"), R("MPI time"), R("MPI%"), R("Calls"))
	addRank := func(r profile.Rank) {
		mp := pct(r.MPINs, r.AppNs)
		t.addAttr(`data-rank="`+strconv.Itoa(r.Rank)+`"`, hi(int64(r.Rank)), hs(orDash(r.Host)), hn(u.i(r.AppNs), float64(r.AppNs)),
			hn(u.i(r.MPINs), float64(r.MPINs)), hn(pctStr(mp), mp), hi(r.Calls))
	}
	half := htmlLimit(o, len(p.Ranks)) / 2
	if o.All || len(p.Ranks) <= htmlLimit(o, len(p.Ranks)) {
		for _, r := range p.Ranks {
			addRank(r)
		}
	} else {
		idx := sortedIdx(len(p.Ranks), func(i, j int) int {
			a, c := p.Ranks[i], p.Ranks[j]
			return cmp.Or(cmp.Compare(pct(c.MPINs, c.AppNs), pct(a.MPINs, a.AppNs)), cmp.Compare(a.Rank, c.Rank))
		})
		for _, i := range idx[:half] {
			addRank(p.Ranks[i])
		}
		for _, i := range idx[len(idx)-half:] {
			addRank(p.Ranks[i])
		}
		t.notes = append(t.notes, fmt.Sprintf("%d ranks not in this table: it holds the %d highest and %d lowest MPI%%; the plot shows them all", len(idx)-2*half, half, half))
	}
	mp := pct(tot.mpiNs, tot.appNs)
	t.addAttr(`class="total"`, hs("*"), hs(""), hn(u.i(tot.appNs), float64(tot.appNs)), hn(u.i(tot.mpiNs), float64(tot.mpiNs)), hn(pctStr(mp), mp), hi(tot.calls))
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlFuncs(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	var maxNs int64
	var maxCall float64
	for _, f := range p.Funcs {
		maxNs = max(maxNs, f.TimeNs)
		maxCall = max(maxCall, perCall(f.TimeNs, f.Calls))
	}
	u, uc := pickUnit(float64(maxNs)), pickCallUnit(maxCall)
	hsection(b, "funcs", fmt.Sprintf("Functions (by time; times in %s, per call in %s)", u.name, uc.name))
	if len(p.Funcs) == 0 {
		b.WriteString("<p>(no MPI calls recorded)</p></section>\n")
		return
	}
	b.WriteString(`<div class="plot"><div id="plot-funcs"></div></div>` + "\n")
	idx := sortedIdx(len(p.Funcs), func(i, j int) int {
		a, c := p.Funcs[i], p.Funcs[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Name, c.Name))
	})
	t := newHTable("t-funcs", L("Function"), L("Class"), R("Calls"), R("Time"), R("%App"), R("%MPI"), R("Bytes"),
		R("Mean/call"), R("Rank min"), R("(rank)"), R("Rank mean"), R("Rank max"), R("(rank)"), R("COV"))
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		f := p.Funcs[i]
		rt := f.RankTime
		pa, pm, mc, cv := pct(f.TimeNs, tot.appNs), pct(f.TimeNs, tot.mpiNs), perCall(f.TimeNs, f.Calls), spreadCOV(rt)
		t.addAttr(`data-func="`+esc(f.Name)+`"`, hs(f.Name), hs(orDash(f.Class)), hi(f.Calls), hn(u.i(f.TimeNs), float64(f.TimeNs)),
			hn(pctStr(pa), pa), hn(pctStr(pm), pm), hi(f.Bytes), hn(uc.f(mc), mc),
			hn(u.f(rt.Min), rt.Min), hn("("+strconv.Itoa(rt.MinRank)+")", float64(rt.MinRank)), hn(u.f(spreadMean(rt)), spreadMean(rt)),
			hn(u.f(rt.Max), rt.Max), hn("("+strconv.Itoa(rt.MaxRank)+")", float64(rt.MaxRank)), hn(covStr(cv), cv))
	}
	t.more(n, len(idx))
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlSites(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Sites) == 0 {
		return
	}
	var maxNs int64
	var maxCall float64
	for _, s := range p.Sites {
		maxNs = max(maxNs, s.TimeNs)
		maxCall = max(maxCall, float64(s.MaxNs), perCall(s.TimeNs, s.Calls))
	}
	u, uc := pickUnit(float64(maxNs)), pickCallUnit(maxCall)
	hsection(b, "sites", fmt.Sprintf("Top callsites (by time; times in %s, per call in %s)", u.name, uc.name))
	sites, _ := callsites(p)
	idx := sortedIdx(len(sites), func(i, j int) int { return cmp.Compare(sites[j].TimeNs, sites[i].TimeNs) })
	t := newHTable("t-sites", R("ID"), L("Function"), L("Location"), L("Source"), L("Region"), R("Calls"), R("Time"), R("%MPI"),
		R("Bytes"), R("Min/call"), R("Mean/call"), R("Max/call"))
	n := htmlLimit(o, len(idx))
	src := newSourceCache()
	for _, i := range idx[:n] {
		s := sites[i]
		pm, mc := pct(s.TimeNs, tot.mpiNs), perCall(s.TimeNs, s.Calls)
		t.addAttr(`data-site="`+strconv.Itoa(i+1)+`" data-func="`+esc(s.Func)+`"`, hi(int64(i+1)), hs(s.Func), hs(location(s.Loc, true)),
			hs(src.line(s.Loc.File, s.Loc.Line)), hs(orDash(s.Region)), hi(s.Calls),
			hn(u.i(s.TimeNs), float64(s.TimeNs)), hn(pctStr(pm), pm), hi(s.Bytes), hn(uc.i(s.MinNs), float64(s.MinNs)),
			hn(uc.f(mc), mc), hn(uc.i(s.MaxNs), float64(s.MaxNs)))
	}
	t.more(n, len(idx))
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlHists(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Hists) == 0 {
		return
	}
	u, idx := histOrder(p)
	hsection(b, "sizes", "Message sizes (functions by bytes; times in "+u.name+")")
	b.WriteString(`<div class="plot"><label>Bars <select id="hist-metric"><option value="1">calls</option><option value="2">bytes</option><option value="3">time</option></select></label><div id="plot-hists"></div></div>` + "\n")
	t := newHTable("t-sizes", L("Function"), R("Size (bytes)"), R("Calls"), R("Bytes"), R("Time"))
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		h := p.Hists[i]
		for _, bin := range h.Bins {
			lo, _ := sizeRange(bin.Log2)
			t.add(hs(h.Func), hn(sizeLabel(bin.Log2), float64(lo)), hi(bin.Calls), hi(bin.Bytes), hn(u.i(bin.TimeNs), float64(bin.TimeNs)))
		}
	}
	if n < len(idx) {
		t.notes = append(t.notes, fmt.Sprintf("%d more functions not in this page", len(idx)-n))
	}
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlComms(b *strings.Builder, p *profile.Profile, o Options, tot totals) {
	if len(p.Comms) == 0 {
		return
	}
	u := unitOf(p.Comms, func(c profile.Comm) int64 { return c.TimeNs })
	hsection(b, "comms", "Communicators (by time; times in "+u.name+")")
	idx := sortedIdx(len(p.Comms), func(i, j int) int {
		a, c := p.Comms[i], p.Comms[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Key, c.Key))
	})
	t := newHTable("t-comms", L("Communicator"), R("Size"), L("Creator"), R("Members"), R("Calls"), R("Time"), R("%MPI"), R("Bytes"))
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		c := p.Comms[i]
		name := c.Key
		if c.Name != "" && c.Name != c.Key {
			name += " (" + c.Name + ")"
		}
		pm := pct(c.TimeNs, tot.mpiNs)
		t.add(hs(name), hi(int64(c.Size)), hs(orDash(c.Creator)), hi(c.Members), hi(c.Calls), hn(u.i(c.TimeNs), float64(c.TimeNs)),
			hn(pctStr(pm), pm), hi(c.Bytes))
	}
	t.more(n, len(idx))
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlPeers(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Peers) == 0 {
		return
	}
	limit := -1
	if !o.All {
		// At most topKInsert pairs: selected without sorting them all
		// (1.6 million pairs at 100,000 ranks); the matrix shows them all.
		limit = min(htmlLimit(o, len(p.Peers)), max(topKInsert, o.top()))
	}
	count, total, idx := senders(p, limit)
	hsection(b, "p2p", "Point-to-point")
	hint := "MPI_COMM_WORLD ranks; the profile keeps traffic per pair of world ranks, over all communicators"
	comm := ""
	if len(p.CommPeers) > 0 {
		hint = "MPI_COMM_WORLD ranks, whatever the communicator"
		comm = ` <label>Communicator <select id="matrix-comm"></select></label>`
	}
	b.WriteString(`<div class="plot"><label>Colour by <select id="matrix-metric"><option value="2">bytes sent</option><option value="3">messages sent</option></select></label>` + comm +
		` <span class="hint">rows: sender, columns: receiver (` + hint + `)</span><div id="plot-matrix"></div></div>` + "\n")
	if count == 0 {
		b.WriteString("<p>(no messages sent)</p></section>\n")
		return
	}
	b.WriteString("<h3>Top sender pairs by bytes sent</h3>\n")
	t := newHTable("t-p2p", R("Rank"), L("->"), R("Peer"), R("Msgs"), R("Bytes"), R("%Bytes"))
	for _, i := range idx {
		pr := p.Peers[i]
		pb := pct(pr.SentBytes, total)
		t.add(hi(int64(pr.Rank)), hs("->"), hi(int64(pr.Peer)), hi(pr.SentMsgs), hi(pr.SentBytes), hn(pctStr(pb), pb))
	}
	t.more(len(idx), count)
	t.render(b)
	b.WriteString("</section>\n")
}

func htmlRegions(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Regions) == 0 {
		return
	}
	var maxNs int64
	for _, r := range p.Regions {
		maxNs = max(maxNs, r.WallNs, r.MPINs)
	}
	u := pickUnit(float64(maxNs))
	hsection(b, "regions", "Regions (by MPI time; in "+u.name+"; sums over ranks, /rank means; MPI% of wall)")
	idx := sortedIdx(len(p.Regions), func(i, j int) int {
		a, c := p.Regions[i], p.Regions[j]
		return cmp.Or(cmp.Compare(c.MPINs, a.MPINs), strings.Compare(a.Path, c.Path))
	})
	t := newHTable("t-regions", L("Region"), R("Depth"), R("Visits"), R("Ranks"), R("Wall (sum)"), R("Wall/rank"), R("MPI (sum)"),
		R("MPI/rank"), R("MPI%"), R("COV"))
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		r := p.Regions[i]
		wr, mr, mp, cv := perCall(r.WallNs, r.Ranks), perCall(r.MPINs, r.Ranks), pct(r.MPINs, r.WallNs), spreadCOV(r.RankMPI)
		depth := strings.Count(r.Path, "/")
		t.addAttr(`style="--depth:`+strconv.Itoa(depth)+`"`, hs(r.Path), hi(int64(depth)), hi(r.Visits), hi(r.Ranks),
			hn(u.i(r.WallNs), float64(r.WallNs)), hn(u.f(wr), wr), hn(u.i(r.MPINs), float64(r.MPINs)), hn(u.f(mr), mr),
			hn(pctStr(mp), mp), hn(covStr(cv), cv))
	}
	t.more(n, len(idx))
	t.render(b)
	rf := regionFuncs(p)
	for _, i := range idx[:n] {
		r := p.Regions[i]
		fs := rf[r.Path]
		if len(fs) == 0 {
			continue
		}
		fu := unitOf(fs, func(f regionFunc) int64 { return f.TimeNs })
		fmt.Fprintf(b, "<details><summary>Region %s: functions at its callsites (by time; times in %s)</summary>\n", esc(r.Path), fu.name)
		ft := newHTable("t-region-"+strconv.Itoa(i), L("Function"), R("Calls"), R("Time"), R("%Region MPI"), R("Bytes"))
		fn := htmlLimit(o, len(fs))
		for _, f := range fs[:fn] {
			pr := pct(f.TimeNs, r.MPINs)
			ft.add(hs(f.Func), hi(f.Calls), hn(fu.i(f.TimeNs), float64(f.TimeNs)), hn(pctStr(pr), pr), hi(f.Bytes))
		}
		ft.more(fn, len(fs))
		ft.render(b)
		b.WriteString("</details>\n")
	}
	b.WriteString("</section>\n")
}

func htmlEvents(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Events) == 0 {
		return
	}
	hsection(b, "events", "User events (by count)")
	idx := sortedIdx(len(p.Events), func(i, j int) int {
		a, c := p.Events[i], p.Events[j]
		return cmp.Or(cmp.Compare(c.Count, a.Count), strings.Compare(a.Text, c.Text))
	})
	t := newHTable("t-events", L("Event"), R("Count"), R("Ranks"))
	n := htmlLimit(o, len(idx))
	for _, i := range idx[:n] {
		e := p.Events[i]
		t.add(hs(e.Text), hi(e.Count), hi(e.Ranks))
	}
	t.more(n, len(idx))
	t.render(b)
	b.WriteString("</section>\n")
}

// plots derives the data the page's script draws.
func plots(p *profile.Profile, tot totals) plotData {
	d := plotData{MPINs: tot.mpiNs, NumRank: p.Meta.NumRanks, Funcs: []funcPlot{}, Hists: []histPlot{}, Sites: []sitePlot{}}
	if len(p.Ranks) > 0 {
		d.Ranks = rankPlots(p.Ranks)
	}
	idx := sortedIdx(len(p.Funcs), func(i, j int) int {
		a, c := p.Funcs[i], p.Funcs[j]
		return cmp.Or(cmp.Compare(c.TimeNs, a.TimeNs), strings.Compare(a.Name, c.Name))
	})
	for _, i := range idx[:min(len(idx), htmlFuncBars)] {
		f := p.Funcs[i]
		d.Funcs = append(d.Funcs, funcPlot{Name: clean(f.Name), TimeNs: f.TimeNs, Min: finite(f.RankTime.Min), MinRank: f.RankTime.MinRank,
			Mean: finite(spreadMean(f.RankTime)), Max: finite(f.RankTime.Max), MaxRank: f.RankTime.MaxRank})
	}
	d.Matrix = matrix(p)
	d.CommMatrices = commMatrices(p, d.Matrix)
	d.RankFuncs = rankFuncPlots(p)
	for _, h := range p.Hists {
		hp := histPlot{Func: clean(h.Func), Bins: [][]string{}}
		for _, bin := range h.Bins {
			hp.Bins = append(hp.Bins, []string{sizeLabel(bin.Log2), itoa(bin.Calls), itoa(bin.Bytes), itoa(bin.TimeNs)})
		}
		d.Hists = append(d.Hists, hp)
	}
	sites, of := callsites(p)
	for i, s := range p.Sites {
		if len(d.Sites) >= 4*HTMLRows {
			break
		}
		rt, c := s.RankTime, sites[of[i]]
		d.Sites = append(d.Sites, sitePlot{ID: of[i] + 1, Func: clean(s.Func), Location: clean(location(c.Loc, true)), Region: clean(s.Region),
			Calls: s.Calls, TimeNs: s.TimeNs, N: rt.N, Min: finite(rt.Min), MinRank: rt.MinRank, Mean: finite(spreadMean(rt)),
			Max: finite(rt.Max), MaxRank: rt.MaxRank})
	}
	return d
}

func rankPlots(ranks []profile.Rank) *rankPlot {
	rp := &rankPlot{Order: [][]int64{}, Sorted: [][]int64{}}
	var sum float64
	for i, r := range ranks {
		if i == 0 || r.MPINs < rp.Min {
			rp.Min, rp.MinR = r.MPINs, r.Rank
		}
		if i == 0 || r.MPINs > rp.Max {
			rp.Max, rp.MaxR = r.MPINs, r.Rank
		}
		sum += float64(r.MPINs)
	}
	rp.Mean = sum / float64(len(ranks))
	rp.Bin = (len(ranks) + htmlRankBars - 1) / htmlRankBars
	for lo := 0; lo < len(ranks); lo += rp.Bin {
		hi := min(lo+rp.Bin, len(ranks))
		var app, mpi float64
		mn, mx := ranks[lo].MPINs, ranks[lo].MPINs
		for _, r := range ranks[lo:hi] {
			app += float64(r.AppNs)
			mpi += float64(r.MPINs)
			mn, mx = min(mn, r.MPINs), max(mx, r.MPINs)
		}
		k := float64(hi - lo)
		rp.Order = append(rp.Order, []int64{int64(ranks[lo].Rank), int64(ranks[hi-1].Rank), int64(math.Round(app / k)), int64(math.Round(mpi / k)), mn, mx})
	}
	idx := sortedIdx(len(ranks), func(i, j int) int { return cmp.Compare(ranks[i].MPINs, ranks[j].MPINs) })
	n := min(len(idx), htmlRankBars)
	for k := range n {
		i := idx[k]
		if n < len(idx) { // quantiles: evenly spaced, the first and last included
			i = idx[int(math.Round(float64(k)*float64(len(idx)-1)/float64(n-1)))]
		}
		r := ranks[i]
		rp.Sorted = append(rp.Sorted, []int64{int64(r.Rank), r.AppNs, r.MPINs})
	}
	return rp
}

// matrix bins the sent traffic into blocks of ranks.
func matrix(p *profile.Profile) *matrixPlot {
	n := p.Meta.NumRanks
	for _, pr := range p.Peers {
		n = max(n, pr.Rank+1, pr.Peer+1)
	}
	if n <= 0 || len(p.Peers) == 0 {
		return nil
	}
	m := &matrixPlot{N: n, Block: (n + htmlMatrixBlocks - 1) / htmlMatrixBlocks, Cells: [][4]int64{}}
	m.Blocks = (n + m.Block - 1) / m.Block
	cell := map[[2]int]int{}
	for _, pr := range p.Peers {
		if pr.SentMsgs == 0 && pr.SentBytes == 0 || pr.Rank < 0 || pr.Peer < 0 {
			continue
		}
		k := [2]int{pr.Rank / m.Block, pr.Peer / m.Block}
		i, ok := cell[k]
		if !ok {
			i = len(m.Cells)
			cell[k] = i
			m.Cells = append(m.Cells, [4]int64{int64(k[0]), int64(k[1]), 0, 0})
		}
		m.Cells[i][2] += pr.SentBytes
		m.Cells[i][3] += pr.SentMsgs
	}
	return m
}

// DisplayName is a function's name as the reports show it (demangled).
func DisplayName(fn string) string { return displayName(fn) }

// Location is a callsite's location as the report's tables show it
// (function at file:line, base names).
func Location(l profile.Loc) string { return location(l, true) }
