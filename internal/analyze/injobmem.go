package analyze

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

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
	frame  [][]byte // per round, the records of one destination being framed
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

// put writes the pass's records to their rounds' files and empties them.
func (sp *jobSpill) put(p *rankPass) {
	for d := range p.sends {
		for i := range p.sends[d] {
			k := roundOfFlow(p.sends[d][i].flow, sp.rounds)
			sp.frame[k] = encodeRecs(sp.frame[k], p.sends[d][i:i+1], nil, nil)
		}
		for i := range p.recvs[d] {
			k := roundOfFlow(p.recvs[d][i].flow, sp.rounds)
			sp.frame[k] = encodeRecs(sp.frame[k], nil, p.recvs[d][i:i+1], nil)
		}
		for i := range p.colls[d] {
			c := &p.colls[d][i]
			k := roundOfColl(c.comm, c.seq, sp.rounds)
			sp.frame[k] = encodeRecs(sp.frame[k], nil, nil, p.colls[d][i:i+1])
		}
		for k, b := range sp.frame {
			if len(b) > 0 {
				sp.write(k, d, b)
				sp.frame[k] = b[:0]
			}
		}
		p.sends[d], p.recvs[d], p.colls[d] = p.sends[d][:0], p.recvs[d][:0], p.colls[d][:0]
	}
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
	var mine []cand // rounds == 1: the candidates of this rank's calls
	var csp *jobSpill
	chunk := func(call uint32) int { return int(uint64(call-1) * uint64(rounds) / max(p.ncalls, 1)) }
	if rounds > 1 {
		var err error
		if csp, err = newJobSpill(rounds); err != nil {
			warn(fmt.Sprintf("rank %d: %v: its wait candidates held in memory", me, err))
			csp = nil
		} else {
			defer csp.close()
		}
	}
	var out [][]byte
	// In one round, the records this rank owns itself (its receives, its
	// share of the collectives) skip the exchange: kept as they are, they
	// take the place their bytes would have had.
	var ownS []sendRec
	var ownR []recvRec
	var ownC []collRec
	for k := 0; k < rounds; k++ {
		switch {
		case sp != nil:
			out = sp.read(k, size)
		case rounds == 1:
			out = make([][]byte, size)
			for d := range out {
				if d == me {
					ownS, ownR, ownC = p.sends[d], p.recvs[d], p.colls[d]
				} else {
					out[d] = encodeRecs(nil, p.sends[d], p.recvs[d], p.colls[d])
				}
				p.sends[d], p.recvs[d], p.colls[d] = nil, nil, nil
			}
		default: // no spill files could be made: round k's records from memory
			out = make([][]byte, size)
			for d := range out {
				for i := range p.sends[d] {
					if roundOfFlow(p.sends[d][i].flow, rounds) == k {
						out[d] = encodeRecs(out[d], p.sends[d][i:i+1], nil, nil)
					}
				}
				for i := range p.recvs[d] {
					if roundOfFlow(p.recvs[d][i].flow, rounds) == k {
						out[d] = encodeRecs(out[d], nil, p.recvs[d][i:i+1], nil)
					}
				}
				for i := range p.colls[d] {
					if x := &p.colls[d][i]; roundOfColl(x.comm, x.seq, rounds) == k {
						out[d] = encodeRecs(out[d], nil, nil, p.colls[d][i:i+1])
					}
				}
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
		out = nil
		if k == 0 {
			for s, b := range in {
				if len(b) < len(tail) {
					return rankWaits{}, st, nil, fmt.Errorf("rank %d's records: %d bytes, without their end", s, len(b))
				}
				in[s], tails[s] = b[:len(b)-len(tail)], b[len(b)-len(tail):]
			}
		}
		var sends []sendRec
		var recvs []recvRec
		var colls []collRec
		for s, b := range in {
			if s == me && sp == nil && rounds == 1 {
				sends, recvs, colls = append(sends, ownS...), append(recvs, ownR...), append(colls, ownC...)
				ownS, ownR, ownC = nil, nil, nil
				continue
			}
			if sends, recvs, colls, err = decodeSpill(b, sends, recvs, colls); err != nil {
				warn(fmt.Sprintf("rank %d: records from rank %d: %v (left out)", me, s, err))
			}
			in[s] = nil
		}
		in = nil
		var cands []cand
		var rst matchStats
		func() {
			defer func() {
				if e := recover(); e != nil {
					warn(fmt.Sprintf("rank %d: the analysis failed in matching (%v): its results are incomplete", me, e))
				}
			}()
			cands, rst = matchRecs(sends, recvs, colls, func(w int) (int, bool) { return w, w >= 0 && w < size })
		}()
		st.add(rst)
		sends, recvs, colls = nil, nil, nil
		back := make([][]byte, size)
		for i := range cands {
			d := int(cands[i].idx)
			back[d] = appendCand(back[d], &cands[i])
		}
		cands = nil
		if in, err = c.Alltoallv(back); err != nil {
			return rankWaits{}, st, nil, err
		}
		back = nil
		for s, b := range in {
			if csp == nil {
				if mine, err = decodeCands(b, mine); err != nil {
					warn(fmt.Sprintf("rank %d: wait candidates from rank %d: %v (left out)", me, s, err))
				}
				continue
			}
			if len(b)%candLen != 0 {
				warn(fmt.Sprintf("rank %d: wait candidates from rank %d: %d bytes: not whole records (left out)", me, s, len(b)))
				continue
			}
			// By call range: each call's candidates in one file.
			for ; len(b) > 0; b = b[candLen:] {
				k := chunk(binary.LittleEndian.Uint32(b[8:]))
				csp.frame[k] = append(csp.frame[k], b[:candLen]...)
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
	group := func(cs []cand) {
		defer func() {
			if e := recover(); e != nil {
				warn(fmt.Sprintf("rank %d: the analysis failed in grouping its waits (%v): its results are incomplete", me, e))
			}
		}()
		rw.group(cs)
	}
	if csp == nil {
		group(mine)
	} else {
		for k := 0; k < rounds; k++ {
			cs, err := decodeCands(csp.read(k, 1)[0], nil)
			if err != nil {
				warn(fmt.Sprintf("rank %d: wait candidates: %v (left out)", me, err))
			}
			group(cs)
		}
		if csp.err != nil {
			warn(fmt.Sprintf("rank %d: %v: its results are incomplete", me, csp.err))
		}
	}
	rw.sortJumps()
	return rw, st, tails, nil
}
