/*
 * compensate.h: overhead compensation (MPISCOPE_COMPENSATE=1) and the
 * testing-only busy delay (MPISCOPE_TEST_DELAY_NS, _RANKS).
 *
 * Each rank keeps its delay d (ms_pb_delay, ns): how much later this rank
 * is, at this point of its run, than it would be without us. Three
 * things move it (docs/compensation.md derives them):
 *   - every recorded call adds the calibrated cost of a wrapper outside
 *     the MPI call (ms_comp_out_ns: entry and exit), in ms_enter;
 *   - a call that sends or receives our header adds the calibrated cost
 *     of the header inside the call (ms_comp_in_ns, per side);
 *   - a receive compares the sender's delay (in the header) with its own
 *     plus the time it waited (ms_comp_recv), and a blocking collective
 *     makes every member's delay that of the uninstrumented collective
 *     (ms_pb_coll), plus the cost of our extra reduction, as measured in
 *     the call (ms_comp_coll_ns, its cost calibrated at MPI_Init, is
 *     reported only).
 * The change of d inside a recorded call is subtracted from that call's
 * function (ms_comp_sub): its compensated MPI time. The rank's
 * compensated application time is the measured one less the change of d
 * since the start (or the last reset).
 *
 * While compensation or the test delay is on, ms_gate's MS_G_NOTSC bit is
 * set, so every wrapper takes its slow path, whose ms_enter calls
 * ms_comp_enter. With both off nothing here runs.
 */
#ifndef MS_COMPENSATE_H
#define MS_COMPENSATE_H

#include "ms.h"

MS_HIDDEN extern int ms_comp_active;    /* compensation is on */
MS_HIDDEN extern double ms_comp_out_ns; /* a wrapper's cost outside the MPI call (ns) */
MS_HIDDEN extern double ms_comp_in_ns;  /* the header's cost inside a call, per side (ns) */
MS_HIDDEN extern double ms_comp_coll_ns; /* the extra reduction before a collective, calibrated (ns; reported) */

/* ms_comp_add moves this rank's delay by dd ns inside a call of function
 * fn (pc NULL: not recorded, so nothing is subtracted from fn). */
MS_HIDDEN void ms_comp_add(unsigned fn, void *pc, double dd);

/* ms_comp_recv: a receive entered at te (ns, rank 0's clock) got a message
 * sent at t by a rank with delay sd. Moves the delay and returns the wait
 * the uninstrumented run would have had (ns). */
MS_HIDDEN double ms_comp_recv(int64_t t, double sd, int64_t te, unsigned fn, void *pc);

#endif
