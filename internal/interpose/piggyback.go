//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
#include "piggyback.h"
void ms_pb_fini(void);
int ms_trace_sync(int rounds, int maxr, uint64_t good_ns, uint64_t *local, int64_t *offset, uint64_t *rtt);
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/mpiscope/mpiscope/internal/symbolize"
	"github.com/mpiscope/mpiscope/profile"
)

// pb is the piggyback channel's state on this rank.
var pb struct {
	on     bool
	offset int64 // clock offset to rank 0 (ns), from the init-time samples
	comp   bool  // overhead compensation is on (compensate.go)
}

// pbInit decides at MPI_Init, with every rank (msgoStart), whether the
// piggyback channel is on: only if every rank asks for it, since a
// receiver must know whether a message carries our header. It then
// samples the clocks against rank 0 (the traces' ping-pong) for the wait
// states, and opens the gate.
func pbInit() {
	defer compSetup() // compensate.go: the test delay, and compensation once the channel is decided
	want := state.cfg.Piggyback || state.cfg.Compensate
	if state.session {
		if want {
			warn("sessions model: MPISCOPE_PIGGYBACK is off (there is no MPI_COMM_WORLD on which the ranks could agree on it)")
		}
		return
	}
	// The settings every rank must share, agreed in one allreduce: the
	// channel and compensation (on if every rank asks), the analysis at
	// MPI_Finalize (on if any rank asks: analyze.go).
	flags := [3]C.int{boolInt(want), boolInt(state.cfg.Compensate), boolInt(state.cfg.Analyze)}
	var all, any [3]C.int
	C.ms_priv_agree(3, &flags[0], &all[0], &any[0])
	state.analyze = any[2] != 0
	if all[0] == 0 {
		if any[0] != 0 {
			warn("MPISCOPE_PIGGYBACK (or MPISCOPE_COMPENSATE): not every rank asked for it: off on all ranks")
		}
		return
	}
	// Ranks on rank 0's host read the same CLOCK_MONOTONIC: their
	// offset is 0, exactly (the samples' estimate is off by up to half a
	// round trip, milliseconds when ranks share cores). The others take
	// the samples' (all ranks sample: the ping-pong is collective).
	var host [256]byte
	if state.rank == 0 {
		copy(host[:len(host)-1], state.host)
	}
	C.ms_priv_bcast(unsafe.Pointer(&host[0]), C.int(len(host)), 0)
	sameHost := C.GoString((*C.char)(unsafe.Pointer(&host[0]))) == state.host && state.cfg.TraceSkewNs == 0
	var local C.uint64_t
	var off C.int64_t
	var rtt C.uint64_t
	if C.ms_trace_sync(traceSyncRounds, traceSyncMax, traceSyncGoodNs, &local, &off, &rtt) != 0 {
		warn("MPISCOPE_PIGGYBACK: the clock samples failed: wait states compare the ranks' clocks unsynchronized")
		off = 0
	}
	if sameHost {
		off = 0
	}
	pb.on = true
	pb.offset = int64(off)
	C.ms_pb_stage_max = C.int(state.cfg.PBStage)
	C.ms_pb_enable(off)
	pb.comp = compAgree(all[1] != 0, any[1] != 0)
}

// pbFini frees the channel's datatypes at MPI_Finalize (msgoFinalize).
func pbFini() {
	if pb.on {
		C.ms_pb_fini()
	}
}

func boolInt(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// pbKinds names the wait-state kinds of piggyback.h.
var pbKinds = map[int]string{
	C.MS_PB_LATE_SENDER:  profile.WaitLateSender,
	C.MS_PB_WAIT_NXN:     profile.WaitNxN,
	C.MS_PB_LATE_BCAST:   profile.WaitLateBroadcast,
	C.MS_PB_EARLY_REDUCE: profile.WaitEarlyReduce,
}

// pbWaits reads every thread's wait-state table into p (one rank).
func pbWaits(p *profile.Profile, resolve resolver) {
	if !pb.on {
		return
	}
	rank := state.rank
	ncomm := int(C.ms_comm_count())
	nf := int(C.ms_nfuncs_get())
	type key struct {
		kind, fn int
		module   string
		off      uint64
		comm     int
	}
	acc := map[key]*profile.Wait{}
	var dropped uint64
	epoch := C.ms_epoch_now()
	for w := C.ms_pb_wtabs; w != nil; w = w.next {
		if w.epoch != epoch {
			continue // rows of before a reset (Pcontrol(3)) this thread has not cleared yet
		}
		dropped += uint64(w.dropped)
		for _, r := range unsafe.Slice(&w.rows[0], 1<<C.MS_PB_WBITS) {
			if r.n == 0 {
				continue
			}
			kind, ok := pbKinds[int(r.kind)]
			if !ok || int(r.fn) >= nf {
				continue
			}
			module, off, ok := resolve(uint64(r.pc))
			if !ok {
				module, off = "", uint64(r.pc)
			}
			k := key{int(r.kind), int(r.fn), module, off, int(r.comm)}
			a := acc[k]
			if a == nil {
				a = &profile.Wait{Kind: kind, Func: C.GoString(C.ms_fn_name(C.int(r.fn))), Loc: profile.Loc{Module: module, Offset: off}, MaxRank: rank, MaxPeer: int(r.peer)}
				if c := int(r.comm); c >= 0 && c < ncomm {
					a.Comm = C.GoString(&C.ms_comm_meta_at(C.int(c)).key[0])
				}
				acc[k] = a
			}
			if int64(r.max) > a.MaxNs {
				a.MaxNs, a.MaxPeer = int64(r.max), int(r.peer)
			}
			a.Calls += int64(r.n)
			a.WaitNs += int64(r.sum)
		}
	}
	for _, a := range acc {
		a.RankWait = profile.SpreadOf(rank, float64(a.WaitNs))
		p.Waits = append(p.Waits, *a)
	}
	if dropped > 0 {
		warn(fmt.Sprintf("piggyback: %d wait-state records lost (a thread's table was full)", dropped))
	}
	p.Sort()
}

// symbolizeWaits fills function, file and line of the wait states'
// callsites.
func symbolizeWaits(s *symbolize.Symbolizer, p *profile.Profile) {
	for i := range p.Waits {
		l := &p.Waits[i].Loc
		if l.Module == "" || l.File != "" {
			continue
		}
		if fn, file, line, err := s.LookupReturn(l.Module, l.Offset); err == nil {
			l.Function, l.File, l.Line = fn, file, line
		}
	}
}
