/*
 * trace.h: event tracing in the C hot path (trace.c). Included by ms.h.
 *
 * Each thread appends fixed-size events to its own buffer (no lock, no
 * malloc, no Go call per event): the generated wrapper calls the inline
 * ms_trace_call after the measured call, which stores one event. A full
 * buffer is pushed on a lock-free list and the writer (a goroutine blocked
 * in ms_trace_wait) is woken with a semaphore; the thread goes on in its
 * second buffer. No call into Go on the application's threads. See
 * docs/traces.md.
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

/* One event: 72 bytes, written to the file as is (trace.RawEventSize, W
 * blocks). Fields the flags do not announce are left unwritten. */
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

struct ms_tbuf;

/* A buffer handed to the writer: an entry of the ready list. */
typedef struct ms_thand {
	struct ms_thand *next;
	struct ms_tbuf *tb;
	int idx;
	uint32_t n;
} ms_thand;

typedef struct ms_tbuf {
	/* hot: read by every traced call */
	ms_tev *cur_ev;  /* ev[cur] */
	uint32_t n, cap;
	uint32_t fgen;
	int cur;
	uint64_t total;
	/* cold */
	ms_tev *ev[2];
	int busy[2]; /* atomic: 1 while the writer holds buffer i */
	ms_thand hand[2];
	int tid;
	uint64_t dropped, handed;
	struct ms_tbuf *next;
	/* Completion calls: requests before the call, lent statuses. */
	int nsave;
	uintptr_t save[MS_TSAVE];
	MPI_Status st[MS_TSAVE];
} ms_tbuf;

extern int ms_tracing;
extern volatile uint32_t ms_trace_fgen;
extern ms_comm *volatile ms_trace_cms[MS_MAXCOMMS];

MS_HIDDEN ms_tbuf *ms_trace_slow(ms_thread *t);
MS_HIDDEN int64_t ms_trace_get_count(const MPI_Status *st);
MS_HIDDEN int ms_trace_save(const MPI_Request *reqs, int n, MPI_Status **st);
MS_HIDDEN void ms_trace_done(unsigned fn, uint64_t t1, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st);
MS_HIDDEN void ms_trace_mark(int kind, unsigned id);
void ms_trace_set(int on);

/* ms_status_bytes is the size in bytes of the message a status describes:
 * read from the status where the implementation's layout is known (what
 * MPI_Get_count divides by the type size), else from PMPI_Get_count. */
static inline int64_t ms_status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI) && OPEN_MPI
	return (int64_t)st->_ucount;
#elif defined(MPICH)
	return (int64_t)(((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32) | (unsigned)st->count_lo);
#else
	return ms_trace_get_count(st);
#endif
}

static inline int ms_tworld(const ms_comm *cm, int peer)
{
	if (peer == MPI_ANY_SOURCE)
		return -2;
	return ms_world_of(cm, peer);
}

/* ms_trace_call stores the event of a measured call. flags, and the
 * arguments they announce, are mostly constants of the generated wrapper,
 * so the compiler keeps only the stores a function needs. Peers arrive as
 * ranks of cm and are stored as MPI_COMM_WORLD ranks; a receive's real
 * source, tag and size come from its status. */
static inline void ms_trace_call(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
				 const ms_comm *cm, int flags, int speer, int stag, int rpeer, int rtag,
				 int64_t rbytes, const MPI_Status *st, const MPI_Request *req)
{
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(tb == NULL || tb->n == tb->cap || tb->fgen != MS_LOAD(ms_trace_fgen), 0)) {
		tb = ms_trace_slow(t);
		if (tb == NULL)
			return;
	}
	ms_tev *e = &tb->cur_ev[tb->n++];
	tb->total++;
	e->t0 = t0;
	e->t1 = t1;
	e->pc = (uint64_t)(uintptr_t)pc;
	e->fn = (uint16_t)fn;
	e->kind = MS_TK_CALL;
	e->flags = (uint8_t)flags;
	e->comm = -1;
	if (cm) {
		e->comm = cm->id;
		if (__builtin_expect(MS_LOAD(ms_trace_cms[cm->id]) != cm, 0))
			MS_STORE(ms_trace_cms[cm->id], (ms_comm *)cm);
	}
	if (flags & (MS_TF_SEND | MS_TF_COLL)) {
		e->sbytes = bytes;
		e->speer = -1;
		e->stag = stag;
		if (flags & MS_TF_SEND)
			e->speer = speer == MPI_PROC_NULL ? -1 : ms_tworld(cm, speer);
	}
	if (flags & MS_TF_RECV) {
		if (st && rpeer != MPI_PROC_NULL) {
			rpeer = st->MPI_SOURCE;
			rtag = st->MPI_TAG;
			rbytes = ms_status_bytes(st);
		}
		e->rpeer = rpeer == MPI_PROC_NULL ? -1 : ms_tworld(cm, rpeer);
		e->rtag = rtag;
		e->rbytes = rbytes;
	}
	if ((flags & MS_TF_REQ) && req)
		e->req = (uint64_t)(uintptr_t)*req;
	else if (flags & MS_TF_REQ)
		e->req = 0;
}

#endif
