//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
#include "piggyback.h"
*/
import "C"

import (
	"math"
	"slices"

	"github.com/mpiscope/mpiscope/profile"
)

// compAgree decides whether compensation is on from pbInit's agreement
// (all: every rank asked, any: some rank did), once the channel is on:
// only if every rank asks, since the ranks' collectives exchange their
// delays.
func compAgree(all, any bool) bool {
	if !all && any {
		warn("MPISCOPE_COMPENSATE: not every rank asked for it: off on all ranks")
	}
	return all
}

// compSetup gives the C side compensation's decision and this rank's test
// delay (MPISCOPE_TEST_DELAY_NS on the ranks of MPISCOPE_TEST_DELAY_RANKS);
// ms_comp_start (lifecycle.c) calibrates after msgoStart.
func compSetup() {
	delay := state.cfg.TestDelayNs
	if r := state.cfg.TestDelayRanks; r != nil && !slices.Contains(r, state.rank) {
		delay = 0
	}
	C.ms_comp_setup(boolInt(pb.comp), C.int64_t(delay))
}

// compFields are the figures ms_comp_read gives.
type compFields struct {
	outNs, inNs, collNs float64 // calibrated costs
	delayNs             float64 // the delay since the start or the last reset
	calls               float64
	current             bool // the totals belong to the current reset epoch
}

// compProfile adds this rank's compensated figures to p (one rank,
// measured figures filled): the application time less the delay, each
// function's MPI time less what compensation took out of its calls.
func compProfile(p *profile.Profile) {
	if !pb.comp || len(p.Ranks) != 1 {
		return
	}
	var v [9]C.double
	C.ms_comp_read(&v[0])
	f := compFields{float64(v[0]), float64(v[1]), float64(v[2]), float64(v[3]), float64(v[4]), v[5] != 0}
	sub := map[string]int64{}
	if f.current {
		nf := int(C.ms_nfuncs_get())
		for i := 0; i < nf && i < C.MS_MAXFUNCS; i++ {
			if s := int64(C.ms_comp_sub[i]); s != 0 {
				sub[C.GoString(C.ms_fn_name(C.int(i)))] = s
			}
		}
	} else {
		f.delayNs, f.calls = 0, 0
	}
	p.CompFuncs, p.CompRanks = profile.Compensate(p.Ranks[0], p.Funcs, sub, profile.CompRank{
		CallNs: f.outNs, InNs: f.inNs, CollNs: f.collNs, Calls: int64(f.calls), DelayNs: int64(math.Round(f.delayNs)),
	})
}
