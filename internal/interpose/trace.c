//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * trace.c: per-thread event buffers, the hand-off to Go, completion
 * records of the Wait/Test families, and the clock ping-pong with rank 0.
 */
#define _GNU_SOURCE
#include "ms.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "_cgo_export.h"

int ms_tracing;                 /* the one flag the hot path tests */
volatile uint32_t ms_trace_fgen; /* bumped by a flush: threads hand off at their next event */
size_t ms_trace_bufsize = 4 << 20;
int64_t ms_trace_skew;          /* testing: added to this rank's clock */
ms_tbuf *volatile ms_tbufs;
static __thread ms_tbuf *ms_ttls __attribute__((tls_model("initial-exec")));
static ms_comm *volatile ms_trace_cms[MS_MAXCOMMS];
static volatile int ms_trace_nomem;

extern MPI_Comm ms_priv;
uint64_t ms_mono_ns(void);

/* ms_tbuf_new maps this thread's two buffers (a cold path, once per thread). */
static ms_tbuf *ms_tbuf_new(void)
{
	size_t cap = ms_trace_bufsize / sizeof(ms_tev);
	if (cap < 16)
		cap = 16;
	size_t hdr = (sizeof(ms_tbuf) + 4095) & ~(size_t)4095;
	size_t blen = (cap * sizeof(ms_tev) + 4095) & ~(size_t)4095;
	char *m = mmap(NULL, hdr + 2 * blen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		ms_trace_nomem = 1;
		return NULL;
	}
	ms_tbuf *tb = (ms_tbuf *)m;
	tb->ev[0] = (ms_tev *)(m + hdr);
	tb->ev[1] = (ms_tev *)(m + hdr + blen);
	tb->cap = (uint32_t)cap;
	tb->fgen = ms_trace_fgen;
	tb->tid = (int)syscall(SYS_gettid);
	ms_tbuf *head;
	do {
		head = ms_tbufs;
		tb->next = head;
	} while (!__atomic_compare_exchange_n(&ms_tbufs, &head, tb, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	ms_ttls = tb;
	return tb;
}

static inline ms_tbuf *ms_tb(void)
{
	ms_tbuf *tb = ms_ttls;
	if (__builtin_expect(tb == NULL, 0) && !ms_trace_nomem)
		tb = ms_tbuf_new();
	return tb;
}

/* ms_trace_swap hands the current buffer to Go and continues in the other.
 * When Go still holds the other one (the writer is behind), wait up to
 * 50 ms, then drop the current buffer's events and count them. */
static void ms_trace_swap(ms_tbuf *tb)
{
	tb->fgen = ms_trace_fgen;
	if (tb->n == 0)
		return;
	int spare = 1 - tb->cur;
	for (int i = 0; i < 1000 && __atomic_load_n(&tb->busy[spare], __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	if (__atomic_load_n(&tb->busy[spare], __ATOMIC_ACQUIRE)) {
		tb->dropped += tb->n;
		tb->n = 0;
		return;
	}
	__atomic_store_n(&tb->busy[tb->cur], 1, __ATOMIC_RELEASE);
	if (!msgoTraceHandoff(tb, tb->cur, tb->n)) {
		__atomic_store_n(&tb->busy[tb->cur], 0, __ATOMIC_RELEASE);
		tb->dropped += tb->n;
		tb->n = 0;
		return;
	}
	tb->handed += tb->n;
	tb->cur = spare;
	tb->n = 0;
}

static inline ms_tev *ms_tpush(ms_tbuf *tb)
{
	if (__builtin_expect(tb->n == tb->cap || tb->fgen != ms_trace_fgen, 0))
		ms_trace_swap(tb);
	tb->total++;
	return &tb->ev[tb->cur][tb->n++];
}

static inline int ms_tworld(const ms_comm *cm, int peer)
{
	if (peer == MPI_ANY_SOURCE)
		return -2;
	return ms_world_of(cm, peer);
}

static int64_t ms_status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return n;
}

void ms_trace_args(unsigned fn, uint64_t t0, int flags, int speer, int stag, int rpeer, int rtag,
		   int64_t rbytes, const MPI_Status *st, MPI_Request *req)
{
	ms_tbuf *tb = ms_tb();
	if (tb == NULL)
		return;
	tb->a_valid = 1;
	tb->a_fn = fn;
	tb->a_t0 = t0;
	tb->a_flags = flags;
	tb->a_speer = speer;
	tb->a_stag = stag;
	tb->a_rpeer = rpeer;
	tb->a_rtag = rtag;
	tb->a_rbytes = rbytes;
	tb->a_st = st;
	tb->a_req = req;
}

/* ms_trace_leave records the call ms_leave is recording. */
void ms_trace_leave(unsigned fn, void *pc, uint64_t dt, int64_t bytes, const struct ms_comm *cm)
{
	ms_tbuf *tb = ms_tb();
	if (tb == NULL)
		return;
	uint64_t now = ms_now();
	ms_tev *e = ms_tpush(tb);
	e->kind = MS_TK_CALL;
	e->fn = (uint16_t)fn;
	e->pc = (uint64_t)(uintptr_t)pc;
	e->comm = -1;
	e->flags = 0;
	e->req = 0;
	e->speer = e->stag = e->rpeer = e->rtag = -1;
	e->sbytes = bytes;
	e->rbytes = 0;
	if (cm) {
		e->comm = cm->id;
		if (ms_trace_cms[cm->id] != cm)
			ms_trace_cms[cm->id] = (ms_comm *)cm;
	}
	if (tb->a_valid && tb->a_fn == fn) {
		e->t0 = tb->a_t0;
		e->t1 = tb->a_t0 + dt;
		int f = tb->a_flags;
		if (f & MS_TF_SEND) {
			e->speer = tb->a_speer == MPI_PROC_NULL ? -1 : ms_tworld(cm, tb->a_speer);
			e->stag = tb->a_stag;
		}
		if (f & MS_TF_RECV) {
			int src = tb->a_rpeer, tag = tb->a_rtag;
			int64_t rb = tb->a_rbytes;
			if (tb->a_st && src != MPI_PROC_NULL) {
				src = tb->a_st->MPI_SOURCE;
				tag = tb->a_st->MPI_TAG;
				rb = ms_status_bytes(tb->a_st);
			}
			e->rpeer = src == MPI_PROC_NULL ? -1 : ms_tworld(cm, src);
			e->rtag = tag;
			e->rbytes = rb;
		}
		if ((f & MS_TF_REQ) && tb->a_req)
			e->req = (uint64_t)(uintptr_t)*tb->a_req;
		e->flags = (uint8_t)f;
	} else {
		e->t1 = now;
		e->t0 = now - dt;
	}
	tb->a_valid = 0;
}

/* ms_trace_save keeps the requests of a completion call (the call sets
 * finished ones to MPI_REQUEST_NULL) and lends statuses when the caller
 * ignores them. It returns how many were kept, 0 when the call is not
 * followed (too many requests). */
int ms_trace_save(const MPI_Request *reqs, int n, MPI_Status **st)
{
	ms_tbuf *tb = ms_tb();
	if (tb == NULL || n <= 0 || n > MS_TSAVE || reqs == NULL)
		return 0;
	for (int i = 0; i < n; i++)
		tb->save[i] = (uintptr_t)reqs[i];
	if (*st == MPI_STATUS_IGNORE || *st == MPI_STATUSES_IGNORE)
		*st = tb->st;
	tb->nsave = n;
	return n;
}

static void ms_trace_cpl(ms_tbuf *tb, unsigned fn, int i, const MPI_Status *st)
{
	if (i < 0 || i >= tb->nsave)
		return;
	uintptr_t h = tb->save[i];
	if (h == (uintptr_t)MPI_REQUEST_NULL)
		return;
	uint64_t now = ms_now();
	ms_tev *e = ms_tpush(tb);
	e->kind = MS_TK_COMPLETE;
	e->fn = (uint16_t)fn;
	e->t0 = e->t1 = now;
	e->pc = 0;
	e->comm = -1;
	e->req = h;
	e->speer = e->stag = -1;
	e->sbytes = 0;
	e->flags = MS_TF_RECV | MS_TF_LOCAL;
	e->rpeer = st->MPI_SOURCE >= 0 ? st->MPI_SOURCE : -1;
	e->rtag = st->MPI_TAG;
	e->rbytes = e->rpeer >= 0 ? ms_status_bytes(st) : 0;
}

void ms_trace_done(unsigned fn, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st)
{
	ms_tbuf *tb = ms_ttls;
	if (tb == NULL || (flag && !*flag))
		return;
	switch (kind) {
	case MS_TC_ONE:
		ms_trace_cpl(tb, fn, 0, st);
		break;
	case MS_TC_ALL:
		for (int i = 0; i < n; i++)
			ms_trace_cpl(tb, fn, i, &st[i]);
		break;
	case MS_TC_ANY:
		if (idx && *idx != MPI_UNDEFINED)
			ms_trace_cpl(tb, fn, *idx, st);
		break;
	case MS_TC_SOME:
		if (idx && *idx != MPI_UNDEFINED)
			for (int k = 0; k < *idx; k++)
				ms_trace_cpl(tb, fn, indices[k], &st[k]);
		break;
	}
	tb->nsave = 0;
}

/* ms_trace_mark records a region enter/leave or a user event. */
void ms_trace_mark(int kind, unsigned id)
{
	ms_tbuf *tb = ms_tb();
	if (tb == NULL)
		return;
	uint64_t now = ms_now();
	ms_tev *e = ms_tpush(tb);
	memset(e, 0, sizeof *e);
	e->kind = (uint8_t)kind;
	e->fn = (uint16_t)id;
	e->t0 = e->t1 = now;
	e->comm = -1;
	e->speer = e->stag = e->rpeer = e->rtag = -1;
}

/* ---- for Go ---- */

ms_tbuf *ms_tbufs_head(void) { return __atomic_load_n(&ms_tbufs, __ATOMIC_ACQUIRE); }
void ms_trace_release(ms_tbuf *tb, int i) { __atomic_store_n(&tb->busy[i], 0, __ATOMIC_RELEASE); }
ms_tev *ms_trace_events(ms_tbuf *tb, int i) { return tb->ev[i]; }
void ms_trace_set(int on) { __atomic_store_n(&ms_tracing, on, __ATOMIC_RELEASE); }
int ms_trace_get(void) { return __atomic_load_n(&ms_tracing, __ATOMIC_ACQUIRE); }
void ms_trace_flushgen(void) { __atomic_add_fetch(&ms_trace_fgen, 1, __ATOMIC_RELEASE); }
void ms_trace_flush_self(void)
{
	if (ms_ttls)
		ms_trace_swap(ms_ttls);
}

/* ms_trace_comm returns communicator id's world ranks (NULL: identity or
 * not seen in a traced call) and its remote size. */
int ms_trace_comm(int id, int **world, int *inter)
{
	ms_comm *cm = id >= 0 && id < MS_MAXCOMMS ? ms_trace_cms[id] : NULL;
	*world = NULL;
	*inter = 0;
	if (cm == NULL)
		return -1;
	*world = cm->world;
	*inter = strncmp(ms_comm_meta[id].key, "inter:", 6) == 0;
	return cm->rsize;
}

int ms_trace_any(int mine)
{
	int any = 0;
	if (PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, ms_priv) != MPI_SUCCESS)
		return 0;
	return any;
}

/* ms_trace_sync measures this rank's clock against rank 0's: rank 0
 * answers each other rank's pings in turn; each rank keeps the round trip
 * with the smallest delay. All ranks must call it. */
int ms_trace_sync(int rounds, uint64_t *local, int64_t *offset, uint64_t *rtt)
{
	int rank = 0, size = 1;
	PMPI_Comm_rank(ms_priv, &rank);
	PMPI_Comm_size(ms_priv, &size);
	*offset = 0;
	*rtt = 0;
	*local = ms_mono_ns() + (uint64_t)ms_trace_skew;
	if (rank == 0) {
		for (int r = 1; r < size; r++)
			for (int k = 0; k < rounds; k++) {
				uint64_t x;
				if (PMPI_Recv(&x, 1, MPI_UINT64_T, r, 91, ms_priv, MPI_STATUS_IGNORE) != MPI_SUCCESS)
					return -1;
				x = ms_mono_ns() + (uint64_t)ms_trace_skew;
				if (PMPI_Send(&x, 1, MPI_UINT64_T, r, 92, ms_priv) != MPI_SUCCESS)
					return -1;
			}
		return 0;
	}
	uint64_t best = UINT64_MAX;
	for (int k = 0; k < rounds; k++) {
		uint64_t a = ms_mono_ns() + (uint64_t)ms_trace_skew, b = 0;
		if (PMPI_Send(&a, 1, MPI_UINT64_T, 0, 91, ms_priv) != MPI_SUCCESS ||
		    PMPI_Recv(&b, 1, MPI_UINT64_T, 0, 92, ms_priv, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		uint64_t c = ms_mono_ns() + (uint64_t)ms_trace_skew;
		if (c - a < best) {
			best = c - a;
			*local = a + (c - a) / 2;
			*offset = (int64_t)(b - *local);
			*rtt = best;
		}
	}
	return 0;
}
