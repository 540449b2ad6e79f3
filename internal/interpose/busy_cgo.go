//go:build mpiscope_openmpi || mpiscope_mpich

package interpose

/*
#include "api.h"
*/
import "C"

import "github.com/mpiscope/mpiscope/profile"

// collectBusy reads the calls in progress on the rank's threads (a thread
// blocked in MPI while a snapshot or a signal's rank file is written) and
// counts each up to end as one call, through add (collect's), so that a
// hung rank's time shows as MPI time where it is blocked; and the time
// with recording off. A call that began before a reset (Pcontrol(3)) counts
// from the reset but shows its whole time blocked.
func collectBusy(r *rawRank, end uint64, epoch C.uint32_t, add func(pc, key, calls, ticks, mn, mx uint64, bytes int64)) {
	r.OffTicks = uint64(C.ms_off_total(C.uint64_t(end)))
	start := uint64(C.ms_app_start)
	ncomm := int(C.ms_comm_count())
	for t := C.ms_threads_head(); t != nil; t = t.next {
		var b C.ms_busy_t
		if C.ms_busy_read(t, &b) == 0 || uint64(b.t0) > end {
			continue
		}
		if t.epoch != epoch || t.nsites == 0 && t.pfn == 0 && t.rdepth == 0 {
			r.Threads++ // collect skipped it: its only call is this one
		}
		fn, t0 := int(b.fn), uint64(b.t0)
		region := int(uint64(t.rkey) >> 16 & 0xffff)
		key := uint64(fn) | uint64(t.rkey) | uint64(b.kbits) | uint64(C.MS_NOBIN)<<48
		if counted := end - max(t0, start); t0 < end && max(t0, start) < end {
			add(uint64(b.pc), key, 1, counted, counted, counted, 0)
		}
		rb := rawBusy{Thread: int(t.tid), Fn: fn, PC: uint64(b.pc), Region: region,
			Peer: profile.PeerNone, Tag: profile.TagNone, Elapsed: end - t0}
		if hasPeer, hasTag := busyRoles(r.FnNames[fn], r.FnClasses[fn]); hasPeer || hasTag {
			if hasPeer {
				rb.Peer = int(b.peer)
			}
			if hasTag {
				rb.Tag = int(b.tag)
			}
		}
		if c := int(b.comm); c >= 0 && c < ncomm {
			rb.Comm = C.GoString(&C.ms_comm_meta_at(C.int(c)).key[0])
		}
		r.Busy = append(r.Busy, rb)
	}
}
