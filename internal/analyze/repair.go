package analyze

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/mpiscope/mpiscope/internal/trace"
)

// repairInJob is trace.Walker's clock repair in the job, where each rank
// has only its own trace: each message between hosts has its send's
// entry sent to the receiver's rank, which takes the smallest slack
// (receive completed minus send begun) per pair of hosts; the minima are
// reduced over the ranks, and every rank solves the same difference
// constraints (Bellman-Ford), rank 0's host staying put. It sets this
// rank's Shift. Unlike the offline repair it uses every message (the
// offline one holds at most trace.DefaultMaxOpen open at once).
func repairInJob(c Comm, w *trace.Walker, r *trace.Rank, meta jobMeta) error {
	me, size := c.Rank(), c.Size()
	type recvEnd struct {
		t    float64
		peer int
	}
	out := make([][]byte, size)
	recvs := map[uint64]recvEnd{}
	mine := meta.RankHost[me]
	other := func(peer int) bool {
		h, ok := meta.RankHost[peer]
		return ok && h != mine && peer >= 0 && peer < size
	}
	if w != nil {
		origin := w.Origin
		w.Origin = 0
		le := binary.LittleEndian
		send := func(m *trace.Msg, t float64) {
			if m.Flow != 0 && other(m.Peer) {
				out[m.Peer] = le.AppendUint64(le.AppendUint64(out[m.Peer], m.Flow), math.Float64bits(t))
			}
		}
		recv := func(m *trace.Msg, t float64) {
			if m.Flow != 0 && other(m.Peer) {
				if _, dup := recvs[m.Flow]; !dup {
					recvs[m.Flow] = recvEnd{t, m.Peer}
				}
			}
		}
		v := callsOnly(func(c *trace.Call) error {
			if c.Send != nil {
				send(c.Send, c.T0)
			}
			for i := range c.StartSend {
				send(&c.StartSend[i], c.T0)
			}
			if c.Recv != nil {
				recv(c.Recv, c.T1)
			}
			for i := range c.RecvDone {
				recv(&c.RecvDone[i], c.T1)
			}
			return nil
		})
		_ = w.WalkRank(0, v) // the real walk reports a damaged block
		w.Origin, w.End, w.Unmatched, w.Calls = origin, 0, 0, 0
	}
	in, err := c.Alltoallv(out)
	if err != nil {
		return err
	}
	slack := map[[2]string]float64{}
	for src, b := range in {
		if len(b)%16 != 0 {
			return fmt.Errorf("clock repair: %d bytes from rank %d", len(b), src)
		}
		le := binary.LittleEndian
		for ; len(b) > 0; b = b[16:] {
			flow, t := le.Uint64(b), math.Float64frombits(le.Uint64(b[8:]))
			e, ok := recvs[flow]
			if !ok || e.peer != src {
				continue
			}
			k := [2]string{meta.RankHost[src], mine}
			if v, ok := slack[k]; !ok || e.t-t < v {
				slack[k] = e.t - t
			}
		}
	}
	if err := allReduce(c, &slack, &slack, func(a, b *map[[2]string]float64) {
		if *a == nil {
			*a = map[[2]string]float64{}
		}
		for k, v := range *b {
			if o, ok := (*a)[k]; !ok || v < o {
				(*a)[k] = v
			}
		}
	}); err != nil {
		return err
	}
	if w == nil {
		return nil
	}
	// d[s] - d[r] <= slack(s->r) for every pair; start from 0 and relax.
	d := map[string]float64{}
	for _, h := range meta.RankHost {
		d[h] = 0
	}
	for it := 0; ; it++ {
		changed := false
		for k, v := range slack {
			if d[k[1]]+v < d[k[0]] {
				d[k[0]] = d[k[1]] + v
				changed = true
			}
		}
		if !changed {
			break
		}
		if it >= len(d) {
			return nil // trace.Walker's warning: offset and drift only
		}
	}
	w.Clocks[0].Shift = d[mine] - d[meta.RankHost[0]]
	return nil
}

// callsOnly is a trace.Visitor that sees calls only.
type callsOnly func(c *trace.Call) error

func (f callsOnly) Call(c *trace.Call) error                   { return f(c) }
func (callsOnly) Region(int, int, bool, string, float64) error { return nil }
func (callsOnly) Mark(int, int, string, float64) error         { return nil }
