package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mpiscope/mpiscope/profile"
)

// Calls in progress (profile.Busy) and time with recording off
// (profile.Rank.OffNs): the "In progress" section, the header's "Recording
// off" line and their JSON fields.

// recordedTime returns p with each rank's AppNs less its OffNs: the time
// with recording on, the denominator of every MPI % and % of application
// time in the reports. p itself is not changed (its Ranks are copied when
// some rank has time off).
func recordedTime(p *profile.Profile) *profile.Profile {
	off := false
	for i := range p.Ranks {
		off = off || p.Ranks[i].OffNs > 0
	}
	if !off {
		return p
	}
	q := *p
	q.Ranks = make([]profile.Rank, len(p.Ranks))
	for i, r := range p.Ranks {
		if r.OffNs > 0 {
			r.AppNs = max(r.AppNs-r.OffNs, 0)
		}
		q.Ranks[i] = r
	}
	return &q
}

// offStats summarises the ranks' time off.
type offStats struct {
	ranks            int // ranks with time off
	total            int64
	min, max         int64
	minRank, maxRank int
}

func offSummary(p *profile.Profile) (s offStats) {
	for i, r := range p.Ranks {
		if i == 0 || r.OffNs < s.min {
			s.min, s.minRank = r.OffNs, r.Rank
		}
		if i == 0 || r.OffNs > s.max {
			s.max, s.maxRank = r.OffNs, r.Rank
		}
		if r.OffNs > 0 {
			s.ranks++
			s.total += r.OffNs
		}
	}
	return s
}

// textOff writes the header line on time with recording off, if any.
func textOff(b *strings.Builder, p *profile.Profile) {
	s := offSummary(p)
	if s.ranks == 0 {
		return
	}
	fmt.Fprintf(b, "%-13s: %s over %d of %d ranks (min %s on rank %d, max %s on rank %d); not in App time or MPI%%\n",
		"Recording off", human(s.total), s.ranks, len(p.Ranks), human(s.min), s.minRank, human(s.max), s.maxRank)
	b.WriteString(strings.Repeat(" ", 15) + "(MPI_Pcontrol(0) or MPISCOPE_ENABLE=0)\n")
}

// peerStr renders a call in progress's peer or root.
func peerStr(c profile.Call) string {
	switch c.Peer {
	case profile.PeerNone:
		return "-"
	case profile.PeerAny:
		return "any"
	}
	if c.Peer < 0 {
		return "-"
	}
	return strconv.Itoa(c.Peer)
}

func tagStr(c profile.Call) string {
	switch c.Tag {
	case profile.TagNone:
		return "-"
	case profile.TagAny:
		return "any"
	}
	return strconv.Itoa(c.Tag)
}

// textBusy writes the "In progress" section: the calls that had not
// returned when the data was written, longest first.
func textBusy(b *strings.Builder, p *profile.Profile, o Options) {
	if len(p.Busy) == 0 {
		return
	}
	u := unitOf(p.Busy, func(c profile.Call) int64 { return c.ElapsedNs })
	section(b, "In progress (MPI calls not yet returned; times in "+u.name+")")
	t := newTable(R("Rank"), R("Thread"), L("Function"), R("Blocked"), L("Callsite"), L("Comm"), R("Peer/root"), R("Tag"))
	idx := sortedIdx(len(p.Busy), func(i, j int) int {
		a, c := p.Busy[i], p.Busy[j]
		if a.ElapsedNs != c.ElapsedNs {
			if a.ElapsedNs > c.ElapsedNs {
				return -1
			}
			return 1
		}
		return profile.CompareCalls(a, c)
	})
	n := o.limit(len(idx))
	for _, i := range idx[:n] {
		c := p.Busy[i]
		site := location(c.Loc, true)
		if c.Region != "" {
			site += " [" + c.Region + "]"
		}
		t.add(strconv.Itoa(c.Rank), strconv.Itoa(c.Thread), c.Func, u.i(c.ElapsedNs), site, orDash(c.Comm), peerStr(c), tagStr(c))
	}
	more(t, n, len(idx))
	t.render(b, "")
}

type jsonBusy struct {
	Rank      int     `json:"rank"`
	Thread    int     `json:"thread"`
	Func      string  `json:"func"`
	Loc       jsonLoc `json:"loc"`
	Location  string  `json:"location"`
	Region    string  `json:"region"`
	Comm      string  `json:"comm"`
	Peer      *int    `json:"peer"` // null: none; -2: MPI_ANY_SOURCE
	Tag       *int    `json:"tag"`  // null: none; -1: MPI_ANY_TAG
	ElapsedNs int64   `json:"elapsed_ns"`
}

type jsonOffRank struct {
	Rank  int   `json:"rank"`
	OffNs int64 `json:"off_ns"`
}

type jsonOff struct {
	TotalNs int64         `json:"total_ns"`
	MinNs   int64         `json:"min_ns"`
	MinRank int           `json:"min_rank"`
	MaxNs   int64         `json:"max_ns"`
	MaxRank int           `json:"max_rank"`
	Ranks   []jsonOffRank `json:"ranks"` // ranks with time off
}

// addBusyJSON fills the document's in_progress and recording_off fields
// (omitted when empty).
func addBusyJSON(d *jsonDoc, p *profile.Profile) {
	for _, c := range p.Busy {
		l := c.Loc
		jc := jsonBusy{Rank: c.Rank, Thread: c.Thread, Func: c.Func,
			Loc:      jsonLoc{Module: l.Module, Offset: l.Offset, Function: l.Function, File: l.File, Line: l.Line},
			Location: location(l, false), Region: c.Region, Comm: c.Comm, ElapsedNs: c.ElapsedNs}
		if c.Peer != profile.PeerNone {
			v := c.Peer
			jc.Peer = &v
		}
		if c.Tag != profile.TagNone {
			v := c.Tag
			jc.Tag = &v
		}
		d.InProgress = append(d.InProgress, jc)
	}
	if s := offSummary(p); s.ranks > 0 {
		o := &jsonOff{TotalNs: s.total, MinNs: s.min, MinRank: s.minRank, MaxNs: s.max, MaxRank: s.maxRank}
		for _, r := range p.Ranks {
			if r.OffNs > 0 {
				o.Ranks = append(o.Ranks, jsonOffRank{r.Rank, r.OffNs})
			}
		}
		d.RecordingOff = o
	}
}
