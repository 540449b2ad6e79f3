/*
 * piggyback.h: the piggyback channel (MPISCOPE_PIGGYBACK=1) and the wait
 * states it measures online.
 *
 * Every point-to-point message the application sends carries a header of
 * ours, in the same message: one element of a struct datatype made from
 * MPI_BOTTOM of [header, the user's buffer as count x datatype], header
 * first (a receive posted larger than the message then fills a prefix of
 * the user's buffer exactly as without us). The datatypes are cached per
 * thread by (buffer, count, datatype, direction). A send of a small
 * contiguous buffer is staged instead: header and data copied into a
 * buffer of ours sent as MPI_PACKED, which the receiver's struct datatype
 * takes alike (docs/compensation.md, "Staging"). Statuses are corrected
 * so that MPI_Get_count and MPI_Get_elements report the user's counts.
 *
 * The channel is decided once, collectively, at MPI_Init
 * (piggyback.go) and then stays on for the run (also under
 * MPI_Pcontrol(0): a receiver cannot tell how a message was sent). Its
 * gate bit, MS_G_PB (ms.h), sends every wrapper that has a piggyback
 * handler (wrapgen: the piggyback table) to its slow path, which calls
 * ms_pb_X (this module) in place of PMPI_X; with the bit clear nothing
 * here runs, and the wrappers cost what they cost without it.
 *
 * A handler takes the arguments of PMPI_X, then the wrapper's function id
 * and callsite (NULL: the call is not recorded; wait states are then not
 * counted, but the header still travels).
 */
#ifndef MS_PIGGYBACK_H
#define MS_PIGGYBACK_H

#include "ms.h"

/* The header: 24 bytes, sent as MPI_BYTE. */
typedef struct ms_pb_hdr {
	int64_t t;     /* the sender's entry into its send call: CLOCK_MONOTONIC ns on rank 0's clock */
	double delay;  /* the sender's accumulated delay (ns) */
	int32_t rank;  /* the sender's MPI_COMM_WORLD rank */
	int32_t flags;
} ms_pb_hdr;
#define MS_PB_HDR ((int)sizeof(ms_pb_hdr))
_Static_assert(sizeof(ms_pb_hdr) == 24, "ms_pb_hdr is 24 bytes");

/* MS_PB_ON: the channel is on (a wrapper's slow path tests it).
 * -DMS_NO_PIGGYBACK compiles the channel out of the wrappers (the
 * benchmark's control build, runbench -only channel-off: bench/
 * build-variant.sh profile DIR -DMS_NO_PIGGYBACK); the channel then never
 * turns on. */
#ifdef MS_NO_PIGGYBACK
#define MS_PB_ON() 0
#else
#define MS_PB_ON() (MS_LOAD(ms_gate) & MS_G_PB)
#endif

/* Kinds of wait state (the values are read by piggyback.go). */
#define MS_PB_LATE_SENDER 1    /* a receive (or the wait completing it) entered before the message was sent */
#define MS_PB_WAIT_NXN 2       /* an N-to-N collective entered before the last member */
#define MS_PB_LATE_BCAST 3     /* a one-to-N collective entered before its root */
#define MS_PB_EARLY_REDUCE 4   /* the root of an N-to-one collective entered before the last member */

/* One row of a thread's wait-state table: (kind, function, callsite,
 * communicator). */
typedef struct ms_pb_wrow {
	uint64_t pc;
	uint32_t kind, fn;
	int32_t comm;    /* communicator id (ms_comm_meta), -1 none */
	int32_t peer;    /* MPI_COMM_WORLD rank that caused the longest wait */
	uint64_t n;      /* calls measured */
	uint64_t sum;    /* wait, ns */
	uint64_t max;    /* longest single wait, ns */
} ms_pb_wrow;

#define MS_PB_WBITS 9
typedef struct ms_pb_wtab {
	struct ms_pb_wtab *next;
	uint64_t dropped;
	uint32_t epoch; /* the reset epoch its rows belong to (Pcontrol(3): ms_pb_note clears them) */
	ms_pb_wrow rows[1 << MS_PB_WBITS];
} ms_pb_wtab;

extern ms_pb_wtab *volatile ms_pb_wtabs; /* every thread's table (Go reads them at the end) */
extern int64_t ms_pb_off_ns;             /* this rank's clock offset to rank 0's (ns) */
extern double ms_pb_delay;               /* this rank's accumulated delay (ns), carried in the headers */
extern uint64_t ms_pb_stats[5];          /* cache hits, misses, uncached types, records, staged sends */
extern int ms_pb_stage_max;              /* staging threshold in bytes (MPISCOPE_PIGGYBACK_STAGE; 0: never) */

void ms_pb_enable(int64_t off_ns); /* piggyback.go at MPI_Init: all ranks agreed */

/* With tools stacked below mpiscope (MPISCOPE_STACK), the handlers sit
 * below the last tool (chain.c, ms_chain_pb): ms_pb_below is set, and a
 * wrapper calls down the stack as written, leaving its callsite with
 * ms_pb_at for the handler, which the bottom hooks of zwrap_<family>.c
 * take back with ms_pb_take (functions, not a thread-local variable the
 * wrappers would reference). */
extern int ms_pb_below;
void ms_pb_at(void *pc);
void *ms_pb_take(void);
int ms_chain_pb(void); /* chain.c */

/* Collectives: before the collective, one PMPI_Allreduce of the members'
 * entry times (kind: MS_PB_WAIT_NXN, MS_PB_LATE_BCAST, MS_PB_EARLY_REDUCE;
 * root: the root argument, -1 none). */
MS_HIDDEN void ms_pb_coll(MPI_Comm comm, int kind, int root, unsigned fn, void *pc);

#endif
