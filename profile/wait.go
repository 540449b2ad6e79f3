package profile

import (
	"cmp"
	"strings"
)

// Wait is a wait state measured online by the piggyback channel
// (MPISCOPE_PIGGYBACK=1): the time calls of one function at one callsite
// on one communicator spent waiting for another rank, summed over ranks.
type Wait struct {
	Kind     string // WaitLateSender, WaitNxN, WaitLateBroadcast, WaitEarlyReduce
	Func     string
	Loc      Loc
	Comm     string // communicator key, "" unknown (MPI_Mrecv, MPI_Wait on an MPI_Imrecv)
	Calls    int64  // calls measured, over ranks
	WaitNs   int64  // total wait, over ranks
	MaxNs    int64  // longest single wait
	MaxRank  int    // the rank that waited MaxNs (lowest of equal waits)
	MaxPeer  int    // the rank it waited for: the sender, the last to arrive, or the root
	RankWait Spread // per-rank total wait
}

// Kinds of wait state (Scalasca's names for the patterns).
const (
	WaitLateSender    = "late-sender"    // a receive, or the wait completing it, entered before the message was sent
	WaitNxN           = "wait-at-nxn"    // an N-to-N collective entered before the last member
	WaitLateBroadcast = "late-broadcast" // a one-to-N collective entered before its root
	WaitEarlyReduce   = "early-reduce"   // the root of an N-to-one collective entered before the last member
)

// cmpWaitKey orders wait states by (Kind, Func, Loc.Module, Loc.Offset,
// Comm), their key.
func cmpWaitKey(a, b Wait) int {
	return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Func, b.Func),
		strings.Compare(a.Loc.Module, b.Loc.Module), cmp.Compare(a.Loc.Offset, b.Loc.Offset),
		strings.Compare(a.Comm, b.Comm))
}

// addWait merges w into a (same key).
func addWait(a *Wait, w *Wait) {
	if w.MaxNs > a.MaxNs || w.MaxNs == a.MaxNs && (w.MaxRank < a.MaxRank || w.MaxRank == a.MaxRank && w.MaxPeer < a.MaxPeer) {
		a.MaxNs, a.MaxRank, a.MaxPeer = w.MaxNs, w.MaxRank, w.MaxPeer
	}
	a.Calls += w.Calls
	a.WaitNs += w.WaitNs
	a.RankWait.Add(w.RankWait)
	a.Loc.Function = joinStr(a.Loc.Function, w.Loc.Function)
	a.Loc.File = joinStr(a.Loc.File, w.Loc.File)
	if a.Loc.Line == 0 || w.Loc.Line != 0 && w.Loc.Line < a.Loc.Line {
		a.Loc.Line = w.Loc.Line
	}
}

type waitKey struct {
	kind, fn, module string
	off              uint64
	comm             string
}

// addWaits merges the wait states of one more profile.
func (m *merger) addWaits(l []Wait) {
	if len(l) > 0 && m.waitIdx == nil {
		m.waitIdx = make(map[waitKey]int)
	}
	for i := range l {
		w := &l[i]
		k := waitKey{w.Kind, w.Func, w.Loc.Module, w.Loc.Offset, w.Comm}
		j, ok := m.waitIdx[k]
		if !ok {
			m.waitIdx[k] = len(m.waits)
			m.waits = append(m.waits, *w)
			continue
		}
		addWait(&m.waits[j], w)
	}
}

func (e *encoder) waits(l []Wait) {
	e.uvarint(uint64(len(l)))
	for i := range l {
		w := &l[i]
		e.str(w.Kind)
		e.str(w.Func)
		e.str(w.Loc.Module)
		e.uvarint(w.Loc.Offset)
		e.str(w.Loc.Function)
		e.str(w.Loc.File)
		e.int(w.Loc.Line)
		e.str(w.Comm)
		e.varint(w.Calls)
		e.varint(w.WaitNs)
		e.varint(w.MaxNs)
		e.int(w.MaxRank)
		e.int(w.MaxPeer)
		e.spread(w.RankWait)
	}
}

func (d *decoder) waits(dst []Wait) []Wait {
	n := d.count("wait state", 14)
	if n == 0 {
		return nil
	}
	l := reuse(dst, n)
	for i := 0; i < n && d.err == nil; i++ {
		w := &l[i]
		w.Kind = d.str()
		w.Func = d.str()
		w.Loc.Module = d.str()
		w.Loc.Offset = d.uvarint()
		w.Loc.Function = d.str()
		w.Loc.File = d.str()
		w.Loc.Line = d.int()
		w.Comm = d.str()
		w.Calls = d.varint()
		w.WaitNs = d.varint()
		w.MaxNs = d.varint()
		w.MaxRank = d.int()
		w.MaxPeer = d.int()
		w.RankWait = d.spread()
	}
	return l
}
