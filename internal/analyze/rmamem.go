package analyze

// The one-sided records within the memory bound (-mem offline,
// MPISCOPE_ANALYZE_MEM in the job). The records the walks hold at once
// count against a share of the bound (rmaBound.limit): beyond it a rank's
// records go to temporary files. They are then matched in rounds, round k
// the instances whose hash falls in it (every record of an instance in
// the same round), each round within twice the share; a round that would
// hold more (an instance alone larger than that: the lock epochs of one
// target, a fence of a very large group) keeps its smallest instances
// and leaves the others out, with a warning: never more memory than the
// bound allows.

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
)

// rmaRecMem is a record's memory (rmaRec), its weight against the bound.
const rmaRecMem = 56

// rmaMinLimit is the least share of the bound the one-sided records get
// (a variable: the tests lower it to make the rounds with few records).
var rmaMinLimit int64 = 256 << 10

// rmaMaxRounds bounds the rounds (beyond, rounds hold more).
const rmaMaxRounds = 1 << 12

// rmaBound is the one-sided records' share of the memory bound, shared by
// the walks of the ranks (offline several at once).
type rmaBound struct {
	limit   int64        // bytes of records held at once by the walks
	held    atomic.Int64 // bytes held now
	spilled atomic.Int64 // records in the files
	mu      sync.Mutex
	dir     string
	files   []*os.File // records of rank index i in files[i%len(files)]
	bufs    []*bufio.Writer
	err     error
}

func newRMABound(limit int64, files int) *rmaBound {
	return &rmaBound{limit: max(limit, rmaMinLimit), files: make([]*os.File, files), bufs: make([]*bufio.Writer, files)}
}

// write appends records to the file of rank idx's (buffered: a walk
// beyond the bound writes at each call).
func (b *rmaBound) write(idx int32, recs []rmaRec) {
	buf := make([]byte, 0, len(recs)*rmaRecLen)
	for i := range recs {
		buf = appendRMARec(buf, &recs[i])
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "mpiscope-rma-")
		if err != nil {
			b.err = err
			return
		}
		b.dir = dir
	}
	i := int(uint32(idx)) % len(b.files)
	if b.files[i] == nil {
		f, err := os.Create(filepath.Join(b.dir, fmt.Sprintf("rma-%d", i)))
		if err != nil {
			b.err = err
			return
		}
		b.files[i], b.bufs[i] = f, bufio.NewWriterSize(f, 32<<10)
	}
	if _, err := b.bufs[i].Write(buf); err != nil {
		b.err = err
		return
	}
	b.spilled.Add(int64(len(recs)))
}

func (b *rmaBound) close() {
	if b == nil {
		return
	}
	for _, f := range b.files {
		if f != nil {
			f.Close()
		}
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// account counts the records added since the last call against the
// bound; beyond it, this rank's records go to its file.
func (s *rmaState) account(idx int32) {
	b := s.bound
	n := int64(len(s.recs) - s.counted)
	if b == nil || n <= 0 {
		return
	}
	s.counted = len(s.recs)
	if b.held.Add(n*rmaRecMem) > b.limit {
		b.write(idx, s.recs)
		b.held.Add(-int64(len(s.recs)) * rmaRecMem)
		s.recs, s.counted = s.recs[:0], 0
	}
}

// records is how many records the walk made (in memory and in the file).
func (s *rmaState) records() uint64 {
	n := uint64(len(s.recs))
	if s.bound != nil {
		n += uint64(s.bound.spilled.Load())
	}
	return n
}

// release gives the records of a pass back to the bound.
func (s *rmaState) release() {
	if s.bound != nil {
		s.bound.held.Add(-int64(s.counted) * rmaRecMem)
	}
	*s = rmaState{}
}

// rmaRounds is how many rounds records records take within limit (each
// round half of what it may hold, for the instances that hash unevenly).
func rmaRounds(records uint64, limit int64) int {
	if limit <= 0 {
		return 1
	}
	return int(min(2*int64(records)*rmaRecMem/limit+1, rmaMaxRounds))
}

// rmaRound is the round of an instance.
func rmaRound(inst uint64, rounds int) int { return int((inst >> 32) % uint64(rounds)) }

// each calls fn with every record of the passes: those in memory, then
// those in the files.
func (b *rmaBound) each(passes []*rankPass, fn func(r *rmaRec)) error {
	for _, p := range passes {
		for i := range p.rma.recs {
			fn(&p.rma.recs[i])
		}
	}
	if b == nil {
		return nil
	}
	for _, w := range b.bufs {
		if w != nil && b.err == nil {
			b.err = w.Flush()
		}
	}
	if b.err != nil {
		return b.err
	}
	for _, f := range b.files {
		if f == nil {
			continue
		}
		g, err := os.Open(f.Name())
		if err != nil {
			return err
		}
		rd := bufio.NewReaderSize(g, 64<<10)
		var buf [rmaRecLen]byte
		var one []rmaRec
		for {
			if _, err = io.ReadFull(rd, buf[:]); err != nil {
				break
			}
			if one, err = decodeRMARecs(buf[:], one[:0], nil); err != nil {
				break
			}
			fn(&one[0])
		}
		g.Close()
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: %v", f.Name(), err)
		}
	}
	return nil
}

// rmaSource gives a round's records: offline those of every pass, in the
// job this rank's.
type rmaSource struct {
	b      *rmaBound
	passes []*rankPass
}

// records returns the records of round k (of rounds) for which keep is
// true (nil: all), at most most of them: over is true when there were
// more (and nothing is returned).
func (src rmaSource) records(k, rounds int, keep map[uint64]bool, most int) (recs []rmaRec, over bool, err error) {
	err = src.b.each(src.passes, func(r *rmaRec) {
		if over || rmaRound(r.inst, rounds) != k || keep != nil && !keep[r.inst] {
			return
		}
		if len(recs) >= most {
			over, recs = true, nil
			return
		}
		recs = append(recs, *r)
	})
	return recs, over, err
}

// keepFitting chooses, of the instances counted, the smallest ones that
// fit most records together; the others are left out (their records and
// instances counted in dropped).
func keepFitting(count map[uint64]int, most int, dropped *[2]int) map[uint64]bool {
	type ic struct {
		inst uint64
		n    int
	}
	l := make([]ic, 0, len(count))
	for i, n := range count {
		l = append(l, ic{i, n})
	}
	slices.SortFunc(l, func(a, b ic) int { return cmp.Or(cmp.Compare(a.n, b.n), cmp.Compare(a.inst, b.inst)) })
	keep := make(map[uint64]bool, len(l))
	sum := 0
	for _, x := range l {
		if sum+x.n <= most {
			keep[x.inst] = true
			sum += x.n
		} else {
			dropped[0] += x.n
			dropped[1]++
		}
	}
	return keep
}

// roundRecords is round k's records within most: when they are more, its
// smallest instances that fit.
func (src rmaSource) roundRecords(k, rounds, most int, dropped *[2]int) ([]rmaRec, error) {
	recs, over, err := src.records(k, rounds, nil, most)
	if err != nil || !over {
		return recs, err
	}
	count := map[uint64]int{}
	if err := src.b.each(src.passes, func(r *rmaRec) {
		if rmaRound(r.inst, rounds) == k {
			count[r.inst]++
		}
	}); err != nil {
		return nil, err
	}
	recs, _, err = src.records(k, rounds, keepFitting(count, most, dropped), most)
	return recs, err
}

// droppedWarning says what did not fit the bound.
func droppedWarning(d [2]int) string {
	return fmt.Sprintf("RMA: %d one-sided records of %d synchronization instances (a fence, a pair of epochs, one target's lock epochs) did not fit the analysis memory bound (-mem, MPISCOPE_ANALYZE_MEM): left out, their waits not analyzed", d[0], d[1])
}
