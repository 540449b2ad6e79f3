package report

import (
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// csvOut writes RFC 4180 CSV sections, each introduced by "# name".
type csvOut struct {
	b strings.Builder
}

func (c *csvOut) section(name string, header ...string) {
	if c.b.Len() > 0 {
		c.b.WriteByte('\n')
	}
	c.b.WriteString("# " + name + "\n")
	c.row(header...)
}

func (c *csvOut) row(fields ...string) {
	for i, f := range fields {
		if i > 0 {
			c.b.WriteByte(',')
		}
		// Quote anything a reader could misparse, including a leading '#',
		// which readers configured to skip comment lines would drop.
		if f != "" && (strings.ContainsAny(f, ",\"\r\n") || f[0] == '#' || f[0] == ' ' || f[len(f)-1] == ' ') {
			f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
		c.b.WriteString(f)
	}
	c.b.WriteByte('\n')
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

// csvBytes renders the same document as JSON, one table per section. Every
// section is always present, possibly with only its header row.
func csvBytes(p *profile.Profile, o Options) ([]byte, error) {
	d := buildDoc(p, o)
	var c csvOut
	m := d.Meta

	c.section("meta", "field", "value")
	c.row("schema", d.Schema)
	c.row("source", d.Source)
	c.row("command", commandLine(m.Command))
	c.row("num_ranks", fi(m.NumRanks))
	c.row("hosts", strings.Join(m.Hosts, " "))
	c.row("mpi_library", m.MPILibrary)
	c.row("mpi_version", m.MPIVersion)
	c.row("family", m.Family)
	c.row("tool", m.Tool)
	c.row("timer", m.Timer)
	c.row("start_ns", itoa(m.StartNs))
	c.row("stop_ns", itoa(m.StopNs))
	c.row("start", m.Start)
	c.row("stop", m.Stop)
	c.row("duration_ns", itoa(m.DurationNs))
	c.row("snapshot", fi(m.Snapshot))
	c.row("partial", fb(m.Partial))

	c.section("settings", "name", "value")
	for _, s := range m.Settings {
		c.row(s.Name, s.Value)
	}

	c.section("notes", "note")
	for _, n := range d.Notes {
		c.row(n)
	}

	t := d.Totals
	c.section("totals", "ranks", "app_ns", "mpi_ns", "calls", "dropped", "mpi_pct", "mpi_pct_mean")
	c.row(fi(t.Ranks), itoa(t.AppNs), itoa(t.MPINs), itoa(t.Calls), itoa(t.Dropped), ff(t.MPIPct), ff(t.MPIPctMean))

	c.section("ranks", "rank", "host", "pid", "app_ns", "mpi_ns", "mpi_pct", "calls", "threads", "state", "dropped")
	for _, r := range d.Ranks {
		c.row(fi(r.Rank), r.Host, fi(r.PID), itoa(r.AppNs), itoa(r.MPINs), ff(r.MPIPct), itoa(r.Calls),
			fi(r.Threads), r.State, itoa(r.Dropped))
	}

	c.section("funcs", append([]string{"name", "class", "calls", "time_ns", "pct_app", "pct_mpi", "bytes",
		"mean_ns", "min_call_ns", "max_call_ns"}, prefixed("rank_time_", spreadHeader)...)...)
	for _, f := range d.Funcs {
		c.row(append([]string{f.Name, f.Class, itoa(f.Calls), itoa(f.TimeNs), ff(f.PctApp), ff(f.PctMPI),
			itoa(f.Bytes), ff(f.MeanNs), itoa(f.MinCallNs), itoa(f.MaxCallNs)}, spreadFields(f.RankTime)...)...)
	}

	c.section("sites", append([]string{"id", "func", "location", "module", "offset", "function", "file", "line",
		"region", "calls", "time_ns", "pct_mpi", "bytes", "min_ns", "mean_ns", "max_ns"},
		prefixed("rank_time_", spreadHeader)...)...)
	for _, s := range d.Sites {
		l := s.Loc
		c.row(append([]string{fi(s.ID), s.Func, s.Location, l.Module, fu(l.Offset), l.Function, l.File, fi(l.Line),
			s.Region, itoa(s.Calls), itoa(s.TimeNs), ff(s.PctMPI), itoa(s.Bytes), itoa(s.MinNs), ff(s.MeanNs),
			itoa(s.MaxNs)}, spreadFields(s.RankTime)...)...)
	}

	c.section("message_sizes", "func", "log2", "lo", "hi", "calls", "bytes", "time_ns")
	for _, h := range d.Hists {
		for _, b := range h.Bins {
			c.row(h.Func, fi(b.Log2), fu(b.Lo), fu(b.Hi), itoa(b.Calls), itoa(b.Bytes), itoa(b.TimeNs))
		}
	}

	c.section("comms", "key", "name", "size", "creator", "members", "calls", "time_ns", "pct_mpi", "bytes")
	for _, cm := range d.Comms {
		c.row(cm.Key, cm.Name, fi(cm.Size), cm.Creator, itoa(cm.Members), itoa(cm.Calls), itoa(cm.TimeNs),
			ff(cm.PctMPI), itoa(cm.Bytes))
	}

	c.section("peers", "rank", "peer", "sent_msgs", "sent_bytes", "recv_msgs", "recv_bytes")
	for _, pr := range d.Peers {
		c.row(fi(pr.Rank), fi(pr.Peer), itoa(pr.SentMsgs), itoa(pr.SentBytes), itoa(pr.RecvMsgs), itoa(pr.RecvBytes))
	}

	c.section("regions", append([]string{"path", "visits", "ranks", "wall_ns", "mpi_ns", "mpi_pct"},
		prefixed("rank_mpi_", spreadHeader)...)...)
	for _, r := range d.Regions {
		c.row(append([]string{r.Path, itoa(r.Visits), itoa(r.Ranks), itoa(r.WallNs), itoa(r.MPINs), ff(r.MPIPct)},
			spreadFields(r.RankMPI)...)...)
	}

	c.section("region_funcs", "region", "func", "calls", "time_ns", "pct_region_mpi", "bytes")
	for _, r := range d.Regions {
		for _, f := range r.Funcs {
			c.row(r.Path, f.Func, itoa(f.Calls), itoa(f.TimeNs), ff(f.PctRegionMPI), itoa(f.Bytes))
		}
	}

	c.section("events", "text", "count", "ranks")
	for _, e := range d.Events {
		c.row(e.Text, itoa(e.Count), itoa(e.Ranks))
	}
	return []byte(c.b.String()), nil
}
