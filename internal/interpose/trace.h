/*
 * trace.h: event tracing in the C hot path (trace.c). Included by ms.h.
 *
 * Each thread appends fixed-size events to its own buffer (no lock, no
 * malloc, no Go call per event). A full buffer is handed to Go (the only
 * C->Go call, a cold point) and the thread continues in its second buffer;
 * Go compresses and writes it and gives it back. See docs/traces.md.
 */
#ifndef MS_TRACE_H
#define MS_TRACE_H

#include <mpi.h>
#include <stdint.h>

/* Event kinds and flags: the same values as package trace. */
#define MS_TK_CALL 1
#define MS_TK_COMPLETE 2
#define MS_TK_ENTER 3
#define MS_TK_LEAVE 4
#define MS_TK_MARK 5
#define MS_TF_SEND 1
#define MS_TF_RECV 2
#define MS_TF_REQ 4
#define MS_TF_COLL 8
#define MS_TF_LOCAL 16

/* Kinds of completion calls (generator: Sem.Cpl). */
#define MS_TC_ONE 1  /* Wait, Test */
#define MS_TC_ALL 2  /* Waitall, Testall */
#define MS_TC_ANY 3  /* Waitany, Testany */
#define MS_TC_SOME 4 /* Waitsome, Testsome */

#define MS_TSAVE 256 /* requests followed per completion call */

typedef struct ms_tev {
	uint64_t t0, t1;
	uint64_t pc;
	uint64_t req;
	int64_t sbytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
	int32_t comm;
	uint16_t fn;
	uint8_t kind, flags;
} ms_tev;

typedef struct ms_tbuf {
	ms_tev *ev[2];
	volatile int busy[2]; /* 1 while Go holds buffer i */
	int cur;
	uint32_t n, cap;
	uint32_t fgen;
	int tid;
	uint64_t dropped, total, handed;
	struct ms_tbuf *next;
	/* Arguments of the call in progress (ms_trace_args). */
	int a_valid;
	unsigned a_fn;
	int a_flags, a_speer, a_stag, a_rpeer, a_rtag;
	int64_t a_rbytes;
	uint64_t a_t0;
	const MPI_Status *a_st;
	MPI_Request *a_req;
	/* Completion calls: requests before the call, lent statuses. */
	int nsave;
	uintptr_t save[MS_TSAVE];
	MPI_Status st[MS_TSAVE];
} ms_tbuf;

extern int ms_tracing;
extern volatile uint32_t ms_trace_fgen;

struct ms_comm;
MS_HIDDEN void ms_trace_leave(unsigned fn, void *pc, uint64_t dt, int64_t bytes, const struct ms_comm *cm);
MS_HIDDEN void ms_trace_args(unsigned fn, uint64_t t0, int flags, int speer, int stag, int rpeer, int rtag,
			     int64_t rbytes, const MPI_Status *st, MPI_Request *req);
MS_HIDDEN int ms_trace_save(const MPI_Request *reqs, int n, MPI_Status **st);
MS_HIDDEN void ms_trace_done(unsigned fn, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st);
MS_HIDDEN void ms_trace_mark(int kind, unsigned id);
void ms_trace_set(int on);

#endif
