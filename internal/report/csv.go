package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// csvTable is one CSV table: a header row and data rows of the same width.
type csvTable struct {
	name   string
	header []string
	rows   [][]string
}

func (t *csvTable) row(fields ...string) { t.rows = append(t.rows, fields) }

// csvField quotes a field per RFC 4180 when a reader could misparse it,
// and also when it starts with '#', which readers configured to skip
// comment lines would drop, or with or ends in a space.
func csvField(f string) string {
	if f != "" && (strings.ContainsAny(f, ",\"\r\n") || f[0] == '#' || f[0] == ' ' || f[len(f)-1] == ' ') {
		return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
	}
	return f
}

func csvLine(b *strings.Builder, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(csvField(f))
	}
	b.WriteByte('\n')
}

// bytes renders the table as one CSV file.
func (t *csvTable) bytes() []byte {
	var b strings.Builder
	csvLine(&b, t.header)
	for _, r := range t.rows {
		csvLine(&b, r)
	}
	return []byte(b.String())
}

func ff(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
func fi(x int) string     { return strconv.Itoa(x) }
func fu(x uint64) string  { return strconv.FormatUint(x, 10) }
func fb(x bool) string    { return strconv.FormatBool(x) }

var spreadHeader = []string{"n", "min_ns", "min_rank", "mean_ns", "max_ns", "max_rank", "cov"}

func spreadFields(s jsonSpread) []string {
	return []string{itoa(s.N), ff(s.Min), fi(s.MinRank), ff(s.Mean), ff(s.Max), fi(s.MaxRank), ff(s.COV)}
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// csvTables builds the same document as JSON as tidy tables: one
// observation per row, one variable per column, every row as wide as the
// header. Every table is present, possibly with only its header.
func csvTables(p *profile.Profile, o Options) []*csvTable {
	d := buildDoc(p, o)
	var ts []*csvTable
	table := func(name string, header ...string) *csvTable {
		t := &csvTable{name: name, header: header}
		ts = append(ts, t)
		return t
	}
	m := d.Meta

	t := table("meta", "schema", "source", "command", "num_ranks", "hosts", "mpi_library", "mpi_version", "family",
		"tool", "timer", "start_ns", "stop_ns", "start", "stop", "duration_ns", "snapshot", "partial")
	t.row(d.Schema, d.Source, commandLine(m.Command), fi(m.NumRanks), strings.Join(m.Hosts, " "), m.MPILibrary,
		m.MPIVersion, m.Family, m.Tool, m.Timer, itoa(m.StartNs), itoa(m.StopNs), m.Start, m.Stop, itoa(m.DurationNs),
		fi(m.Snapshot), fb(m.Partial))

	t = table("settings", "name", "value")
	for _, s := range m.Settings {
		t.row(s.Name, s.Value)
	}

	t = table("notes", "note")
	for _, n := range d.Notes {
		t.row(n)
	}

	tot := d.Totals
	t = table("totals", "ranks", "app_ns", "mpi_ns", "calls", "dropped", "mpi_pct", "mpi_pct_mean")
	t.row(fi(tot.Ranks), itoa(tot.AppNs), itoa(tot.MPINs), itoa(tot.Calls), itoa(tot.Dropped), ff(tot.MPIPct), ff(tot.MPIPctMean))

	t = table("ranks", "rank", "host", "pid", "app_ns", "mpi_ns", "mpi_pct", "calls", "threads", "state", "dropped")
	for _, r := range d.Ranks {
		t.row(fi(r.Rank), r.Host, fi(r.PID), itoa(r.AppNs), itoa(r.MPINs), ff(r.MPIPct), itoa(r.Calls),
			fi(r.Threads), r.State, itoa(r.Dropped))
	}

	t = table("funcs", append([]string{"name", "class", "calls", "time_ns", "pct_app", "pct_mpi", "bytes",
		"mean_ns", "min_call_ns", "max_call_ns"}, prefixed("rank_time_", spreadHeader)...)...)
	for _, f := range d.Funcs {
		t.row(append([]string{f.Name, f.Class, itoa(f.Calls), itoa(f.TimeNs), ff(f.PctApp), ff(f.PctMPI),
			itoa(f.Bytes), ff(f.MeanNs), itoa(f.MinCallNs), itoa(f.MaxCallNs)}, spreadFields(f.RankTime)...)...)
	}

	t = table("callsites", "id", "func", "function", "file", "line", "location", "region", "calls", "time_ns",
		"pct_mpi", "bytes", "min_ns", "mean_ns", "max_ns", "sites")
	for _, c := range d.Calls {
		ids := make([]string, len(c.Sites))
		for i, s := range c.Sites {
			ids[i] = fi(s)
		}
		t.row(fi(c.ID), c.Func, c.Function, c.File, fi(c.Line), c.Location, c.Region, itoa(c.Calls), itoa(c.TimeNs),
			ff(c.PctMPI), itoa(c.Bytes), itoa(c.MinNs), ff(c.MeanNs), itoa(c.MaxNs), strings.Join(ids, " "))
	}

	t = table("sites", append([]string{"id", "callsite", "func", "location", "module", "offset", "function", "file", "line",
		"region", "calls", "time_ns", "pct_mpi", "bytes", "min_ns", "mean_ns", "max_ns"},
		prefixed("rank_time_", spreadHeader)...)...)
	for _, s := range d.Sites {
		l := s.Loc
		t.row(append([]string{fi(s.ID), fi(s.Callsite), s.Func, s.Location, l.Module, fu(l.Offset), l.Function, l.File,
			fi(l.Line), s.Region, itoa(s.Calls), itoa(s.TimeNs), ff(s.PctMPI), itoa(s.Bytes), itoa(s.MinNs), ff(s.MeanNs),
			itoa(s.MaxNs)}, spreadFields(s.RankTime)...)...)
	}

	t = table("message_sizes", "func", "log2", "lo", "hi", "calls", "bytes", "time_ns")
	for _, h := range d.Hists {
		for _, b := range h.Bins {
			t.row(h.Func, fi(b.Log2), fu(b.Lo), fu(b.Hi), itoa(b.Calls), itoa(b.Bytes), itoa(b.TimeNs))
		}
	}

	t = table("comms", "key", "name", "size", "creator", "members", "calls", "time_ns", "pct_mpi", "bytes")
	for _, cm := range d.Comms {
		t.row(cm.Key, cm.Name, fi(cm.Size), cm.Creator, itoa(cm.Members), itoa(cm.Calls), itoa(cm.TimeNs),
			ff(cm.PctMPI), itoa(cm.Bytes))
	}

	t = table("peers", "rank", "peer", "sent_msgs", "sent_bytes", "recv_msgs", "recv_bytes")
	for _, pr := range d.Peers {
		t.row(fi(pr.Rank), fi(pr.Peer), itoa(pr.SentMsgs), itoa(pr.SentBytes), itoa(pr.RecvMsgs), itoa(pr.RecvBytes))
	}

	t = table("regions", append([]string{"path", "visits", "ranks", "wall_ns", "mpi_ns", "mpi_pct"},
		prefixed("rank_mpi_", spreadHeader)...)...)
	for _, r := range d.Regions {
		t.row(append([]string{r.Path, itoa(r.Visits), itoa(r.Ranks), itoa(r.WallNs), itoa(r.MPINs), ff(r.MPIPct)},
			spreadFields(r.RankMPI)...)...)
	}

	t = table("region_funcs", "region", "func", "calls", "time_ns", "pct_region_mpi", "bytes")
	for _, r := range d.Regions {
		for _, f := range r.Funcs {
			t.row(r.Path, f.Func, itoa(f.Calls), itoa(f.TimeNs), ff(f.PctRegionMPI), itoa(f.Bytes))
		}
	}

	t = table("events", "text", "count", "ranks")
	for _, e := range d.Events {
		t.row(e.Text, itoa(e.Count), itoa(e.Ranks))
	}

	// JSON's in_progress: peer and tag empty when the call has none
	// (JSON null), -2 for MPI_ANY_SOURCE, -1 for MPI_ANY_TAG.
	t = table("in_progress", "rank", "thread", "func", "module", "offset", "function", "file", "line", "location",
		"region", "comm", "peer", "tag", "elapsed_ns")
	for _, c := range d.InProgress {
		l := c.Loc
		t.row(fi(c.Rank), fi(c.Thread), c.Func, l.Module, fu(l.Offset), l.Function, l.File, fi(l.Line), c.Location,
			c.Region, c.Comm, optInt(c.Peer), optInt(c.Tag), itoa(c.ElapsedNs))
	}

	// JSON's recording_off.ranks: the ranks with time off (their app_ns in
	// ranks leaves it out).
	t = table("recording_off", "rank", "off_ns")
	if d.RecordingOff != nil {
		for _, r := range d.RecordingOff.Ranks {
			t.row(fi(r.Rank), itoa(r.OffNs))
		}
	}
	if len(d.WaitStates) > 0 { // wait.go: only with the piggyback channel
		t = table("waits", append([]string{"kind", "func", "location", "module", "offset", "comm", "calls", "wait_ns", "max_ns", "max_rank", "max_peer"},
			prefixed("rank_wait_", spreadHeader)...)...)
		for _, w := range d.WaitStates {
			t.row(append([]string{w.Kind, w.Func, w.Location, w.Loc.Module, strconv.FormatUint(w.Loc.Offset, 10), w.Comm, itoa(w.Calls),
				itoa(w.WaitNs), itoa(w.MaxNs), fi(w.MaxRank), fi(w.MaxPeer)}, spreadFields(w.RankWait)...)...)
		}
	}
	analysisCSV(d.Analysis, table) // analysis.go: only with an analysis
	compCSV(d.Compensation, table) // compensate.go: only with compensation
	return ts
}

// optInt renders an optional integer: "" when absent.
func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return fi(*p)
}

// longHeader is the header of the one-table CSV form.
var longHeader = []string{"table", "row", "column", "value"}

// csvBytes renders every table as one long table: a row (table, row,
// column, value) per cell, rows numbered from 1 within each table.
func csvBytes(p *profile.Profile, o Options) ([]byte, error) {
	var b strings.Builder
	csvLine(&b, longHeader)
	for _, t := range csvTables(p, o) {
		for i, r := range t.rows {
			for j, v := range r {
				csvLine(&b, []string{t.name, fi(i + 1), t.header[j], v})
			}
		}
	}
	return []byte(b.String()), nil
}

// WriteCSVDir writes the tables of the CSV format into directory dir, one
// file per table (dir/meta.csv, dir/funcs.csv, ...), creating dir if needed,
// and returns the paths written.
func WriteCSVDir(dir string, p *profile.Profile, o Options) ([]string, error) {
	if p == nil {
		p = &profile.Profile{}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	var paths []string
	for _, t := range csvTables(p, o) {
		path := filepath.Join(dir, t.name+".csv")
		if err := os.WriteFile(path, t.bytes(), 0o666); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}
