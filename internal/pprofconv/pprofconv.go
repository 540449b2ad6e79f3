// Package pprofconv converts an mpiscope profile to a pprof profile
// (profile.proto, written with github.com/google/pprof/profile), so that
// `go tool pprof` and the tools that read its format show where a job's MPI
// time goes: each sample is one MPI function called at one callsite, its
// stack the MPI function (leaf) above the callsite's frame, or, in a
// profile with call paths (MPISCOPE_DEPTH > 1), one call path, its stack
// the MPI function above the path's frames.
//
// It is a package of its own, apart from internal/report, so that the
// pprof module stays out of libmpiscope, which links internal/report.
package pprofconv

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	mps "github.com/mpiscope/mpiscope/profile"
)

// Sample types, in the order of each sample's values. MPI time is the
// default one.
const (
	TypeCalls   = "calls"
	TypeTime    = "mpi_time"
	TypeBytes   = "bytes"
	UnitCount   = "count"
	UnitNs      = "nanoseconds"
	UnitBytes   = "bytes"
	LabelRegion = "region" // string label: the Pcontrol region path of the sample's calls
	LabelRank   = "rank"   // string label: the rank, when the profile holds one rank only (a number label of 0 would not survive encoding)
)

// unattributed is the callsite frame of the calls a function's sites do
// not account for (a profile whose site table was full, or a hand-made
// one): the samples still add up to the functions' totals.
const unattributed = "(unknown callsite)"

// Convert returns p as a pprof profile. Sample values are calls, MPI time
// (ns) and bytes; a sample's stack is its MPI function above the callsite
// (function, file, line; the module and offset as mapping and address).
// Calls in a Pcontrol region carry the label "region"; a profile of one
// rank (a rank file) labels every sample with its "rank" (WriteRanks
// combines such files). A merged profile's sites hold no per-rank or
// per-communicator split, so a job's samples carry neither.
func Convert(p *mps.Profile) *profile.Profile {
	out := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: TypeCalls, Unit: UnitCount},
			{Type: TypeTime, Unit: UnitNs},
			{Type: TypeBytes, Unit: UnitBytes},
		},
		DefaultSampleType: TypeTime,
		PeriodType:        &profile.ValueType{Type: TypeTime, Unit: UnitNs},
		Period:            1,
		TimeNanos:         p.Meta.StartNs,
	}
	if p.Meta.StopNs > p.Meta.StartNs && p.Meta.StartNs != 0 {
		out.DurationNanos = p.Meta.StopNs - p.Meta.StartNs
	}
	out.Comments = comments(p)
	b := builder{out: out, funcs: map[funcKey]*profile.Function{}, locs: map[locKey]*profile.Location{},
		maps: map[string]*profile.Mapping{}, leaves: map[string]*profile.Location{}}
	rank := ""
	if len(p.Ranks) == 1 {
		rank = strconv.Itoa(p.Ranks[0].Rank)
	}
	labels := func(region string) map[string][]string {
		l := map[string][]string{}
		if region != "" {
			l[LabelRegion] = []string{region}
		}
		if rank != "" {
			l[LabelRank] = []string{rank}
		}
		if len(l) == 0 {
			return nil
		}
		return l
	}

	// What the sites account for, per function.
	type sum struct{ calls, time, bytes int64 }
	bySite := map[string]sum{}
	// A profile with call paths (MPISCOPE_DEPTH > 1): each path is a
	// sample, its stack the path's frames, so that pprof's flame graph and
	// -traces show the real stacks.
	for _, q := range p.Paths {
		smp := &profile.Sample{
			Location: append([]*profile.Location{b.leaf(q.Func)}, b.frames(q.Frames)...),
			Value:    []int64{q.Calls, q.TimeNs, q.Bytes},
			Label:    labels(q.Region),
		}
		out.Sample = append(out.Sample, smp)
		t := bySite[q.Func]
		bySite[q.Func] = sum{t.calls + q.Calls, t.time + q.TimeNs, t.bytes + q.Bytes}
	}
	for _, s := range p.Sites {
		if len(p.Paths) > 0 {
			break
		}
		smp := &profile.Sample{
			Location: append([]*profile.Location{b.leaf(s.Func)}, b.stack(s)...),
			Value:    []int64{s.Calls, s.TimeNs, s.Bytes},
			Label:    labels(s.Region),
		}
		out.Sample = append(out.Sample, smp)
		t := bySite[s.Func]
		bySite[s.Func] = sum{t.calls + s.Calls, t.time + s.TimeNs, t.bytes + s.Bytes}
	}
	for _, f := range p.Funcs {
		t := bySite[f.Name]
		rest := []int64{max(f.Calls-t.calls, 0), max(f.TimeNs-t.time, 0), max(f.Bytes-t.bytes, 0)}
		if rest[0] == 0 && rest[1] == 0 && rest[2] == 0 {
			continue
		}
		smp := &profile.Sample{
			Location: []*profile.Location{b.leaf(f.Name), b.location(locKey{fn: unattributed}, nil)},
			Value:    rest,
			Label:    labels(""),
		}
		out.Sample = append(out.Sample, smp)
	}
	return out
}

// Write converts p and writes it to w, gzip-compressed as pprof reads it.
func Write(w io.Writer, p *mps.Profile) error {
	return write(w, Convert(p))
}

// WriteRanks converts the profiles of single ranks (rank files), each
// sample labelled with its rank, and writes them to w as one pprof
// profile; job is their merge, which the header describes.
func WriteRanks(w io.Writer, job *mps.Profile, ranks []*mps.Profile) error {
	ps := make([]*profile.Profile, 0, len(ranks))
	for _, r := range ranks {
		ps = append(ps, Convert(r))
	}
	if len(ps) == 0 {
		return write(w, Convert(job))
	}
	out, err := profile.Merge(ps)
	if err != nil {
		return fmt.Errorf("pprof: %v", err)
	}
	// Merge keeps the first profile's header: say what the whole is.
	whole := Convert(&mps.Profile{Meta: job.Meta, Ranks: job.Ranks})
	out.Comments, out.TimeNanos, out.DurationNanos = whole.Comments, whole.TimeNanos, whole.DurationNanos
	return write(w, out)
}

func write(w io.Writer, out *profile.Profile) error {
	if err := out.CheckValid(); err != nil {
		return fmt.Errorf("pprof: %v", err)
	}
	return out.Write(w)
}

// comments describe the job, for `pprof -comments` and the web UI.
func comments(p *mps.Profile) []string {
	m := p.Meta
	var c []string
	if len(m.Command) > 0 {
		c = append(c, "command: "+strings.Join(m.Command, " "))
	}
	ranks := strconv.Itoa(m.NumRanks) + " ranks"
	if len(p.Ranks) != m.NumRanks {
		ranks += fmt.Sprintf(" (%d in this profile)", len(p.Ranks))
	}
	c = append(c, ranks)
	if m.MPILibrary != "" {
		c = append(c, "MPI library: "+strings.Join(strings.Fields(m.MPILibrary), " "))
	}
	if m.Snapshot > 0 {
		c = append(c, fmt.Sprintf("snapshot %d (taken while the job ran)", m.Snapshot))
	}
	if m.Partial {
		c = append(c, "partial profile (some ranks wrote their data before MPI_Finalize)")
	}
	return append(c, "converted by mpiscope "+m.Tool)
}

type funcKey struct{ name, system, file string }

// locKey identifies a callsite frame: the address in its module and what
// it symbolizes to.
type locKey struct {
	module   string
	offset   uint64
	fn, file string
	line     int
}

type builder struct {
	out    *profile.Profile
	funcs  map[funcKey]*profile.Function
	locs   map[locKey]*profile.Location
	maps   map[string]*profile.Mapping
	leaves map[string]*profile.Location
}

func (b *builder) function(name, system, file string) *profile.Function {
	k := funcKey{name, system, file}
	if f, ok := b.funcs[k]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.out.Function) + 1), Name: name, SystemName: system, Filename: file}
	b.funcs[k] = f
	b.out.Function = append(b.out.Function, f)
	return f
}

// leaf is the frame of an MPI function: no address, the function only.
func (b *builder) leaf(name string) *profile.Location {
	if l, ok := b.leaves[name]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.out.Location) + 1),
		Line: []profile.Line{{Function: b.function(name, name, "")}}}
	b.leaves[name] = l
	b.out.Location = append(b.out.Location, l)
	return l
}

// stack is the frames above the MPI function at a site, innermost first:
// its callsite only (a path's are frames).
func (b *builder) stack(s mps.Site) []*profile.Location {
	return b.frames([]mps.Loc{s.Loc})
}

// frames is the locations of frames, innermost first.
func (b *builder) frames(fr []mps.Loc) []*profile.Location {
	out := make([]*profile.Location, 0, len(fr))
	for _, l := range fr {
		k := locKey{module: l.Module, offset: l.Offset, fn: l.Function, file: l.File, line: max(l.Line, 0)}
		out = append(out, b.location(k, b.mapping(l.Module, l.Offset)))
	}
	return out
}

// mapping is the module's mapping: addresses are offsets in the module
// (what mpiscope keeps across ranks), the names already resolved.
func (b *builder) mapping(module string, off uint64) *profile.Mapping {
	if module == "" {
		return nil
	}
	m, ok := b.maps[module]
	if !ok {
		m = &profile.Mapping{ID: uint64(len(b.out.Mapping) + 1), File: module, HasFunctions: true,
			HasFilenames: true, HasLineNumbers: true}
		b.maps[module] = m
		b.out.Mapping = append(b.out.Mapping, m)
	}
	m.Limit = max(m.Limit, off+1)
	return m
}

func (b *builder) location(k locKey, m *profile.Mapping) *profile.Location {
	if l, ok := b.locs[k]; ok {
		return l
	}
	name := symbolize.Demangle(k.fn)
	if name == "" {
		// Unsymbolized: the module and offset, as the report writes it.
		switch {
		case k.module != "":
			name = filepath.Base(k.module) + "+0x" + strconv.FormatUint(k.offset, 16)
		case k.offset != 0:
			name = "?+0x" + strconv.FormatUint(k.offset, 16)
		default:
			name = "?"
		}
	}
	l := &profile.Location{ID: uint64(len(b.out.Location) + 1), Mapping: m, Address: k.offset,
		Line: []profile.Line{{Function: b.function(name, cmp.Or(k.fn, name), k.file), Line: int64(k.line)}}}
	if m == nil {
		l.Address = 0
	}
	b.locs[k] = l
	b.out.Location = append(b.out.Location, l)
	return l
}
