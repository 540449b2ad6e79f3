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

/* Events are variable-size records in the thread's byte buffer, written
 * to the file as they are (W blocks; trace.DecodeRaw reads them):
 *  - every event starts with a 24-byte ms_trec: t0, call site, duration,
 *    w1 = function (or region/text id) | kind << 10 | MS_TLONG,
 *    w2 = communicator id + 1 (0: none) | flags << 11;
 *  - with MS_TLONG a 48-byte ms_ttail follows: exact t1, request, bytes,
 *    peers and tags (messages, collectives, completions, calls longer than
 *    2^32 ticks). Plain calls take 24 bytes. */
typedef struct ms_trec {
	uint64_t t0;
	uint64_t pc;
	uint32_t dt;
	uint16_t w1, w2;
} ms_trec;

typedef struct ms_ttail {
	uint64_t t1;
	uint64_t req;
	int64_t sbytes, rbytes;
	int32_t speer, stag, rpeer, rtag;
} ms_ttail;

#define MS_TLONG 0x8000
#define MS_TMAX (sizeof(ms_trec) + sizeof(ms_ttail)) /* largest record */

struct ms_tbuf;

/* A buffer handed to the writer: an entry of the ready list. */
typedef struct ms_thand {
	struct ms_thand *next;
	struct ms_tbuf *tb;
	int idx;
	uint32_t bytes;
	uint64_t n; /* events */
} ms_thand;

typedef struct ms_tbuf {
	/* hot: read by every traced call */
	char *cur_ev; /* ev[cur] */
	uint32_t n, cap; /* bytes used and usable (the buffer's size - MS_TMAX) */
	uint32_t fgen;
	int cur;
	uint64_t total; /* events recorded by this thread */
	/* cold */
	uint64_t base; /* total when the current buffer was started */
	char *ev[2];
	int busy[2]; /* atomic: 1 while the writer holds buffer i */
	ms_thand hand[2];
	int tid;
	uint64_t dropped;
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

/* ms_tfull: the current buffer has no room for a largest record, or a
 * flush asked every thread to hand its buffer over. */
static inline int ms_tfull(const ms_tbuf *tb)
{
	return tb->n > tb->cap || tb->fgen != MS_LOAD(ms_trace_fgen);
}

/* ms_thead writes a record's head (the tail, if any, follows it). */
static inline void ms_thead(ms_trec *e, uint64_t t0, uint64_t pc, uint32_t dt, unsigned w1, unsigned w2)
{
	e->t0 = t0;
	e->pc = pc;
	e->dt = dt;
	e->w1 = (uint16_t)w1;
	e->w2 = (uint16_t)w2;
}

/* ms_trace_call stores the event of a measured call. flags, and the
 * arguments they announce, are mostly constants of the generated wrapper,
 * so the compiler keeps only the stores a function needs: a plain call is
 * four stores of one 24-byte record. Peers arrive as ranks of cm and are
 * stored as MPI_COMM_WORLD ranks; a receive's real source, tag and size
 * come from its status. */
static inline void ms_trace_call(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes,
				 const ms_comm *cm, int flags, int speer, int stag, int rpeer, int rtag,
				 int64_t rbytes, const MPI_Status *st, const MPI_Request *req)
{
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(tb == NULL || ms_tfull(tb), 0)) {
		tb = ms_trace_slow(t);
		if (tb == NULL)
			return;
	}
	ms_trec *e = (ms_trec *)(tb->cur_ev + tb->n);
	uint64_t dt = t1 - t0;
	int lng = flags != 0 || dt > UINT32_MAX;
	unsigned c = 0;
	if (cm) {
		c = (unsigned)cm->id + 1;
		if (__builtin_expect(MS_LOAD(ms_trace_cms[cm->id]) != cm, 0))
			MS_STORE(ms_trace_cms[cm->id], (ms_comm *)cm);
	}
	ms_thead(e, t0, (uint64_t)(uintptr_t)pc, (uint32_t)dt, fn | MS_TK_CALL << 10 | (lng ? MS_TLONG : 0), c | (unsigned)flags << 11);
	tb->total++;
	if (__builtin_expect(!lng, 1)) {
		tb->n += sizeof(ms_trec);
		return;
	}
	ms_ttail *x = (ms_ttail *)(e + 1);
	tb->n += MS_TMAX;
	x->t1 = t1;
	if (flags & (MS_TF_SEND | MS_TF_COLL)) {
		x->sbytes = bytes;
		x->speer = -1;
		x->stag = stag;
		if (flags & MS_TF_SEND)
			x->speer = speer == MPI_PROC_NULL ? -1 : ms_tworld(cm, speer);
	}
	if (flags & MS_TF_RECV) {
		if (st && rpeer != MPI_PROC_NULL) {
			rpeer = st->MPI_SOURCE;
			rtag = st->MPI_TAG;
			rbytes = ms_status_bytes(st);
		}
		x->rpeer = rpeer == MPI_PROC_NULL ? -1 : ms_tworld(cm, rpeer);
		x->rtag = rtag;
		x->rbytes = rbytes;
	}
	if (flags & MS_TF_REQ)
		x->req = req ? (uint64_t)(uintptr_t)*req : 0;
}

#endif
