package profile

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
)

// Layout constants of the binary encoding. See docs/format.md.
const (
	magic = "MPISCOPE"

	// Section tags, in the order in which they must appear.
	secStrings  = 1
	secMeta     = 2
	secRanks    = 3
	secFuncs    = 4
	secSites    = 5
	secHists    = 6
	secComms    = 7
	secPeers    = 8
	secRegions  = 9
	secEvents   = 10
	secBusy     = 11 // calls in progress; written only when there are some
	secRankOff  = 12 // Rank.OffNs; written only when some rank has time off
	secWaits    = 13 // wait states (wait.go); written only when there are some
	secAnalysis = 14 // the trace analysis made in the job (analysis.go); written only when there is one
	secPaths    = 15 // call paths (paths.go); written only when there are some
	secComp     = 16 // overhead compensation (compensate.go); written only with MPISCOPE_COMPENSATE=1
	secAnRMA    = 17 // the analysis's one-sided counts (analysis.go); written with the analysis when it has them

	// Spread encodings.
	spreadZero   = 0 // Spread{}
	spreadSingle = 1 // one rank: rank, value
	spreadFull   = 2 // every field

	crcSize = 4
)

// Encode writes p to w in the binary format (version FormatVersion).
func (p *Profile) Encode(w io.Writer) error {
	_, err := w.Write(Marshal(p))
	return err
}

// Marshal returns the binary encoding of p (version FormatVersion). Equal
// profiles have identical encodings.
func Marshal(p *Profile) []byte {
	e := &encoder{strIdx: make(map[string]uint64)}
	if p == nil {
		p = &Profile{}
	}
	body := e.body(p)

	// String table: references are 1-based, 0 is the empty string.
	var st []byte
	st = binary.AppendUvarint(st, uint64(len(e.strs)))
	for _, s := range e.strs {
		st = binary.AppendUvarint(st, uint64(len(s)))
		st = append(st, s...)
	}

	bodyLen := len(body) + sectionHeaderLen(secStrings, len(st)) + len(st)
	out := make([]byte, 0, len(magic)+2*binary.MaxVarintLen64+bodyLen+crcSize)
	out = append(out, magic...)
	out = binary.AppendUvarint(out, FormatVersion)
	out = binary.AppendUvarint(out, uint64(bodyLen))
	out = binary.AppendUvarint(out, secStrings)
	out = binary.AppendUvarint(out, uint64(len(st)))
	out = append(out, st...)
	out = append(out, body...)
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

func sectionHeaderLen(tag, n int) int {
	var b [2 * binary.MaxVarintLen64]byte
	return len(binary.AppendUvarint(binary.AppendUvarint(b[:0], uint64(tag)), uint64(n)))
}

type encoder struct {
	strIdx map[string]uint64
	strs   []string
	buf    []byte // current section payload
}

func (e *encoder) str(s string) {
	if s == "" {
		e.uvarint(0)
		return
	}
	i, ok := e.strIdx[s]
	if !ok {
		e.strs = append(e.strs, s)
		i = uint64(len(e.strs))
		e.strIdx[s] = i
	}
	e.uvarint(i)
}

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) int(v int)        { e.varint(int64(v)) }
func (e *encoder) float(v float64) {
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(v))
}

func (e *encoder) strList(l []string) {
	e.uvarint(uint64(len(l)))
	for _, s := range l {
		e.str(s)
	}
}

func (e *encoder) spread(s Spread) {
	b := math.Float64bits
	switch {
	case s.N == 0 && b(s.Sum) == 0 && b(s.SumSq) == 0 && b(s.Min) == 0 &&
		b(s.Max) == 0 && s.MinRank == 0 && s.MaxRank == 0:
		e.buf = append(e.buf, spreadZero)
	case s.N == 1 && s.MinRank == s.MaxRank && b(s.Min) == b(s.Sum) &&
		b(s.Max) == b(s.Sum) && b(s.SumSq) == b(s.Sum*s.Sum):
		e.buf = append(e.buf, spreadSingle)
		e.int(s.MinRank)
		e.float(s.Sum)
	default:
		e.buf = append(e.buf, spreadFull)
		e.varint(s.N)
		e.float(s.Sum)
		e.float(s.SumSq)
		e.float(s.Min)
		e.float(s.Max)
		e.int(s.MinRank)
		e.int(s.MaxRank)
	}
}

// body encodes every section but the string table, filling the string table.
func (e *encoder) body(p *Profile) []byte {
	var out []byte
	section := func(tag int, fill func()) {
		e.buf = e.buf[:0]
		fill()
		out = binary.AppendUvarint(out, uint64(tag))
		out = binary.AppendUvarint(out, uint64(len(e.buf)))
		out = append(out, e.buf...)
	}

	section(secMeta, func() {
		m := &p.Meta
		e.strList(m.Command)
		e.int(m.NumRanks)
		e.strList(m.Hosts)
		e.str(m.MPILibrary)
		e.str(m.MPIVersion)
		e.str(m.Family)
		e.str(m.Tool)
		e.str(m.Timer)
		e.varint(m.StartNs)
		e.varint(m.StopNs)
		e.uvarint(uint64(len(m.Settings)))
		for _, s := range m.Settings {
			e.str(s.Name)
			e.str(s.Value)
		}
		e.int(m.Snapshot)
		if m.Partial {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	})
	section(secRanks, func() {
		e.uvarint(uint64(len(p.Ranks)))
		for i := range p.Ranks {
			r := &p.Ranks[i]
			e.int(r.Rank)
			e.str(r.Host)
			e.int(r.PID)
			e.varint(r.AppNs)
			e.varint(r.MPINs)
			e.varint(r.Calls)
			e.int(r.Threads)
			e.str(r.State)
			e.varint(r.Dropped)
		}
	})
	section(secFuncs, func() {
		e.uvarint(uint64(len(p.Funcs)))
		for i := range p.Funcs {
			f := &p.Funcs[i]
			e.str(f.Name)
			e.str(f.Class)
			e.varint(f.Calls)
			e.varint(f.TimeNs)
			e.varint(f.MinCallNs)
			e.varint(f.MaxCallNs)
			e.varint(f.Bytes)
			e.spread(f.RankTime)
		}
	})
	section(secSites, func() {
		e.uvarint(uint64(len(p.Sites)))
		for i := range p.Sites {
			s := &p.Sites[i]
			e.str(s.Func)
			e.str(s.Loc.Module)
			e.uvarint(s.Loc.Offset)
			e.str(s.Loc.Function)
			e.str(s.Loc.File)
			e.int(s.Loc.Line)
			e.str(s.Region)
			e.varint(s.Calls)
			e.varint(s.TimeNs)
			e.varint(s.MinNs)
			e.varint(s.MaxNs)
			e.varint(s.Bytes)
			e.spread(s.RankTime)
		}
	})
	section(secHists, func() {
		e.uvarint(uint64(len(p.Hists)))
		for i := range p.Hists {
			h := &p.Hists[i]
			e.str(h.Func)
			e.uvarint(uint64(len(h.Bins)))
			for _, b := range h.Bins {
				e.int(b.Log2)
				e.varint(b.Calls)
				e.varint(b.Bytes)
				e.varint(b.TimeNs)
			}
		}
	})
	section(secComms, func() {
		e.uvarint(uint64(len(p.Comms)))
		for i := range p.Comms {
			c := &p.Comms[i]
			e.str(c.Key)
			e.str(c.Name)
			e.int(c.Size)
			e.str(c.Creator)
			e.varint(c.Members)
			e.varint(c.Calls)
			e.varint(c.TimeNs)
			e.varint(c.Bytes)
		}
	})
	section(secPeers, func() {
		e.uvarint(uint64(len(p.Peers)))
		prev := int64(0)
		for i := range p.Peers {
			q := &p.Peers[i]
			// Rank as a delta from the previous record's Rank, Peer as a
			// delta from this record's Rank (wrapping arithmetic).
			e.varint(int64(q.Rank) - prev)
			e.varint(int64(q.Peer) - int64(q.Rank))
			prev = int64(q.Rank)
			e.varint(q.SentMsgs)
			e.varint(q.SentBytes)
			e.varint(q.RecvMsgs)
			e.varint(q.RecvBytes)
		}
	})
	section(secRegions, func() {
		e.uvarint(uint64(len(p.Regions)))
		for i := range p.Regions {
			r := &p.Regions[i]
			e.str(r.Path)
			e.varint(r.Visits)
			e.varint(r.WallNs)
			e.varint(r.MPINs)
			e.varint(r.Ranks)
			e.spread(r.RankMPI)
		}
	})
	section(secEvents, func() {
		e.uvarint(uint64(len(p.Events)))
		for i := range p.Events {
			ev := &p.Events[i]
			e.str(ev.Text)
			e.varint(ev.Count)
			e.varint(ev.Ranks)
		}
	})
	if len(p.Busy) > 0 {
		section(secBusy, func() { e.busy(p.Busy) })
	}
	if hasOff(p.Ranks) {
		section(secRankOff, func() { e.rankOff(p.Ranks) })
	}
	if len(p.Waits) > 0 {
		section(secWaits, func() { e.waits(p.Waits) })
	}
	if p.Analysis != nil {
		section(secAnalysis, func() { e.analysis(p.Analysis) })
	}
	if len(p.Paths) > 0 {
		section(secPaths, func() { e.paths(p.Paths) })
	}
	if len(p.CompRanks) > 0 || len(p.CompFuncs) > 0 {
		section(secComp, func() { e.comp(p) })
	}
	if p.Analysis != nil && p.Analysis.RMA != nil {
		section(secAnRMA, func() { e.analysisRMA(p.Analysis.RMA) })
	}
	if len(p.RankFuncs) > 0 {
		section(secRankFuncs, func() { e.rankFuncs(p.RankFuncBlock, p.RankFuncs) })
	}
	if len(p.CommPeers) > 0 {
		section(secCommPeers, func() { e.commPeers(p.CommPeerBlock, p.CommPeers) })
	}
	return out
}

func (e *encoder) busy(l []Call) {
	e.uvarint(uint64(len(l)))
	for i := range l {
		c := &l[i]
		e.int(c.Rank)
		e.int(c.Thread)
		e.str(c.Func)
		e.str(c.Loc.Module)
		e.uvarint(c.Loc.Offset)
		e.str(c.Loc.Function)
		e.str(c.Loc.File)
		e.int(c.Loc.Line)
		e.str(c.Region)
		e.str(c.Comm)
		e.int(c.Peer)
		e.int(c.Tag)
		e.varint(c.ElapsedNs)
	}
}

func hasOff(ranks []Rank) bool {
	for i := range ranks {
		if ranks[i].OffNs != 0 {
			return true
		}
	}
	return false
}

// rankOff writes the ranks' OffNs: (index in the ranks section as a delta
// from the previous entry's index + 1, OffNs) for each rank with time off.
func (e *encoder) rankOff(ranks []Rank) {
	n := 0
	for i := range ranks {
		if ranks[i].OffNs != 0 {
			n++
		}
	}
	e.uvarint(uint64(n))
	next := 0
	for i := range ranks {
		if ranks[i].OffNs != 0 {
			e.uvarint(uint64(i - next))
			e.varint(ranks[i].OffNs)
			next = i + 1
		}
	}
}
