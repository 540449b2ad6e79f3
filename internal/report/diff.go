package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// The diff of two runs (mpiscope diff A B): what changed from run A to run
// B, per function, callsite, communicator and message-size bin, each
// table sorted by the absolute change in time.

// DiffSchema identifies the JSON layout of a diff; bump on incompatible
// changes.
const DiffSchema = "mpiscope.diff/1"

// DiffOptions control WriteDiff.
type DiffOptions struct {
	PerRank bool   // divide each run's values by its number of ranks
	All     bool   // text: never truncate tables
	Top     int    // text: rows per table when !All; DefaultTop if <= 0
	SourceA string // where the profiles came from
	SourceB string
	NotesA  []string // e.g. "partial profile: 3 of 4 ranks (missing: 2)"
	NotesB  []string
}

// WriteDiff renders the changes from a to b in format f (Text or JSON).
func WriteDiff(w io.Writer, a, b *profile.Profile, f Format, o DiffOptions) error {
	d := makeDiff(a, b, o)
	var out []byte
	switch f {
	case Text:
		out = []byte(diffText(d, o))
	case JSON:
		var err error
		if out, err = diffJSON(d); err != nil {
			return err
		}
	default:
		return fmt.Errorf("report: diff has no %v output (want text or json)", f)
	}
	_, err := w.Write(out)
	return err
}

// dval is one quantity in run A and in run B.
type dval struct{ a, b float64 }

func (v dval) change() float64 { return v.b - v.a }

// changePct is the change in percent of A; ok is false when A is 0 and B
// is not (new in B).
func (v dval) changePct() (float64, bool) {
	if v.a == 0 {
		return 0, v.b == 0
	}
	return 100 * (v.b - v.a) / math.Abs(v.a), true
}

// drow is one row of a diff table: what it is, and its calls, time and
// bytes in both runs.
type drow struct {
	key   string // identity across the runs
	label []string
	// identity for JSON
	fn       string // MPI function
	loc      profile.Loc
	region   string
	comm     string
	log2     int
	calls    dval
	timeNs   dval
	bytes    dval
	isSite   bool
	isSize   bool
	isComm   bool
	function string // demangled callsite function
}

func (r *drow) changed() bool {
	return r.calls.change() != 0 || r.timeNs.change() != 0 || r.bytes.change() != 0
}

// dtable accumulates rows of one table from both runs.
type dtable struct {
	rows []*drow
	at   map[string]*drow
}

// add adds v (calls, time, bytes, already scaled) to the side (0: A, 1:
// B) of the row with r's key, r itself when the key is new.
func (t *dtable) add(side int, r drow, calls, timeNs, bytes float64) {
	if t.at == nil {
		t.at = map[string]*drow{}
	}
	x, ok := t.at[r.key]
	if !ok {
		x = &r
		t.at[r.key] = x
		t.rows = append(t.rows, x)
	}
	for _, p := range []struct {
		v *dval
		n float64
	}{{&x.calls, calls}, {&x.timeNs, timeNs}, {&x.bytes, bytes}} {
		if side == 0 {
			p.v.a += p.n
		} else {
			p.v.b += p.n
		}
	}
}

// changed returns the rows that changed, by absolute change in time, then
// in calls, then in bytes (descending), then by key.
func (t *dtable) changed() []*drow {
	var out []*drow
	for _, r := range t.rows {
		if r.changed() {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(x, y *drow) int {
		return cmp.Or(cmp.Compare(math.Abs(y.timeNs.change()), math.Abs(x.timeNs.change())),
			cmp.Compare(math.Abs(y.calls.change()), math.Abs(x.calls.change())),
			cmp.Compare(math.Abs(y.bytes.change()), math.Abs(x.bytes.change())),
			strings.Compare(x.key, y.key))
	})
	return out
}

// diffRun is what the diff says of one run.
type diffRun struct {
	source  string
	notes   []string
	command string
	argv    []string
	ranks   int
	library string
	family  string
	scale   float64 // 1, or 1/ranks with PerRank
}

// diff is the comparison of two profiles.
type diff struct {
	a, b                        diffRun
	perRank                     bool
	differ                      []string // "rank count", "command line", "MPI library"
	app, mpi, calls, bytes, pct dval
	funcs, sites, comms, sizes  []*drow
	shown                       [4]int // rows of each table, before truncation
}

// numRanks is the job's rank count: Meta.NumRanks, else the ranks
// present, else 1.
func numRanks(p *profile.Profile) int {
	switch {
	case p.Meta.NumRanks > 0:
		return p.Meta.NumRanks
	case len(p.Ranks) > 0:
		return len(p.Ranks)
	}
	return 1
}

// perRankOf is the number of ranks that a run's values are divided by with
// -per-rank: the ranks whose data the profile holds.
func perRankOf(p *profile.Profile) int {
	if len(p.Ranks) > 0 {
		return len(p.Ranks)
	}
	return numRanks(p)
}

func makeDiff(pa, pb *profile.Profile, o DiffOptions) *diff {
	if pa == nil {
		pa = &profile.Profile{}
	}
	if pb == nil {
		pb = &profile.Profile{}
	}
	pa, pb = recordedTime(pa), recordedTime(pb)
	d := &diff{perRank: o.PerRank}
	run := func(p *profile.Profile, src string, notes []string) diffRun {
		r := diffRun{source: src, notes: notes, command: commandLine(p.Meta.Command), argv: p.Meta.Command,
			ranks: numRanks(p), library: oneLine(p.Meta.MPILibrary), family: p.Meta.Family, scale: 1}
		if o.PerRank {
			r.scale = 1 / float64(perRankOf(p))
		}
		return r
	}
	d.a, d.b = run(pa, o.SourceA, o.NotesA), run(pb, o.SourceB, o.NotesB)
	if d.a.ranks != d.b.ranks {
		d.differ = append(d.differ, "rank count")
	}
	if d.a.command != d.b.command {
		d.differ = append(d.differ, "command line")
	}
	if d.a.library != d.b.library || d.a.family != d.b.family {
		d.differ = append(d.differ, "MPI library")
	}

	var funcs, sites, comms, sizes dtable
	for side, p := range []*profile.Profile{pa, pb} {
		s := d.a.scale
		if side == 1 {
			s = d.b.scale
		}
		set := func(v *dval, x float64) {
			if side == 0 {
				v.a = x
			} else {
				v.b = x
			}
		}
		tot := computeTotals(p)
		var bytes int64
		for _, f := range p.Funcs {
			bytes += f.Bytes
			funcs.add(side, drow{key: f.Name, label: []string{f.Name}, fn: f.Name},
				float64(f.Calls)*s, float64(f.TimeNs)*s, float64(f.Bytes)*s)
		}
		set(&d.app, float64(tot.appNs)*s)
		set(&d.mpi, float64(tot.mpiNs)*s)
		set(&d.calls, float64(tot.calls)*s)
		set(&d.bytes, float64(bytes)*s)
		set(&d.pct, pct(tot.mpiNs, tot.appNs))

		rows, _ := callsites(p)
		for _, c := range rows {
			r := drow{fn: c.Func, loc: c.Loc, region: c.Region, isSite: true, function: displayName(c.Loc.Function)}
			if c.Loc.File != "" && c.Loc.Line > 0 {
				// A source line, whatever its address in either build.
				r.key = strings.Join([]string{c.Func, c.Region, r.function, filepath.Base(c.Loc.File), strconv.Itoa(c.Loc.Line)}, "\x00")
				r.loc.Module, r.loc.Offset = "", 0
			} else {
				r.key = strings.Join([]string{c.Func, c.Region, r.function, filepath.Base(c.Loc.Module), strconv.FormatUint(c.Loc.Offset, 16)}, "\x00")
			}
			r.label = []string{c.Func, location(r.loc, true), orDash(c.Region)}
			sites.add(side, r, float64(c.Calls)*s, float64(c.TimeNs)*s, float64(c.Bytes)*s)
		}
		for _, c := range p.Comms {
			name := c.Key
			if c.Name != "" && c.Name != c.Key {
				name += " (" + c.Name + ")"
			}
			comms.add(side, drow{key: c.Key, label: []string{name}, comm: c.Key, isComm: true},
				float64(c.Calls)*s, float64(c.TimeNs)*s, float64(c.Bytes)*s)
		}
		for _, h := range p.Hists {
			for _, bin := range h.Bins {
				sizes.add(side, drow{key: h.Func + "\x00" + strconv.Itoa(bin.Log2), label: []string{h.Func, sizeLabel(bin.Log2)},
					fn: h.Func, log2: bin.Log2, isSize: true}, float64(bin.Calls)*s, float64(bin.TimeNs)*s, float64(bin.Bytes)*s)
			}
		}
	}
	d.funcs, d.sites, d.comms, d.sizes = funcs.changed(), sites.changed(), comms.changed(), sizes.changed()
	d.shown = [4]int{len(funcs.rows), len(sites.rows), len(comms.rows), len(sizes.rows)}
	return d
}

// diffText renders d as text.
func diffText(d *diff, o DiffOptions) string {
	var b strings.Builder
	section(&b, "mpiscope diff (B against A)")
	for _, w := range d.differ {
		b.WriteString("NOTE: the runs differ in " + w + "\n")
	}
	for _, n := range d.a.notes {
		b.WriteString("NOTE: A: " + ascii(n) + "\n")
	}
	for _, n := range d.b.notes {
		b.WriteString("NOTE: B: " + ascii(n) + "\n")
	}
	kv := func(k, v string) { fmt.Fprintf(&b, "%-13s: %s\n", k, ascii(v)) }
	both := func(k, a, bv string) {
		if a == bv {
			kv(k, a)
			return
		}
		kv(k, "A: "+a)
		b.WriteString(strings.Repeat(" ", 15) + "B: " + ascii(bv) + "\n")
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

	cnt := d.cnt
	pctOf := changePctStr

	u := d.summaryUnit()
	section(&b, "Summary (times in "+u.name+")")
	t := newTable(L("Quantity"), R("A"), R("B"), R("Change"), R("Change%"))
	for _, r := range []struct {
		name string
		v    dval
		f    func(float64) string
	}{{"App time", d.app, u.f}, {"MPI time", d.mpi, u.f}, {"Calls", d.calls, cnt}, {"Bytes", d.bytes, cnt}} {
		t.add(r.name, r.f(r.v.a), r.f(r.v.b), signed(r.f(r.v.change()), r.v.change()), pctOf(r.v))
	}
	t.add("MPI%", pctStr(d.pct.a), pctStr(d.pct.b), signed(pctStr(d.pct.change()), d.pct.change()), "(points)")
	t.render(&b, "")

	opts := Options{All: o.All, Top: o.Top}
	for i, tb := range []struct {
		title string
		cols  []column
		rows  []*drow
	}{
		{"Functions", []column{L("Function")}, d.funcs},
		{"Callsites", []column{L("Function"), L("Location"), L("Region")}, d.sites},
		{"Communicators", []column{L("Communicator")}, d.comms},
		{"Message sizes", []column{L("Function"), R("Size (bytes)")}, d.sizes},
	} {
		var maxNs float64
		for _, r := range tb.rows {
			maxNs = max(maxNs, math.Abs(r.timeNs.a), math.Abs(r.timeNs.b))
		}
		u := pickUnit(maxNs)
		section(&b, fmt.Sprintf("%s (by absolute change in time; times in %s)", tb.title, u.name))
		if len(tb.rows) == 0 {
			if d.shown[i] == 0 {
				b.WriteString("(none in either run)\n")
			} else {
				b.WriteString("(no change)\n")
			}
			continue
		}
		cols := append(slices.Clone(tb.cols), R("Time A"), R("Time B"), R("Change"), R("Change%"),
			R("Calls A"), R("Calls B"), R("Change"), R("Bytes A"), R("Bytes B"), R("Change"))
		t := newTable(cols...)
		n := opts.limit(len(tb.rows))
		for _, r := range tb.rows[:n] {
			cells := append(slices.Clone(r.label),
				u.f(r.timeNs.a), u.f(r.timeNs.b), signed(u.f(r.timeNs.change()), r.timeNs.change()), pctOf(r.timeNs),
				cnt(r.calls.a), cnt(r.calls.b), signed(cnt(r.calls.change()), r.calls.change()),
				cnt(r.bytes.a), cnt(r.bytes.b), signed(cnt(r.bytes.change()), r.bytes.change()))
			t.add(cells...)
		}
		if n < len(tb.rows) {
			t.note(fmt.Sprintf("(%d more changed rows; use --all)", len(tb.rows)-n))
		}
		t.note(fmt.Sprintf("(%d of %d rows changed)", len(tb.rows), d.shown[i]))
		t.render(&b, "")
	}
	return b.String()
}

// The JSON document of a diff.
type jsonDiff struct {
	Schema  string          `json:"schema"`
	A       jsonDiffRun     `json:"a"`
	B       jsonDiffRun     `json:"b"`
	PerRank bool            `json:"per_rank"`
	Differ  []string        `json:"differ"`
	Summary jsonDiffSummary `json:"summary"`
	Funcs   []jsonDiffRow   `json:"funcs"`
	Sites   []jsonDiffRow   `json:"callsites"`
	Comms   []jsonDiffRow   `json:"comms"`
	Sizes   []jsonDiffRow   `json:"sizes"`
}

type jsonDiffRun struct {
	Source     string   `json:"source"`
	Notes      []string `json:"notes"`
	Command    []string `json:"command"`
	NumRanks   int      `json:"num_ranks"`
	MPILibrary string   `json:"mpi_library"`
	Family     string   `json:"family"`
	Divisor    int      `json:"divisor"` // the values are divided by this (ranks with -per-rank, else 1)
}

// jsonDiffVal is one quantity: ChangePct is null when A is 0 and B is not.
type jsonDiffVal struct {
	A         float64  `json:"a"`
	B         float64  `json:"b"`
	Change    float64  `json:"change"`
	ChangePct *float64 `json:"change_pct"`
}

type jsonDiffSummary struct {
	AppNs  jsonDiffVal `json:"app_ns"`
	MPINs  jsonDiffVal `json:"mpi_ns"`
	Calls  jsonDiffVal `json:"calls"`
	Bytes  jsonDiffVal `json:"bytes"`
	MPIPct jsonDiffVal `json:"mpi_pct"`
}

type jsonDiffRow struct {
	Func     string      `json:"func,omitempty"`
	Function *string     `json:"function,omitempty"` // callsites: the calling function
	File     *string     `json:"file,omitempty"`
	Line     *int        `json:"line,omitempty"`
	Module   *string     `json:"module,omitempty"` // callsites without a source line
	Offset   *uint64     `json:"offset,omitempty"`
	Region   *string     `json:"region,omitempty"`
	Comm     string      `json:"comm,omitempty"`
	Log2     *int        `json:"log2,omitempty"` // message-size bin [lo, hi]
	Lo       *uint64     `json:"lo,omitempty"`
	Hi       *uint64     `json:"hi,omitempty"`
	TimeNs   jsonDiffVal `json:"time_ns"`
	Calls    jsonDiffVal `json:"calls"`
	Bytes    jsonDiffVal `json:"bytes"`
}

func jsonVal(v dval) jsonDiffVal {
	j := jsonDiffVal{A: round6(v.a), B: round6(v.b), Change: round6(v.change())}
	if p, ok := v.changePct(); ok {
		p = round6(p)
		j.ChangePct = &p
	}
	return j
}

func diffJSON(d *diff) ([]byte, error) {
	run := func(r diffRun) jsonDiffRun {
		return jsonDiffRun{Source: r.source, Notes: nonNil(r.notes), Command: nonNil(r.argv), NumRanks: r.ranks,
			MPILibrary: r.library, Family: r.family, Divisor: int(math.Round(1 / r.scale))}
	}
	doc := jsonDiff{Schema: DiffSchema, A: run(d.a), B: run(d.b), PerRank: d.perRank, Differ: nonNil(d.differ),
		Summary: jsonDiffSummary{AppNs: jsonVal(d.app), MPINs: jsonVal(d.mpi), Calls: jsonVal(d.calls),
			Bytes: jsonVal(d.bytes), MPIPct: jsonVal(d.pct)}}
	rows := func(rs []*drow) []jsonDiffRow {
		out := make([]jsonDiffRow, 0, len(rs))
		for _, r := range rs {
			j := jsonDiffRow{Func: r.fn, Comm: r.comm, TimeNs: jsonVal(r.timeNs), Calls: jsonVal(r.calls), Bytes: jsonVal(r.bytes)}
			if r.isSite {
				fn, region := r.function, r.region
				j.Function, j.Region = &fn, &region
				if r.loc.File != "" && r.loc.Line > 0 {
					file, line := r.loc.File, r.loc.Line
					j.File, j.Line = &file, &line
				} else {
					mod, off := r.loc.Module, r.loc.Offset
					j.Module, j.Offset = &mod, &off
				}
			}
			if r.isSize {
				l2 := r.log2
				lo, hi := sizeRange(l2)
				j.Log2, j.Lo, j.Hi = &l2, &lo, &hi
			}
			out = append(out, j)
		}
		return out
	}
	doc.Funcs, doc.Sites, doc.Comms, doc.Sizes = rows(d.funcs), rows(d.sites), rows(d.comms), rows(d.sizes)
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// cnt formats a count: per rank with three decimals, sums as integers.
func (d *diff) cnt(x float64) string {
	if d.perRank {
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}

// summaryUnit is the unit of the summary's times.
func (d *diff) summaryUnit() unit {
	return pickUnit(max(math.Abs(d.app.a), math.Abs(d.app.b), math.Abs(d.mpi.a), math.Abs(d.mpi.b)))
}

// signed puts a + before s when x is positive.
func signed(s string, x float64) string {
	if x > 0 {
		return "+" + s
	}
	return s
}

// changePctStr is v's change in percent, signed; "new" when A is 0.
func changePctStr(v dval) string {
	p, ok := v.changePct()
	switch {
	case !ok:
		return "new"
	case v.change() == 0:
		return "0.00"
	}
	return signed(pctStr(p), p)
}
