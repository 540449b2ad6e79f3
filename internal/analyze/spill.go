package analyze

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
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
	p.buf = encodeRecs(p.buf[:0], p.sends[s], p.recvs[s], p.colls[s])
	if len(p.buf) > 0 {
		p.sp.write(s, p.buf)
	}
	p.sends[s], p.recvs[s], p.colls[s] = p.sends[s][:0], p.recvs[s][:0], p.colls[s][:0]
}

// encodeRecs appends the records to b (the spill's and the in-job
// exchange's format; decodeSpill reads it).
func encodeRecs(b []byte, sends []sendRec, recvs []recvRec, colls []collRec) []byte {
	e := recEnc{b: b}
	for _, r := range sends {
		e.b = append(e.b, tagSend)
		e.u64(r.flow)
		e.f64(r.enter)
		e.f64(r.bt0)
		e.f64(r.bt1)
		e.u32(uint32(r.idx))
		e.u32(uint32(r.key))
		e.u32(r.call)
		e.bool(r.blocking)
	}
	for _, r := range recvs {
		e.b = append(e.b, tagRecv)
		e.u64(r.flow)
		e.f64(r.post)
		e.f64(r.wt0)
		e.f64(r.wt1)
		e.u32(uint32(r.idx))
		e.u32(uint32(r.key))
		e.u32(r.call)
		e.bool(r.blocking)
	}
	for _, r := range colls {
		e.b = append(e.b, tagColl)
		e.u32(uint32(r.comm))
		e.u32(r.seq)
		e.u32(uint32(r.idx))
		e.u32(uint32(r.key))
		e.u32(r.call)
		e.b = append(e.b, byte(r.kind)|r.side<<4)
		e.u32(uint32(r.root))
		e.f64(r.t0)
		e.f64(r.t1)
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

// decodeSpill appends the records of a shard's file.
func decodeSpill(b []byte, sends []sendRec, recvs []recvRec, colls []collRec) ([]sendRec, []recvRec, []collRec, error) {
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	n := len(b) / collLen // at most this many records of one kind
	sends, recvs = slices.Grow(sends, n/2), slices.Grow(recvs, n/2)
	for len(b) > 0 {
		switch b[0] {
		case tagSend, tagRecv:
			if len(b) < msgLen {
				return sends, recvs, colls, fmt.Errorf("spill file cut short")
			}
			flow, t1, t2, t3 := le.Uint64(b[1:]), f(b[9:]), f(b[17:]), f(b[25:])
			idx, key, call, blk := int32(le.Uint32(b[33:])), int32(le.Uint32(b[37:])), le.Uint32(b[41:]), b[45] != 0
			if b[0] == tagSend {
				sends = append(sends, sendRec{flow: flow, enter: t1, bt0: t2, bt1: t3, idx: idx, key: key, call: call, blocking: blk})
			} else {
				recvs = append(recvs, recvRec{flow: flow, post: t1, wt0: t2, wt1: t3, idx: idx, key: key, call: call, blocking: blk})
			}
			b = b[msgLen:]
		case tagColl:
			if len(b) < collLen {
				return sends, recvs, colls, fmt.Errorf("spill file cut short")
			}
			colls = append(colls, collRec{comm: int32(le.Uint32(b[1:])), seq: le.Uint32(b[5:]), idx: int32(le.Uint32(b[9:])),
				key: int32(le.Uint32(b[13:])), call: le.Uint32(b[17:]), kind: collKind(b[21] & 0xf), side: b[21] >> 4, root: int32(le.Uint32(b[22:])),
				t0: f(b[26:]), t1: f(b[34:])})
			b = b[collLen:]
		default:
			return sends, recvs, colls, fmt.Errorf("spill file: bad record tag %d", b[0])
		}
	}
	return sends, recvs, colls, nil
}
