package analyze

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// DefaultJobMemory is the default Options.Memory of the analysis in the
// job: per rank (MPISCOPE_ANALYZE_MEM).
const DefaultJobMemory = 128 << 20

// memory is the bound of the analysis in the job.
func (o Options) memory() int64 {
	if o.Memory > 0 {
		return o.Memory
	}
	return DefaultJobMemory
}

// jobCopies is how many copies of a round's records a rank holds at once
// in the exchange: encoded to send, in the MPI library's buffers, received
// and decoded, sorted for matching, and their wait candidates.
const jobCopies = 6

// maxRounds bounds the rounds of the exchange.
const maxRounds = 1 << 12

// jobRounds is how many rounds of the exchange a rank of events events
// needs within bound (jobPlan).
func jobRounds(events uint64, bound int64) int {
	r, _ := jobPlan(events, bound)
	return r
}

// recRounds is how many rounds a rank of events events needs to hold at
// most bound bytes of records at once.
func recRounds(events uint64, bound int64) int {
	need := int64(events) * recBytes * jobCopies
	return int(min(need/max(bound, 1)+1, maxRounds))
}

// jobPlan is how a rank of events events spends its bound: whether its
// walk logs its calls for the critical path's shares (callLog: the trace
// is then read once), and the rounds its records need in what is left.
// The one-sided records' share (rmaJobShare) comes off first; of the
// rest the log goes first when it takes at most half (it is held from the
// walk to the rank's part, beside every round's records); else the rank
// reads its trace a second time for the path's calls (pathKeys) and its
// records have all of the rest.
func jobPlan(events uint64, bound int64) (rounds int, log bool) {
	if bound <= 0 {
		bound = DefaultJobMemory
	}
	bound -= rmaJobShare(bound)
	logBytes := int64(events) * callLogBytes
	if log = logBytes <= bound/2; log {
		bound -= logBytes
	}
	return recRounds(events, bound), log
}

// rmaJobShare is the part of a rank's bound in the job that its one-sided
// records take (rmamem.go): the log and the message records plan with
// the rest, so that the three together stay within the bound.
func rmaJobShare(bound int64) int64 { return bound / 4 }

// mix64 spreads a key over 64 bits (the last step of splitmix64).
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// roundOfFlow and roundOfColl are the round of the exchange a record goes
// in: the same for both ends of a message and for every part of a
// collective instance, so that each round matches whole messages and
// instances.
func roundOfFlow(flow uint64, rounds int) int { return int(mix64(flow) % uint64(rounds)) }

func roundOfColl(comm int32, seq uint32, rounds int) int {
	return int(mix64(uint64(uint32(comm))<<32|uint64(seq)) % uint64(rounds))
}

// jobSpill holds a rank's records between its walk and the rounds of the
// exchange, when they do not fit its bound: one file per round, of frames
// (destination rank, length, records).
type jobSpill struct {
	dir    string
	files  []*os.File
	rounds int
	err    error
	frame  [][]byte // per round, the wait candidates being framed
	// put's records of one destination by round, and its block
	rs  [][]sendRec
	rr  [][]recvRec
	rc  [][]collRec
	buf []byte
}

func newJobSpill(rounds int) (*jobSpill, error) {
	dir, err := os.MkdirTemp("", "mpiscope-injob-")
	if err != nil {
		return nil, fmt.Errorf("analysis spill files: %v", err)
	}
	return &jobSpill{dir: dir, files: make([]*os.File, rounds), rounds: rounds, frame: make([][]byte, rounds)}, nil
}

func (sp *jobSpill) fail(err error) {
	if sp.err == nil {
		sp.err = fmt.Errorf("analysis spill files in %s: %v", sp.dir, err)
	}
}

// put writes the pass's records to their rounds' files, one block per
// destination and round, and empties them.
func (sp *jobSpill) put(p *rankPass) {
	if sp.rs == nil {
		sp.rs, sp.rr, sp.rc = make([][]sendRec, sp.rounds), make([][]recvRec, sp.rounds), make([][]collRec, sp.rounds)
	}
	for d := range p.sends {
		for i := range p.sends[d] {
			k := roundOfFlow(p.sends[d][i].flow, sp.rounds)
			sp.rs[k] = append(sp.rs[k], p.sends[d][i])
		}
		for i := range p.recvs[d] {
			k := roundOfFlow(p.recvs[d][i].flow, sp.rounds)
			sp.rr[k] = append(sp.rr[k], p.recvs[d][i])
		}
		for i := range p.colls[d] {
			c := &p.colls[d][i]
			k := roundOfColl(c.comm, c.seq, sp.rounds)
			sp.rc[k] = append(sp.rc[k], *c)
		}
		for k := range sp.rounds {
			if b := appendBlock(sp.buf[:0], p.times, sp.rs[k], sp.rr[k], sp.rc[k]); len(b) > 0 {
				sp.write(k, d, b)
				sp.buf = b[:0]
			}
			sp.rs[k], sp.rr[k], sp.rc[k] = sp.rs[k][:0], sp.rr[k][:0], sp.rc[k][:0]
		}
		p.sends[d], p.recvs[d], p.colls[d] = p.sends[d][:0], p.recvs[d][:0], p.colls[d][:0]
	}
	p.times = p.times[:0] // no record names them any more
}

func (sp *jobSpill) write(k, dest int, b []byte) {
	f := sp.files[k]
	if f == nil {
		var err error
		if f, err = os.Create(filepath.Join(sp.dir, fmt.Sprintf("round-%d", k))); err != nil {
			sp.fail(err)
			return
		}
		sp.files[k] = f
	}
	var h [8]byte
	binary.LittleEndian.PutUint32(h[:], uint32(dest))
	binary.LittleEndian.PutUint32(h[4:], uint32(len(b)))
	if _, err := f.Write(h[:]); err != nil {
		sp.fail(err)
	} else if _, err := f.Write(b); err != nil {
		sp.fail(err)
	}
}

// read returns round k's records by destination and removes its file.
func (sp *jobSpill) read(k, size int) [][]byte {
	out := make([][]byte, size)
	f := sp.files[k]
	if f == nil {
		return out
	}
	sp.files[k] = nil
	defer os.Remove(f.Name())
	defer f.Close()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		sp.fail(err)
		return out
	}
	for len(b) >= 8 {
		d, n := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
		if d >= size || n > len(b)-8 {
			sp.fail(fmt.Errorf("%s: bad frame at its end minus %d bytes", f.Name(), len(b)))
			return out
		}
		out[d] = append(out[d], b[8:8+n]...)
		b = b[8+n:]
	}
	return out
}

func (sp *jobSpill) close() {
	for _, f := range sp.files {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(sp.dir)
}

// boundedPass is a rank's walk in the job that writes its records to the
// spill whenever it holds batch of them.
type boundedPass struct {
	*rankPass
	sp    *jobSpill
	batch int
	calls int
}

func (b *boundedPass) Call(c *trace.Call) error {
	err := b.rankPass.Call(c)
	if b.calls++; b.calls >= 64 {
		b.calls = 0
		n := 0
		for d := range b.sends {
			n += len(b.sends[d]) + len(b.recvs[d]) + len(b.colls[d])
		}
		if n >= b.batch {
			b.sp.put(b.rankPass)
		}
	}
	return err
}

// sizingPass is a rank's walk in the job whose records stay in memory
// (one round): after its first calls (at) it sizes its lists for the
// rank's events from what those added (rankPass.reserve, as offline after
// the first block, which is often a whole rank of the job), so that they
// fill in place instead of growing by copies (since 2026-11-29: the
// walk's bytes allocated 199 -> 120 per event on scale.c's 32 ranks). The
// events so far are counted as the walk delivers them: a call and its
// messages' completions, regions and marks (a completion of no message,
// not counted, makes the lists a little larger than needed).
type sizingPass struct {
	*rankPass
	at, events, seen uint64
}

func (s *sizingPass) Call(c *trace.Call) error {
	err := s.rankPass.Call(c)
	s.seen += 1 + uint64(len(c.SendDone)+len(c.RecvDone))
	if s.ncalls == s.at {
		s.reserve(s.seen, s.events)
	}
	return err
}

func (s *sizingPass) Region(rank, thread int, enter bool, name string, t float64) error {
	s.seen++
	return s.rankPass.Region(rank, thread, enter, name, t)
}

func (s *sizingPass) Mark(rank, thread int, text string, t float64) error {
	s.seen++
	return s.rankPass.Mark(rank, thread, text, t)
}

// sizingCalls is after how many calls a rank of events events sizes its
// lists: enough for each destination's share to be measured (a 32nd of
// the events, at least 1024 calls), early enough to spare most copies.
func sizingCalls(events uint64) uint64 { return max(events/32, 1024) }

// exchange is step 2 of the analysis in the job: this rank's records
// (p, from its walk; in sp when spilled) go to their owners, which match
// them; the wait candidates go back to the ranks of their calls, which
// group them into wait states. In rounds when the records exceed the
// bound: round k moves and matches the messages and collective instances
// whose keys fall in it (roundOfFlow, roundOfColl), and the candidates
// wait in files by call until every round is done.
//
// tail (lastEnd) goes to every rank at the end of the first round's
// records; the ranks' tails come back, by rank.
func exchange(c Comm, p *rankPass, sp *jobSpill, rounds int, tail []byte, warn func(string)) (rankWaits, matchStats, [][]byte, error) {
	me, size := c.Rank(), c.Size()
	var st matchStats
	tails := make([][]byte, size)
	var mine candParts // in memory: the candidates of this rank's calls, as they came
	var csp *jobSpill
	// A call's range of the candidates' files (a call number out of range,
	// from bad bytes, goes to the last, not out of bounds).
	chunk := func(call uint32) int {
		return int(min(uint64(call-1)*uint64(rounds)/max(p.ncalls, 1), uint64(rounds-1)))
	}
	if rounds > 1 {
		var err error
		if csp, err = newJobSpill(rounds); err != nil {
			warn(fmt.Sprintf("rank %d: %v: its wait candidates held in memory", me, err))
			csp = nil
		} else {
			defer csp.close()
		}
	}
	out := make([][]byte, size)
	// In one round, the records this rank owns itself (its receives, its
	// share of the collectives) skip the exchange: kept as they are, they
	// take the place their bytes would have had.
	var ownS []sendRec
	var ownR []recvRec
	var ownC []collRec
	var rs []sendRec // no spill files: round k's records of one destination
	var rr []recvRec
	var rc []collRec
	sendParts, recvParts, collParts := make([][]sendRec, size), make([][]recvRec, size), make([][]collRec, size)
	timeParts, keepT := make([][]callTimes, size), make([][]callTimes, size) // each rank's calls' times (callTimes)
	// Over rounds, each rank's lists are decoded into the room of the
	// round before.
	keepS, keepR, keepC := make([][]sendRec, size), make([][]recvRec, size), make([][]collRec, size)
	for k := 0; k < rounds; k++ {
		switch {
		case sp != nil:
			out = sp.read(k, size)
		case rounds == 1:
			for d := range out {
				if d == me {
					ownS, ownR, ownC = p.sends[d], p.recvs[d], p.colls[d]
				} else {
					out[d] = appendBlock(make([]byte, 0, xHeader+(len(p.sends[d])+len(p.recvs[d]))*xMsg+len(p.colls[d])*xColl+len(tail)),
						p.times, p.sends[d], p.recvs[d], p.colls[d])
				}
				p.sends[d], p.recvs[d], p.colls[d] = nil, nil, nil
			}
		default: // no spill files could be made: round k's records from memory
			for d := range out {
				rs, rr, rc = rs[:0], rr[:0], rc[:0]
				for i := range p.sends[d] {
					if roundOfFlow(p.sends[d][i].flow, rounds) == k {
						rs = append(rs, p.sends[d][i])
					}
				}
				for i := range p.recvs[d] {
					if roundOfFlow(p.recvs[d][i].flow, rounds) == k {
						rr = append(rr, p.recvs[d][i])
					}
				}
				for i := range p.colls[d] {
					if x := &p.colls[d][i]; roundOfColl(x.comm, x.seq, rounds) == k {
						rc = append(rc, *x)
					}
				}
				out[d] = appendBlock(out[d][:0], p.times, rs, rr, rc)
			}
		}
		if k == 0 {
			for d := range out {
				out[d] = append(out[d], tail...)
			}
		}
		in, err := c.Alltoallv(out)
		if err != nil {
			return rankWaits{}, st, nil, err
		}
		if sp != nil || rounds == 1 {
			clear(out)
		}
		if k == 0 {
			for s, b := range in {
				if len(b) < len(tail) {
					return rankWaits{}, st, nil, fmt.Errorf("rank %d's records: %d bytes, without their end", s, len(b))
				}
				in[s], tails[s] = b[:len(b)-len(tail)], b[len(b)-len(tail):]
			}
		}
		// Each rank's records decoded into lists of their own, matched as
		// parts (matchParts: no concatenation).
		for s, b := range in {
			sendParts[s], recvParts[s], collParts[s] = nil, nil, nil
			if s == me && sp == nil && rounds == 1 {
				sendParts[s], recvParts[s], collParts[s], timeParts[s] = ownS, ownR, ownC, p.times
				ownS, ownR, ownC = nil, nil, nil
				continue
			}
			if timeParts[s], sendParts[s], recvParts[s], collParts[s], err = decodeBlocks(b, int32(s), keepT[s], keepS[s], keepR[s], keepC[s]); err != nil {
				warn(fmt.Sprintf("rank %d: records from rank %d: %v (left out)", me, s, err))
			}
			in[s] = nil
		}
		in = nil
		if rounds > 1 { // matchParts lets go of the lists
			copy(keepS, sendParts)
			copy(keepR, recvParts)
			copy(keepC, collParts)
			copy(keepT, timeParts)
		}
		var cands []cand
		var rst matchStats
		func() {
			defer func() {
				if e := recover(); e != nil {
					warn(fmt.Sprintf("rank %d: the analysis failed in matching (%v): its results are incomplete", me, e))
				}
			}()
			var co candOut
			rst = matchParts(sendParts, recvParts, collParts, timeParts, func(w int) (int, bool) { return w, w >= 0 && w < size }, &co)
			cands = co.flat
		}()
		st.add(rst)
		clear(sendParts)
		clear(recvParts)
		clear(collParts)
		clear(timeParts)
		// In memory, the candidates of this rank's own calls skip the
		// exchange, as its own records do.
		var own []cand
		back := candsOut(cands, size, me, csp == nil, &own)
		cands = nil
		if in, err = c.Alltoallv(back); err != nil {
			return rankWaits{}, st, nil, err
		}
		back = nil
		for s, b := range in {
			if csp == nil {
				// Kept as they came (own list, messages), sorted by
				// call into one list at the end (candParts.sorted).
				switch {
				case s == me:
					mine.lists, mine.order = append(mine.lists, own), append(mine.order, true)
					own = nil
				case len(b)%xCand != 0:
					warn(fmt.Sprintf("rank %d: wait candidates from rank %d: %d bytes: not whole records (left out)", me, s, len(b)))
				case len(b) > 0:
					mine.msgs, mine.order = append(mine.msgs, b), append(mine.order, false)
				}
				continue
			}
			if len(b)%xCand != 0 {
				warn(fmt.Sprintf("rank %d: wait candidates from rank %d: %d bytes: not whole records (left out)", me, s, len(b)))
				continue
			}
			// By call range: each call's candidates in one file.
			for ; len(b) > 0; b = b[xCand:] {
				k := chunk(binary.LittleEndian.Uint32(b[4:]))
				csp.frame[k] = append(csp.frame[k], b[:xCand]...)
			}
			for k, f := range csp.frame {
				if len(f) > 0 {
					csp.write(k, 0, f)
					csp.frame[k] = f[:0]
				}
			}
		}
	}
	// A rank's own failures are warnings: it goes on taking part in the
	// exchanges, which the others wait for.
	if sp != nil && sp.err != nil {
		warn(fmt.Sprintf("rank %d: %v: its results are incomplete", me, sp.err))
	}
	rw := newRankWaits()
	if csp == nil {
		guarded(me, "grouping its waits", warn, func() { rw.groupSorted(mine.sorted(int32(me))) })
	} else {
		for k := 0; k < rounds; k++ {
			cs, err := appendJobCands(nil, csp.read(k, 1)[0], int32(me))
			if err != nil {
				warn(fmt.Sprintf("rank %d: wait candidates: %v (left out)", me, err))
			}
			guarded(me, "grouping its waits", warn, func() { rw.group(cs) })
		}
		if csp.err != nil {
			warn(fmt.Sprintf("rank %d: %v: its results are incomplete", me, csp.err))
		}
	}
	rw.sortJumps()
	return rw, st, tails, nil
}

// candParts is the wait candidates of a rank's calls as the exchange
// brought them, in their order: the rank's own lists (kept out of the
// exchange) and the other ranks' messages (xCand records each).
type candParts struct {
	lists [][]cand
	msgs  [][]byte
	order []bool // per part in order: a list (true) or a message
}

// sorted is the candidates in one list, by call, stably (what sortByKey
// of their concatenation gives): when the calls are dense, a count of
// each call's candidates, then each candidate written to its place
// straight from its list or message, the messages decoded there (one
// copy of them; 2026-11-29: before, decoded onto one list, then sorted
// into a second); else decoded onto one list and sortByKey.
func (cp *candParts) sorted(idx int32) []cand {
	n := 0
	var maxKey uint32
	for _, l := range cp.lists {
		n += len(l)
		for i := range l {
			maxKey = max(maxKey, l[i].call)
		}
	}
	le := binary.LittleEndian
	for _, b := range cp.msgs {
		n += len(b) / xCand
		for ; len(b) >= xCand; b = b[xCand:] {
			maxKey = max(maxKey, le.Uint32(b[4:]))
		}
	}
	if n < 64 || !denseKeys(uint64(maxKey), n) {
		out := make([]cand, 0, n)
		li, mi := 0, 0
		for _, isList := range cp.order {
			if isList {
				out = append(out, cp.lists[li]...)
				li++
			} else {
				out, _ = appendJobCands(out, cp.msgs[mi], idx) // whole records: checked as received
				mi++
			}
		}
		*cp = candParts{}
		return sortByKey(out, func(c *cand) uint64 { return uint64(c.call) })
	}
	count := make([]int32, int(maxKey)+2)
	for _, l := range cp.lists {
		for i := range l {
			count[l[i].call+1]++
		}
	}
	for _, b := range cp.msgs {
		for ; len(b) >= xCand; b = b[xCand:] {
			count[le.Uint32(b[4:])+1]++
		}
	}
	for k := 1; k < len(count); k++ {
		count[k] += count[k-1]
	}
	out := make([]cand, n)
	li, mi := 0, 0
	for _, isList := range cp.order { // count[k] is where the next of call k goes
		if isList {
			l := cp.lists[li]
			li++
			for i := range l {
				k := l[i].call
				out[count[k]] = l[i]
				count[k]++
			}
			continue
		}
		b := cp.msgs[mi]
		mi++
		for ; len(b) >= xCand; b = b[xCand:] {
			k := le.Uint32(b[4:])
			putJobCand(&out[count[k]], b[:xCand], idx)
			count[k]++
		}
	}
	*cp = candParts{}
	return out
}

// The records in the job's exchange (since 2026-11-28; before, the
// offline spill files' format: a tag byte per record, the sender's rank in
// each, appended field by field and decoded into growing lists): blocks,
// each a header of the counts of sends, receives and collective parts
// (uint32 each) and then the records of each kind at fixed widths,
// little-endian, written straight into a buffer of the block's size. The
// sender's rank is the message's source, so no record carries it. A
// message is one block (several when its records come from spill files,
// one per batch written); one without records is empty.
const (
	xHeader = 4 * 3
	xMsg    = 8 + 8*3 + 4 + 4 + 1 // flow, the three times, key, call, blocking
	xColl   = 4*5 + 1 + 8*2       // comm, seq, key, call, root, kind and side, t0, t1
)

// appendBlock appends the records as one block to b (nothing when there
// are none).
func appendBlock(b []byte, times []callTimes, sends []sendRec, recvs []recvRec, colls []collRec) []byte {
	ns, nr, nc := len(sends), len(recvs), len(colls)
	if ns+nr+nc == 0 {
		return b
	}
	n := len(b)
	size := xHeader + (ns+nr)*xMsg + nc*xColl
	b = slices.Grow(b, size)[:n+size]
	w := b[n:]
	le := binary.LittleEndian
	le.PutUint32(w, uint32(ns))
	le.PutUint32(w[4:], uint32(nr))
	le.PutUint32(w[8:], uint32(nc))
	w = w[xHeader:]
	for i := range sends {
		r := &sends[i]
		t := &times[r.tix]
		putMsg(w[:xMsg], r.flow, r.enter, t.t0, t.t1, r.key, t.call, t.blocking)
		w = w[xMsg:]
	}
	for i := range recvs {
		r := &recvs[i]
		t := &times[r.tix]
		putMsg(w[:xMsg], r.flow, r.post, t.t0, t.t1, r.key, t.call, t.blocking)
		w = w[xMsg:]
	}
	for i := range colls {
		r := &colls[i]
		t := &times[r.tix]
		w := w[i*xColl : (i+1)*xColl]
		le.PutUint32(w, uint32(r.comm))
		le.PutUint32(w[4:], r.seq)
		le.PutUint32(w[8:], uint32(r.key))
		le.PutUint32(w[12:], t.call)
		le.PutUint32(w[16:], uint32(r.root))
		w[20] = byte(r.kind) | r.side<<4
		le.PutUint64(w[21:], math.Float64bits(t.t0))
		le.PutUint64(w[29:], math.Float64bits(t.t1))
	}
	return b
}

func putMsg(w []byte, flow uint64, t1, t2, t3 float64, key int32, call uint32, blocking bool) {
	le := binary.LittleEndian
	le.PutUint64(w, flow)
	le.PutUint64(w[8:], math.Float64bits(t1))
	le.PutUint64(w[16:], math.Float64bits(t2))
	le.PutUint64(w[24:], math.Float64bits(t3))
	le.PutUint32(w[32:], uint32(key))
	le.PutUint32(w[36:], call)
	w[40] = flagByte(blocking)
}

// blockCounts checks b's blocks and returns their records of each kind.
func blockCounts(b []byte) (ns, nr, nc int, err error) {
	le := binary.LittleEndian
	for off := 0; off < len(b); {
		if len(b)-off < xHeader {
			return 0, 0, 0, fmt.Errorf("a block's header cut short at byte %d of %d", off, len(b))
		}
		s, r, c := uint64(le.Uint32(b[off:])), uint64(le.Uint32(b[off+4:])), uint64(le.Uint32(b[off+8:]))
		size := xHeader + (s+r)*xMsg + c*xColl
		if size > uint64(len(b)-off) {
			return 0, 0, 0, fmt.Errorf("a block of %d, %d and %d records at byte %d of %d: cut short", s, r, c, off, len(b))
		}
		ns, nr, nc, off = ns+int(s), nr+int(r), nc+int(c), off+int(size)
	}
	return ns, nr, nc, nil
}

// decodeBlocks decodes b's blocks, the records of rank idx, into the
// lists given (their room reused, else one allocation each of the exact
// size; no record appended), and their calls' times into times (reused).
func decodeBlocks(b []byte, idx int32, times []callTimes, sends []sendRec, recvs []recvRec, colls []collRec) ([]callTimes, []sendRec, []recvRec, []collRec, error) {
	times = times[:0]
	ns, nr, nc, err := blockCounts(b)
	if err != nil {
		return times, sends[:0], recvs[:0], colls[:0], err
	}
	sends, recvs, colls = resize(sends, ns), resize(recvs, nr), resize(colls, nc)
	// At most a call's times per record: room for them once, not a list
	// grown by copies (2026-11-29: a tenth of the match phase's bytes).
	times = slices.Grow(times, ns+nr+nc)
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	var is, ir, ic int
	for len(b) > 0 {
		s, r, c := int(le.Uint32(b)), int(le.Uint32(b[4:])), int(le.Uint32(b[8:]))
		b = b[xHeader:]
		for x := range sends[is : is+s] {
			w := b[x*xMsg : (x+1)*xMsg]
			tix := timesOf(&times, callTimes{t0: f(w[16:]), t1: f(w[24:]), call: le.Uint32(w[36:]), blocking: w[40] != 0})
			sends[is+x] = sendRec{flow: le.Uint64(w), enter: f(w[8:]), tix: tix, key: int32(le.Uint32(w[32:]))}
		}
		b, is = b[s*xMsg:], is+s
		for x := range recvs[ir : ir+r] {
			w := b[x*xMsg : (x+1)*xMsg]
			tix := timesOf(&times, callTimes{t0: f(w[16:]), t1: f(w[24:]), call: le.Uint32(w[36:]), blocking: w[40] != 0})
			recvs[ir+x] = recvRec{flow: le.Uint64(w), post: f(w[8:]), tix: tix, key: int32(le.Uint32(w[32:]))}
		}
		b, ir = b[r*xMsg:], ir+r
		for x := range colls[ic : ic+c] {
			w := b[x*xColl : (x+1)*xColl]
			tix := timesOf(&times, callTimes{t0: f(w[21:]), t1: f(w[29:]), call: le.Uint32(w[12:]), blocking: true})
			colls[ic+x] = collRec{comm: int32(le.Uint32(w)), seq: le.Uint32(w[4:]), idx: idx, key: int32(le.Uint32(w[8:])),
				tix: tix, root: int32(le.Uint32(w[16:])), kind: collKind(w[20] & 0xf), side: w[20] >> 4}
		}
		b, ic = b[c*xColl:], ic+c
	}
	return times, sends, recvs, colls, nil
}

// resize is a of length n, in a's room when it has enough.
func resize[T any](a []T, n int) []T {
	if cap(a) >= n {
		return a[:n]
	}
	return make([]T, n)
}

// A wait candidate in the job's exchange back to the rank of its call
// (which is its idx: not sent): key, call, pattern, partner, the
// partner's key, the four times.
const xCand = 4 + 4 + 1 + 4 + 4 + 8*4

func putCand(w []byte, c *cand) {
	le := binary.LittleEndian
	le.PutUint32(w, uint32(c.key))
	le.PutUint32(w[4:], c.call)
	w[8] = byte(c.pattern)
	le.PutUint32(w[9:], uint32(c.partner))
	le.PutUint32(w[13:], uint32(c.pkey))
	le.PutUint64(w[17:], math.Float64bits(c.t0))
	le.PutUint64(w[25:], math.Float64bits(c.t1))
	le.PutUint64(w[33:], math.Float64bits(c.waitReady))
	le.PutUint64(w[41:], math.Float64bits(c.jumpReady))
}

// candsOut encodes the candidates for the ranks of their calls: each
// rank's message of its exact size, written in place; with keep, those
// of this rank's (me) calls go to *own instead, in their order.
func candsOut(cands []cand, size, me int, keep bool, own *[]cand) [][]byte {
	n := make([]int, size)
	for i := range cands {
		n[cands[i].idx]++
	}
	back := make([][]byte, size)
	for d := range back {
		if n[d] > 0 && (d != me || !keep) {
			back[d] = make([]byte, 0, n[d]*xCand)
		}
	}
	if keep && n[me] > 0 {
		*own = make([]cand, 0, n[me])
	}
	for i := range cands {
		d := cands[i].idx
		if keep && int(d) == me {
			*own = append(*own, cands[i])
			continue
		}
		m := len(back[d])
		back[d] = back[d][:m+xCand]
		putCand(back[d][m:], &cands[i])
	}
	return back
}

// appendJobCands decodes b's candidates, of this rank's (idx) calls, onto
// out (grown once).
func appendJobCands(out []cand, b []byte, idx int32) ([]cand, error) {
	if len(b)%xCand != 0 {
		return out, fmt.Errorf("%d bytes: not whole records", len(b))
	}
	m := len(out)
	out = slices.Grow(out, len(b)/xCand)[:m+len(b)/xCand]
	for x := range out[m:] {
		putJobCand(&out[m+x], b[x*xCand:(x+1)*xCand], idx)
	}
	return out, nil
}

// putJobCand decodes one candidate's record w (xCand bytes) into c.
func putJobCand(c *cand, w []byte, idx int32) {
	le := binary.LittleEndian
	f := func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) }
	*c = cand{idx: idx, key: int32(le.Uint32(w)), call: le.Uint32(w[4:]), pattern: Pattern(w[8]),
		partner: int32(le.Uint32(w[9:])), pkey: int32(le.Uint32(w[13:])), t0: f(w[17:]), t1: f(w[25:]), waitReady: f(w[33:]), jumpReady: f(w[41:])}
}
