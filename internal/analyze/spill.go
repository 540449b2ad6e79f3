package analyze

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
)

// recBytes bounds the memory of one record (sendRec, recvRec, collRec) and
// is the budget's unit: a trace holds at most one record per event.
const recBytes = 56

// spill keeps the shards' records in files when the trace's records would
// not fit the memory limit: each rank's walk appends its records to their
// shard's file in batches, and a shard is read back only to be matched, a
// few at a time (one per worker).
type spill struct {
	dir   string
	mu    []sync.Mutex
	files []*os.File
	mu1   sync.Mutex
	err   error
}

func newSpill(nshard int) (*spill, error) {
	dir, err := os.MkdirTemp("", "mpiscope-analyze-")
	if err != nil {
		return nil, fmt.Errorf("analysis spill files: %v", err)
	}
	return &spill{dir: dir, mu: make([]sync.Mutex, nshard), files: make([]*os.File, nshard)}, nil
}

func (sp *spill) fail(err error) {
	sp.mu1.Lock()
	if sp.err == nil {
		sp.err = fmt.Errorf("analysis spill files in %s: %v", sp.dir, err)
	}
	sp.mu1.Unlock()
}

// write appends b to shard s's file.
func (sp *spill) write(s int, b []byte) {
	sp.mu[s].Lock()
	defer sp.mu[s].Unlock()
	f := sp.files[s]
	if f == nil {
		var err error
		if f, err = os.Create(filepath.Join(sp.dir, fmt.Sprintf("shard-%d", s))); err != nil {
			sp.fail(err)
			return
		}
		sp.files[s] = f
	}
	if _, err := f.Write(b); err != nil {
		sp.fail(err)
	}
}

// read returns shard s's records and removes its file.
func (sp *spill) read(s int) []byte {
	f := sp.files[s]
	if f == nil {
		return nil
	}
	sp.files[s] = nil
	defer os.Remove(f.Name())
	defer f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		sp.fail(err)
	}
	return b
}

func (sp *spill) close() {
	for _, f := range sp.files {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(sp.dir)
}

// Records on disk: a tag byte, then the fields little-endian.
const (
	tagSend = 'S'
	tagRecv = 'R'
	tagColl = 'C'
	msgLen  = 1 + 8*4 + 4*3 + 1
	collLen = 1 + 4*5 + 1 + 4 + 8*2
)

type recEnc struct{ b []byte }

func (e *recEnc) u64(v uint64)  { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *recEnc) f64(v float64) { e.u64(math.Float64bits(v)) }
func (e *recEnc) u32(v uint32)  { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *recEnc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// flush writes the pass's records of shard s to the spill and empties them.
func (p *rankPass) flush(s int) {
	p.buf = encodeRecs(p.buf[:0], int32(p.idx), p.times, p.sends[s], p.recvs[s], p.colls[s])
	if len(p.buf) > 0 {
		p.sp.write(s, p.buf)
	}
	p.sends[s], p.recvs[s], p.colls[s] = p.sends[s][:0], p.recvs[s][:0], p.colls[s][:0]
}

// encodeRecs appends the records of rank idx, whose calls' times are
// times, to b: each with its call's times, rank, number and flag
// (decodeSpill reads them).
func encodeRecs(b []byte, idx int32, times []callTimes, sends []sendRec, recvs []recvRec, colls []collRec) []byte {
	e := recEnc{b: b}
	for _, r := range sends {
		t := &times[r.tix]
		e.b = append(e.b, tagSend)
		e.u64(r.flow)
		e.f64(r.enter)
		e.f64(t.t0)
		e.f64(t.t1)
		e.u32(uint32(idx))
		e.u32(uint32(r.key))
		e.u32(t.call)
		e.bool(t.blocking)
	}
	for _, r := range recvs {
		t := &times[r.tix]
		e.b = append(e.b, tagRecv)
		e.u64(r.flow)
		e.f64(r.post)
		e.f64(t.t0)
		e.f64(t.t1)
		e.u32(uint32(idx))
		e.u32(uint32(r.key))
		e.u32(t.call)
		e.bool(t.blocking)
	}
	for _, r := range colls {
		t := &times[r.tix]
		e.b = append(e.b, tagColl)
		e.u32(uint32(r.comm))
		e.u32(r.seq)
		e.u32(uint32(r.idx))
		e.u32(uint32(r.key))
		e.u32(t.call)
		e.b = append(e.b, byte(r.kind)|r.side<<4)
		e.u32(uint32(r.root))
		e.f64(t.t0)
		e.f64(t.t1)
	}
	return e.b
}

// flushAll writes every shard's records and lets go of the buffers.
func (p *rankPass) flushAll() {
	for s := range p.sends {
		p.flush(s)
		p.sends[s], p.recvs[s], p.colls[s] = nil, nil, nil
	}
	p.buf = nil
}

// timesOf is the index in *ts of a call's times, appended unless the
// last entry is the same (a call's records come together).
func timesOf(ts *[]callTimes, t callTimes) uint32 {
	if n := len(*ts); n > 0 && (*ts)[n-1] == t {
		return uint32(n - 1)
	}
	*ts = append(*ts, t)
	return uint32(len(*ts) - 1)
}

// decodeSpill decodes the records of a shard's file: the message ends by
// rank index (below n), the collective parts, and each rank's calls'
// times that they name.
func decodeSpill(b []byte, n int) (sends [][]sendRec, recvs [][]recvRec, colls []collRec, times [][]callTimes, err error) {
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	sends, recvs, times = make([][]sendRec, n), make([][]recvRec, n), make([][]callTimes, n)
	for off := 0; off < len(b); {
		r := b[off:]
		switch r[0] {
		case tagSend, tagRecv:
			if len(r) < msgLen {
				return sends, recvs, colls, times, fmt.Errorf("spill file cut short at byte %d", off)
			}
			flow, t1 := le.Uint64(r[1:]), f(r[9:])
			t := callTimes{t0: f(r[17:]), t1: f(r[25:]), call: le.Uint32(r[41:]), blocking: r[45] != 0}
			idx, key := le.Uint32(r[33:]), int32(le.Uint32(r[37:]))
			if uint64(idx) >= uint64(n) {
				return sends, recvs, colls, times, fmt.Errorf("spill file: rank index %d at byte %d, of %d ranks", idx, off, n)
			}
			tix := timesOf(&times[idx], t)
			if r[0] == tagSend {
				sends[idx] = append(sends[idx], sendRec{flow: flow, enter: t1, tix: tix, key: key})
			} else {
				recvs[idx] = append(recvs[idx], recvRec{flow: flow, post: t1, tix: tix, key: key})
			}
			off += msgLen
		case tagColl:
			if len(r) < collLen {
				return sends, recvs, colls, times, fmt.Errorf("spill file cut short at byte %d", off)
			}
			idx := le.Uint32(r[9:])
			if uint64(idx) >= uint64(n) {
				return sends, recvs, colls, times, fmt.Errorf("spill file: rank index %d at byte %d, of %d ranks", idx, off, n)
			}
			t := callTimes{t0: f(r[26:]), t1: f(r[34:]), call: le.Uint32(r[17:]), blocking: true}
			colls = append(colls, collRec{comm: int32(le.Uint32(r[1:])), seq: le.Uint32(r[5:]), idx: int32(idx),
				key: int32(le.Uint32(r[13:])), tix: timesOf(&times[idx], t), kind: collKind(r[21] & 0xf), side: r[21] >> 4, root: int32(le.Uint32(r[22:]))})
			off += collLen
		default:
			return sends, recvs, colls, times, fmt.Errorf("spill file: bad record tag %d at byte %d", r[0], off)
		}
	}
	return sends, recvs, colls, times, nil
}
