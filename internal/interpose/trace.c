//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * trace.c: the cold parts of event tracing (trace.h): per-thread event
 * buffers, their hand-off to the writer (a goroutine, trace_cgo.go),
 * completion records of the Wait/Test families, persistent requests'
 * posts, region and user-event marks. The clock synchronization with
 * rank 0 is our own traffic: priv.c.
 */
#define _GNU_SOURCE
#include "api.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <semaphore.h>
#include <unistd.h>

int ms_tracing;                 /* tracing is on (regions, events, posts test it) */
MS_HIDDEN volatile unsigned char ms_trace_fn[MS_MAXFUNCS]; /* per function: on and not excluded (MS_TRACING) */
static unsigned char ms_trace_excl[MS_MAXFUNCS]; /* MPISCOPE_TRACE_EXCLUDE */
volatile uint32_t ms_trace_fgen; /* bumped by a flush: threads hand off at their next event */
size_t ms_trace_bufsize = 4 << 20;
int64_t ms_trace_skew;          /* testing: added to this rank's clock */
ms_tbuf *volatile ms_tbufs;
MS_HIDDEN ms_comm *volatile ms_trace_cms[MS_MAXCOMMS];
static __thread ms_tbuf *ms_ttls __attribute__((tls_model("initial-exec")));
static volatile int ms_trace_nomem;
MS_HIDDEN uint64_t ms_trole[1u << MS_TROLE_BITS]; /* roles of nonblocking requests (trace.h) */

/* The writer's queue: full buffers pushed by the threads (a lock-free
 * stack, popped whole by the writer) and a semaphore that wakes it. */
static ms_thand *volatile ms_tready;
static sem_t ms_tsem;
static int ms_tsem_ok;

/* ms_trace_init prepares the writer's queue (Go, once, before tracing). */
int ms_trace_init(void)
{
	if (!ms_tsem_ok && sem_init(&ms_tsem, 0, 0) == 0)
		ms_tsem_ok = 1;
	return ms_tsem_ok;
}

/* ms_tbuf_new maps this thread's two buffers (a cold path, once per thread). */
static ms_tbuf *ms_tbuf_new(void)
{
	size_t blen = (ms_trace_bufsize + 4095) & ~(size_t)4095;
	if (blen < 16 * MS_TMAX)
		blen = (16 * MS_TMAX + 4095) & ~(size_t)4095;
	size_t hdr = (sizeof(ms_tbuf) + 4095) & ~(size_t)4095;
	/* Each buffer has MS_TBUF_HEAD bytes before it and MS_TBUF_TAIL after
	 * it, where the writer frames the block so that it goes to the file
	 * in one page-aligned direct write (trace_cgo.go). Populated at once:
	 * a fault per page while the buffer fills costs the application more
	 * (measured on this VM: 35-50 ns per traced MPI_Allreduce while fresh
	 * buffers fill, MPICH 2 ranks). */
	size_t slot = MS_TBUF_HEAD + blen + MS_TBUF_TAIL;
	char *m = mmap(NULL, hdr + 2 * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED) {
		ms_trace_nomem = 1;
		return NULL;
	}
	ms_tbuf *tb = (ms_tbuf *)m;
	tb->ev[0] = m + hdr + MS_TBUF_HEAD;
	tb->ev[1] = m + hdr + slot + MS_TBUF_HEAD;
	tb->cur_ev = tb->ev[0];
	/* A record fits whenever n <= cap, and a deferred event besides
	 * (ms_trace_room, ms_trace_swap). */
	tb->cap = (uint32_t)(blen - 2 * MS_TMAX);
	tb->lim = tb->cap;
	tb->fgen = MS_LOAD(ms_trace_fgen);
	tb->dgen = 1;
	tb->tid = (int)syscall(SYS_gettid);
	for (int i = 0; i < 2; i++) {
		tb->hand[i].tb = tb;
		tb->hand[i].idx = i;
	}
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

/* ms_trace_push queues the current buffer for the writer and wakes it
 * (ms_trace_swap has checked that the semaphore exists). */
static void ms_trace_push(ms_tbuf *tb)
{
	ms_thand *h = &tb->hand[tb->cur];
	h->bytes = tb->n;
	h->n = tb->total - tb->base;
	__atomic_store_n(&tb->busy[tb->cur], 1, __ATOMIC_RELAXED);
	ms_thand *head = __atomic_load_n(&ms_tready, __ATOMIC_RELAXED);
	do
		h->next = head;
	while (!__atomic_compare_exchange_n(&ms_tready, &head, h, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	sem_post(&ms_tsem);
}

/* ms_trace_swap hands the current buffer to the writer, the deferred
 * event included, and continues in the other. When the writer still holds
 * the other one (it is behind), wait for it in 1,000 sleeps of 50 us (at
 * least 50 ms: each sleep lasts 50 us or longer, typically about 100 ms in
 * all, more on a loaded node), then drop the current buffer's events and
 * count them. */
static void ms_trace_swap(ms_tbuf *tb)
{
	if (tb->dfn)
		ms_tdef_write(tb);
	tb->fgen = MS_LOAD(ms_trace_fgen);
	if (tb->n == 0)
		return;
	int spare = 1 - tb->cur;
	for (int i = 0; i < 1000 && __atomic_load_n(&tb->busy[spare], __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = {0, 50000};
		nanosleep(&ts, NULL);
	}
	if (__atomic_load_n(&tb->busy[spare], __ATOMIC_ACQUIRE) || !ms_tsem_ok) {
		tb->dropped += tb->total - tb->base;
		tb->base = tb->total;
		tb->n = 0;
		tb->dgen++; /* the next records must not refer to dropped ones */
		memset(tb->memo, 0, sizeof tb->memo);
		return;
	}
	ms_trace_push(tb);
	tb->base = tb->total;
	tb->cur = spare;
	tb->cur_ev = tb->ev[spare];
	tb->n = 0;
	tb->dgen++; /* each buffer starts with an empty dictionary */
	memset(tb->memo, 0, sizeof tb->memo);
}

/* ms_tlim sets tb->lim after the slow path (trace.h): cap, or 0 when a
 * flush asked for the buffer. A flush bumps
 * ms_trace_fgen, then stores 0 in each buffer's lim: the generation is
 * read after lim is stored, so either this thread sees the new one or the
 * flush's 0 comes after its store. */
static void ms_tlim(ms_tbuf *tb)
{
	__atomic_store_n(&tb->lim, tb->cap, __ATOMIC_SEQ_CST);
	if (tb->fgen != __atomic_load_n(&ms_trace_fgen, __ATOMIC_SEQ_CST))
		__atomic_store_n(&tb->lim, 0, __ATOMIC_RELAXED);
}

/* ms_trace_room readies the buffer for a record when ms_tfull says so:
 * the deferred event is written (it fits: cap leaves room for two
 * records), then the buffer is handed over if it is full or a flush asked
 * for it. */
static void ms_trace_room(ms_tbuf *tb)
{
	if (tb->dfn)
		ms_tdef_write(tb);
	if (tb->n > tb->cap || tb->fgen != MS_LOAD(ms_trace_fgen))
		ms_trace_swap(tb);
}

ms_tbuf ms_tnone;

__attribute__((constructor)) static void ms_tnone_init(void)
{
	ms_tnone.n = 1;
	ms_tnone.dfn = 1;
}

/* ms_trace_slow: the first traced call of a thread, a full buffer, a
 * flush requested by another thread, or a deferred event to write. */
ms_tbuf *ms_trace_slow(ms_thread *t)
{
	ms_tbuf *tb = t->tb;
	if (tb == &ms_tnone || tb == NULL) {
		tb = ms_tb();
		if (tb == NULL)
			return NULL;
		t->tb = tb;
	}
	if (ms_tfull(tb) || tb->dfn) {
		ms_trace_room(tb);
		ms_tlim(tb);
	}
	return tb;
}

/* ms_troom makes room for a largest record, the deferred event written. */
static inline void ms_troom(ms_tbuf *tb)
{
	if (__builtin_expect(ms_tfull(tb) || tb->dfn, 0)) {
		ms_trace_room(tb);
		ms_tlim(tb);
	}
}

/* ms_tcomm returns the id + 1 a record stores for communicator cm (0:
 * none) and publishes cm for the communicator definitions at finalize. */
static inline unsigned ms_tcomm(const ms_comm *cm)
{
	if (cm == NULL)
		return 0;
	if (__builtin_expect(MS_LOAD(ms_trace_cms[cm->id]) != cm, 0))
		MS_STORE(ms_trace_cms[cm->id], (ms_comm *)cm);
	return (unsigned)cm->id + 1;
}

/* ms_tpost_open begins a posts record (trace.h) at the post of memo entry
 * mm (ms_tpost), or stores a post of 2^16 ticks or more as a short
 * record. */
void ms_tpost_open(ms_tbuf *tb, ms_tmemo *mm, uint64_t t0, uint64_t t1, uint64_t req)
{
	uint64_t dt = t1 - t0;
	if (dt >= MS_TPOSTS_DT) {
		ms_tshort(tb, mm->hs >> 2, t0, dt, 1, req);
		return;
	}
	uint32_t n = tb->n;
	char *p = tb->cur_ev + n;
	uint32_t h = (mm->hs & ~3u) | MS_TK_POSTS << 12, c = 1, x = (uint32_t)dt << 16;
	memcpy(p, &h, 4);
	memcpy(p + 4, &c, 4);
	memcpy(p + 8, &t0, 8);
	memcpy(p + 16, &x, 4);
	memcpy(p + 20, &req, 8);
	mm->phead = n;
	n += MS_TPOSTS_HEAD + MS_TPOSTS_ENTRY;
	tb->n = n;
	mm->pend = n;
	tb->pt = t1;
	tb->total++;
}

/* ms_trace_ev stores any event of a measured call (ms_trace_call): the
 * message fields in their canonical form, then the record. */
void ms_trace_ev(ms_tbuf *tb, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes, const ms_comm *cm,
		 int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes, const MPI_Status *st,
		 const MPI_Request *req)
{
	unsigned c = ms_tcomm(cm);
	ms_tmsg m = ms_tcanon(cm, flags, bytes, speer, stag, rpeer, rtag, rbytes, st);
	uint64_t rq = 0;
	int hasreq = (flags & MS_TF_REQ) != 0;
	if (hasreq)
		rq = req ? (uint64_t)(uintptr_t)*req : 0;
	ms_tput(tb, t0, t1 - t0, (uint64_t)(uintptr_t)pc, fn | MS_TK_CALL << 10 | (c | (unsigned)flags << 11) << 16,
		hasreq, rq, m.sbytes, m.rbytes, m.speer, m.stag, m.rpeer, m.rtag);
}

/* ms_tdef_put stores the deferred event (ms_trace_defer) as
 * ms_trace_call would have stored it; the caller has made room for it.
 * The calls deferred (MPI_Recv, MPI_Mrecv and their _c forms) are
 * receives: with flags MS_TF_RECV a constant, ms_trace_put folds to a
 * receive's work, as inlined in a wrapper (a traced ping-pong's deferred
 * receive took 154 instructions with the flags a variable, 103 so;
 * callgrind, bench/progs/tracecost.c). */
__attribute__((noinline)) void ms_tdef_put(ms_tbuf *tb)
{
	unsigned fn = (tb->dfn & ~MS_TDEF_ANY) - 1;
	const int any = (tb->dfn & MS_TDEF_ANY) != 0;
	tb->dfn = 0;
	if (__builtin_expect(!any, 1)) {
		/* A plain receive that succeeded (ms_trace_defer): a receive
		 * uses no bytes as sent. */
		ms_trace_put(tb, fn, tb->d.pc, tb->d.t0, tb->d.t1, 0, tb->d.cm, 1, MS_TF_RECV, -1, -1, tb->d.rpeer,
			     tb->d.rtag, tb->d.rbytes, NULL, NULL);
		return;
	}
	ms_trace_put(tb, fn, tb->d.pc, tb->d.t0, tb->d.t1, tb->d.bytes, tb->d.cm, tb->d.ok, tb->d.flags, tb->d.speer,
		     tb->d.stag, tb->d.rpeer, tb->d.rtag, tb->d.rbytes, NULL, NULL);
}

/* ms_tdef_write is ms_tdef_put with the common case first (ms_tdef_hit,
 * trace.h): a plain receive whose memo entry holds its arguments is
 * stored in few registers, with the rest a tail call, so that the
 * function saves no register: a ping-pong's deferred receive took 70
 * instructions, 16 of them the frame of ms_trace_put's other paths
 * (2026-11-28). The same bytes as ms_tdef_put's. Used where a deferred
 * event is written outside a wrapper (a completion, a post, a region or
 * user event, a buffer's hand-over); ms_trace_call inlines the test. */
void ms_tdef_write(ms_tbuf *tb)
{
	if (__builtin_expect(ms_tdef_hit(tb), 1))
		return;
	ms_tdef_put(tb);
}

int64_t ms_trace_get_count(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return n;
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
	/* A pointer handle (Open MPI) is copied as it is, in one memcpy (5
	 * instructions per request as a loop, 2026-11-28); an integer one
	 * (MPICH) sign-extended, as the completion records take it. */
	if (sizeof(MPI_Request) == sizeof(uintptr_t))
		memcpy(tb->save, reqs, (size_t)n * sizeof(uintptr_t));
	else {
		/* Unrolled: 5 instructions per request as a plain loop, a
		 * load and a store besides a quarter of the loop's
		 * (2026-11-28). */
#pragma GCC unroll 4
		for (int i = 0; i < n; i++)
			tb->save[i] = (uintptr_t)reqs[i];
	}
	if (*st == MPI_STATUS_IGNORE || *st == MPI_STATUSES_IGNORE)
		*st = tb->st;
	tb->nsave = n;
	tb->npre = 0;
	return n;
}

/* ms_trace_saveall is ms_trace_save for MPI_Waitall and MPI_Testall
 * (2026-11-28). When the caller passes MPI_STATUSES_IGNORE and every
 * request has the role its post noted, a send or a collective, none
 * marked by MPI_Cancel (MS_TR_CANCEL), no completion will read its
 * status: the call gets no statuses to fill
 * (Open MPI spent about 12 instructions per request filling the lent
 * ones) and the completions record's entries are made now, from the
 * roles, into tb->pent; ms_trace_done copies them into the record if the
 * call completes them all. The entries are those ms_tcpls_fast writes.
 * Else (a receive, a one-sided or MPI-IO operation, an unknown role, a
 * handle beyond 56 bits, statuses asked for) it is ms_trace_save. */
int ms_trace_saveall(const MPI_Request *reqs, int n, MPI_Status **st)
{
	ms_tbuf *tb = ms_tb();
	if (tb == NULL || n <= 0 || n > MS_TSAVE || reqs == NULL)
		return 0;
	if (*st == MPI_STATUSES_IGNORE) {
		const uintptr_t null = (uintptr_t)MPI_REQUEST_NULL;
		/* e below: its bits outside a send's or a collective's role. */
		const uint64_t other = ~((uint64_t)(MS_TF_SEND | MS_TF_COLL) << MS_TROLE_SHIFT);
		uint64_t *pe = tb->pent, hor = 0;
		unsigned cnt = 0;
		for (int k = 0; k < n; k++) {
			uintptr_t h = (uintptr_t)reqs[k];
			if (h == null)
				continue;
			uint64_t key = ms_trole_key(h);
			/* The table's word with the key taken out: the role
			 * alone (role << 56) when it was noted for this handle. */
			uint64_t e = MS_LOAD(ms_trole[ms_trole_slot(key)]) ^ key;
			/* One test for the handle and the role: noted for this
			 * handle, a send, a collective or both, nothing else
			 * (a receive, MPI-IO, one-sided, MS_TR_CANCEL); and a
			 * role at all. */
			if ((e & other) != 0 || e == 0)
				goto lend;
			hor |= (uint64_t)h;
			/* The entry: the handle (in 56 bits) and its flags,
			 * which are its role. */
			pe[cnt++] = (sizeof(MPI_Request) >= sizeof(uint64_t) ? (uint64_t)h : (uint64_t)h & MS_TCPLS_REQ) | e;
		}
		/* A pointer handle must fit the record's 56 sign-extended bits
		 * (an integer one, sign-extended from 32, does). */
		if (sizeof(MPI_Request) >= sizeof(uint64_t) && (hor >> 55) != 0)
			goto lend;
		tb->npre = cnt + 1;
		tb->nsave = 0;
		return n;
	}
lend:
	return ms_trace_save(reqs, n, st);
}

/* ms_tcancelled tells whether a completed request's status says it was
 * cancelled (read where the implementation's layout is known, as
 * MPI_Test_cancelled does). */
static int ms_tcancelled(const MPI_Status *st)
{
#if defined(OPEN_MPI) && OPEN_MPI
	return st->_cancelled != 0;
#elif defined(MPICH)
	return (st->count_hi_and_cancelled & 1) != 0;
#else
	int flag = 0;
	return PMPI_Test_cancelled(st, &flag) == MPI_SUCCESS && flag;
#endif
}

/* ms_tcpl stores a completion record: w its function word, h its
 * request, the receive fields (a send's, a collective's and a one-sided
 * operation's are the defaults, 0 bytes and -1). A completion's sending
 * fields are always the defaults and its call site 0, so the dictionary
 * entry that holds w holds them too: only the receive fields are compared
 * (ms_tholds with MS_TF_RECV), and where they are constants the hash
 * folds to the function word's. Inlined at each completion of MPI_Wait,
 * MPI_Test and MPI_Waitany/Testany (calls of several requests write a
 * completions record instead: ms_trace_cpls). A shape not in the
 * dictionary takes ms_tput's full record. */
static inline __attribute__((always_inline)) void ms_tcpl(ms_tbuf *tb, uint64_t now, uint32_t w, uintptr_t h,
							   int64_t rbytes, int32_t rpeer, int32_t rtag)
{
	unsigned slot = ms_tslot(ms_tshkey(0, w, 0, rbytes, -1, -1, rpeer, rtag));
	ms_tmsg m = {0, rbytes, -1, -1, rpeer, rtag};
	if (__builtin_expect(ms_tholds(&tb->dict[slot], tb, 0, w, &m, MS_TF_RECV), 1)) {
		ms_tshort(tb, slot, now, 0, 1, h);
		return;
	}
	ms_tput(tb, now, 0, 0, w, 1, h, 0, rbytes, -1, -1, rpeer, rtag);
}

/* ms_trace_cplh records the completion of request h, found done by a
 * completion call, with the role of its post: a persistent request's as
 * MPI_Start knew it (ms_preq_done), another's as its post noted it
 * (ms_trole_get). A send or a collective (MS_TF_SEND, MS_TF_COLL) carries
 * no status: it describes no message received. A receive (MS_TF_RECV), a
 * request whose role is not known (written as a receive's, as it may be
 * one), or MPI_Isendrecv's (MS_TF_SEND | MS_TF_RECV) carry the status's
 * source, tag and size. */
/* ms_tcpl_role returns the role of request h found done (0: nothing
 * completed, MPI_REQUEST_NULL or an inactive persistent request): the one
 * its post noted (ms_trole_get), else the persistent table's
 * (ms_preq_done: MS_TF_RECV for a request it does not hold). A traced
 * MPI_Start notes role 0 for the request it starts (ms_trace_post), so an
 * active persistent request is always looked up in the persistent table,
 * which marks it inactive; a request posted by MPI_Isend... takes no call.
 * (Asked first, the persistent table cost each completion 16 instructions
 * and a call, 2026-11-26.) A persistent request started while tracing was
 * off and completed while it is on, whose handle a freed nonblocking
 * request had, may take that request's role: its completion then matches
 * no post (the converter counts it unmatched), where it was not written. */
static inline __attribute__((always_inline)) int ms_tcpl_role(uintptr_t h)
{
	if (h == (uintptr_t)MPI_REQUEST_NULL)
		return 0;
	unsigned r = ms_trole_get(h);
	if (__builtin_expect(r != 0, 1))
		return r == MS_TR_IDLE ? 0 : (int)r;
	int p = ms_preq_done(h);
	/* Inactive: the next completion call that finds it so asks no
	 * table (MS_TR_IDLE). */
	if (p == 0)
		ms_trole_note(h, MS_TR_IDLE);
	return p;
}

static inline __attribute__((always_inline)) void ms_trace_cplh(ms_tbuf *tb, unsigned fn, uint64_t now, uintptr_t h,
								  const MPI_Status *st)
{
	int role = ms_tcpl_role(h);
	if (!role)
		return;
	ms_troom(tb);
	if ((role & (MS_TF_SEND | MS_TF_RECV)) && ms_tcancelled(st)) {
		/* Cancelled: marked, matched to no message. */
		ms_tcpl(tb, now, fn | MS_TK_COMPLETE << 10 | (unsigned)((MS_TF_RECV | MS_TF_LOCAL) << 11) << 16, h, 0,
			MS_TCANCELLED, -1);
		return;
	}
	if (role == MS_TR_IO) {
		/* An MPI-IO operation: the bytes its status tells. */
		ms_tcpl(tb, now, fn | MS_TK_COMPLETE << 10 | (unsigned)(MS_TF_LOCAL << 11) << 16, h, ms_status_bytes(st),
			-1, -1);
		return;
	}
	if (!(role & MS_TF_RECV)) {
		/* A send, a collective, a one-sided operation (no flag). */
		ms_tcpl(tb, now, fn | MS_TK_COMPLETE << 10 | (unsigned)((role & MS_TF_ALLMSG) << 11) << 16, h, 0, -1, -1);
		return;
	}
	int32_t src = st->MPI_SOURCE >= 0 ? st->MPI_SOURCE : -1;
	ms_tcpl(tb, now, fn | MS_TK_COMPLETE << 10 | (unsigned)((role | MS_TF_LOCAL) << 11) << 16, h,
		src >= 0 ? ms_status_bytes(st) : 0, src, st->MPI_TAG);
}

/* Inlined in ms_trace_done's loops: no call per completion. */
static inline __attribute__((always_inline)) void ms_trace_cpl(ms_tbuf *tb, unsigned fn, uint64_t now, int i,
								const MPI_Status *st)
{
	if (i >= 0 && i < tb->nsave)
		ms_trace_cplh(tb, fn, now, tb->save[i], st);
}

/* ms_trace_cpl1 is ms_trace_done for one request (ms_trace_done1). */
void ms_trace_cpl1(unsigned fn, uint64_t t1, uintptr_t h, const MPI_Status *st)
{
	ms_tbuf *tb = ms_ttls;
	if (tb != NULL)
		ms_trace_cplh(tb, fn, t1, h, st);
}

/* ms_tcpls_close ends the completions record (trace.h) begun at byte at
 * of the current buffer, of cnt entries up to byte off: its header, the
 * events counted. A record of no entry is not written. */
static inline void ms_tcpls_close(ms_tbuf *tb, uint32_t at, uint32_t off, unsigned cnt, unsigned fn, uint64_t now)
{
	if (cnt == 0)
		return;
	char *p = tb->cur_ev + at;
	uint32_t h = MS_TK_CPLS << 12 | cnt << 18;
	uint16_t f16 = (uint16_t)fn, z = 0;
	__builtin_memcpy(p, &h, 4);
	__builtin_memcpy(p + 4, &f16, 2);
	__builtin_memcpy(p + 6, &z, 2);
	__builtin_memcpy(p + 8, &now, 8);
	tb->n = off;
	tb->total += cnt;
}

/* ms_tcpls_recv writes a receive's entry e of a completions record at p
 * and returns the end of it: the entry alone when its source, tag and
 * bytes are those of the record's previous receive entry (*rpeer, *rtag,
 * *rbytes), else with bit 63 set and the three after it, which become the
 * previous ones. Shared by ms_tcpls_fast and ms_trace_cpls's loop. */
static inline __attribute__((always_inline)) char *ms_tcpls_recv(char *p, uint64_t e, int32_t rp, int32_t rt, int64_t rb,
								 int32_t *rpeer, int32_t *rtag, int64_t *rbytes)
{
	if (rp != *rpeer || rt != *rtag || rb != *rbytes) {
		e |= 1ull << 63;
		*rpeer = rp, *rtag = rt, *rbytes = rb;
		__builtin_memcpy(p, &e, 8);
		__builtin_memcpy(p + 8, &rp, 4);
		__builtin_memcpy(p + 12, &rt, 4);
		__builtin_memcpy(p + 16, &rb, 8);
		return p + 24;
	}
	__builtin_memcpy(p, &e, 8);
	return p + 8;
}

/* ms_tcpls_fast is ms_trace_cpls for the common call (2026-11-28): MPI_Waitall or
 * MPI_Testall (requests 0..n-1, all saved) whose record fits the buffer
 * whole (n largest entries), every request found done with the role its
 * post noted, a send, a collective, a one-sided operation or a receive,
 * none marked by MPI_Cancel. It writes the same bytes as ms_trace_cpls's loop,
 * without the tests per entry that loop makes for the rest (the room, a
 * handle beyond 56 bits, the persistent-request table, MPI-IO): a Waitall
 * of 64 sends took 59 instructions per completion, 64 receives 72
 * (callgrind, bench/progs/tracecost.c). It returns 0, having written
 * nothing the buffer counts (tb->n is unchanged), at the first request it
 * does not handle: ms_trace_cpls's loop then writes the record. A role
 * found in the table fits its handle's key in 56 bits; a pointer handle is
 * its own key, and it fits the record's 56 sign-extended bits when its
 * bits 55-63 are 0, tested once for all entries (hor). */
static inline __attribute__((always_inline)) int ms_tcpls_fast(ms_tbuf *tb, unsigned fn, uint64_t now, int n,
								 const MPI_Status *st)
{
	uint32_t at = tb->n;
	char *p = tb->cur_ev + at + MS_TCPLS_HEAD;
	const uintptr_t *save = tb->save;
	const uintptr_t null = (uintptr_t)MPI_REQUEST_NULL;
	unsigned cnt = 0;
	uint64_t hor = 0;
	int32_t rpeer = -1, rtag = -1;
	int64_t rbytes = 0;
	for (int k = 0; k < n; k++) {
		uintptr_t h = save[k];
		if (h == null)
			continue;
		uint64_t key = ms_trole_key(h);
		/* The entry noted for the handle: the key in the low 56 bits
		 * (a key beyond them fails the test of hor below), the role
		 * above. */
		uint64_t e = MS_LOAD(ms_trole[ms_trole_slot(key)]) ^ key;
		unsigned role = (unsigned)(e >> MS_TROLE_SHIFT);
		/* Role 0 (none), MPI-IO, marked by MPI_Cancel or an inactive
		 * persistent request (MS_TR_IDLE): the general loop. A
		 * request MPI_Cancel was asked to cancel has the mark
		 * (ms_trole_cancel), so the status's cancelled flag is read
		 * there, not here (as ms_trace_saveall does for sends; 4
		 * instructions per receive, 2026-11-28). */
		if ((e << (64 - MS_TROLE_SHIFT)) != 0 || role == 0 || (role & ~(unsigned)(MS_TF_ALLMSG | MS_TR_RMA)) != 0)
			return 0;
		const MPI_Status *s = &st[k];
		hor |= (uint64_t)h;
		cnt++;
		/* A pointer handle is its key: the entry is the role's word
		 * with the handle in it (e ^ key), its flags masked. */
		/* An integer handle (MPICH): its sign-extended 56 bits and
		 * e, which the test above leaves the role's bits alone (2
		 * instructions fewer per request than masking e again). */
		const uint64_t hk = sizeof(MPI_Request) >= sizeof(uint64_t) ? (e ^ key) : ((uint64_t)h & MS_TCPLS_REQ) | e;
		if (!(role & MS_TF_RECV)) {
			uint64_t x = hk & (MS_TCPLS_REQ | (uint64_t)MS_TF_ALLMSG << 56);
			__builtin_memcpy(p, &x, 8);
			p += 8;
			continue;
		}
		int32_t rp = s->MPI_SOURCE >= 0 ? s->MPI_SOURCE : -1, rt = s->MPI_TAG;
		int64_t rb = rp >= 0 ? ms_status_bytes(s) : 0;
		p = ms_tcpls_recv(p, hk | (uint64_t)MS_TF_LOCAL << 56, rp, rt, rb, &rpeer, &rtag, &rbytes);
	}
	/* An integer handle (MPICH) is sign-extended from 32 bits: it fits. */
	if (sizeof(MPI_Request) >= sizeof(uint64_t) && (hor >> 55) != 0)
		return 0;
	ms_tcpls_close(tb, at, (uint32_t)(p - tb->cur_ev), cnt, fn, now);
	return 1;
}

/* ms_trace_cpls records the completions a call of several requests found
 * (MPI_Waitall, MPI_Testall: n requests, the i-th with status st[i];
 * MPI_Waitsome, MPI_Testsome: the n indices, the k-th with status st[k])
 * as one completions record: per request its handle, the flags of its role
 * (as ms_trace_cplh finds them) and, when they differ from the previous
 * entry's, its receive fields. No shape is hashed or compared: a Waitall
 * of 64 sends took 107 instructions per completion as separate records
 * (ms_trace_cplh), 59 with this record; of 64 receives 129 and 72
 * (callgrind, bench/progs/tracecost.c, docs/performance.md), and less
 * with ms_tcpls_fast, which writes most records. A record fills the buffer
 * up to the room a largest record would (cap + MS_TMAX), then hands it over
 * and goes on in a new record; a handle that does not fit in 56 bits
 * (sign-extended) takes a record of its own (ms_tcpl). */
static inline __attribute__((always_inline)) void ms_trace_cpls(ms_tbuf *tb, unsigned fn, uint64_t now, int n,
								  const int *indices, const MPI_Status *st)
{
	ms_troom(tb);
	uint32_t at = tb->n, lim = tb->cap + (uint32_t)MS_TMAX - MS_TCPLS_ENTRY_MAX;
	if (indices == NULL && n <= tb->nsave &&
	    (uint64_t)at + MS_TCPLS_HEAD + (uint64_t)n * MS_TCPLS_ENTRY_MAX <= (uint64_t)tb->cap + MS_TMAX &&
	    ms_tcpls_fast(tb, fn, now, n, st))
		return;
	char *p = tb->cur_ev + at + MS_TCPLS_HEAD;
	unsigned cnt = 0;
	int32_t rpeer = -1, rtag = -1;
	int64_t rbytes = 0;
	for (int k = 0; k < n; k++) {
		int i = indices ? indices[k] : k;
		if ((unsigned)i >= (unsigned)tb->nsave)
			continue;
		uintptr_t h = tb->save[i];
		int role = ms_tcpl_role(h);
		if (!role)
			continue;
		const MPI_Status *s = &st[k];
		unsigned f;
		int recv = 1;
		int32_t rp = -1, rt = -1;
		int64_t rb = 0;
		if ((role & (MS_TF_SEND | MS_TF_RECV)) && ms_tcancelled(s)) {
			f = MS_TF_RECV | MS_TF_LOCAL;
			rp = MS_TCANCELLED;
		} else if (!(role & MS_TF_RECV)) {
			if (__builtin_expect(role == MS_TR_IO, 0)) {
				f = MS_TF_LOCAL;
				rb = ms_status_bytes(s);
			} else {
				/* A send, a collective, a one-sided operation (no flag). */
				f = (unsigned)role & MS_TF_ALLMSG;
				recv = 0;
			}
		} else {
			f = (unsigned)role | MS_TF_LOCAL;
			rp = s->MPI_SOURCE >= 0 ? s->MPI_SOURCE : -1;
			rt = s->MPI_TAG;
			rb = rp >= 0 ? ms_status_bytes(s) : 0;
		}
		uint32_t off = (uint32_t)(p - tb->cur_ev);
		if (__builtin_expect((uint64_t)((int64_t)((uint64_t)h << 8) >> 8) != (uint64_t)h || off > lim, 0)) {
			ms_tcpls_close(tb, at, off, cnt, fn, now);
			if (off > lim) {
				/* The buffer is full: hand it over. */
				ms_trace_swap(tb);
			} else {
				/* Not in 56 bits: a record of its own. */
				ms_troom(tb);
				ms_tcpl(tb, now, fn | MS_TK_COMPLETE << 10 | f << 27, h, rb, rp, rt);
				ms_troom(tb);
			}
			/* Go on in a new record. */
			at = tb->n, p = tb->cur_ev + at + MS_TCPLS_HEAD, cnt = 0;
			rpeer = -1, rtag = -1, rbytes = 0;
			if ((uint64_t)((int64_t)((uint64_t)h << 8) >> 8) != (uint64_t)h)
				continue;
		}
		uint64_t e = ((uint64_t)h & MS_TCPLS_REQ) | (uint64_t)f << 56;
		cnt++;
		if (recv) {
			p = ms_tcpls_recv(p, e, rp, rt, rb, &rpeer, &rtag, &rbytes);
			continue;
		}
		__builtin_memcpy(p, &e, 8);
		p += 8;
	}
	ms_tcpls_close(tb, at, (uint32_t)(p - tb->cur_ev), cnt, fn, now);
}

/* ms_tcpls_pre writes the completions record whose entries
 * ms_trace_saveall made (tb->pent, cnt of them), split where
 * ms_trace_cpls's loop splits it: an entry begins at most at cap +
 * MS_TMAX - MS_TCPLS_ENTRY_MAX, and the rest goes on in a new record in the
 * next buffer. The same bytes as that loop's. */
static void ms_tcpls_pre(ms_tbuf *tb, unsigned fn, uint64_t now, unsigned cnt)
{
	ms_troom(tb);
	const uint32_t lim = tb->cap + (uint32_t)MS_TMAX - MS_TCPLS_ENTRY_MAX;
	for (unsigned k = 0; k < cnt;) {
		uint32_t at = tb->n;
		unsigned fit = at + MS_TCPLS_HEAD <= lim ? (lim - at - MS_TCPLS_HEAD) / 8 + 1 : 0;
		if (fit == 0) {
			ms_trace_swap(tb);
			continue;
		}
		if (fit > cnt - k)
			fit = cnt - k;
		memcpy(tb->cur_ev + at + MS_TCPLS_HEAD, tb->pent + k, (size_t)fit * 8);
		ms_tcpls_close(tb, at, at + MS_TCPLS_HEAD + fit * 8, fit, fn, now);
		k += fit;
	}
}

/* ms_trace_done records what a completion call of several requests
 * finished (one request: ms_trace_done1, trace.h). */
void ms_trace_done(unsigned fn, uint64_t t1, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st)
{
	ms_tbuf *tb = ms_ttls;
	if (tb == NULL || (flag && !*flag))
		return;
	switch (kind) {
	case MS_TC_ALL:
		if (tb->npre) {
			/* The entries made before the call (ms_trace_saveall):
			 * every request completed, none cancelled. */
			unsigned cnt = tb->npre - 1;
			tb->npre = 0;
			if (cnt)
				ms_tcpls_pre(tb, fn, t1, cnt);
			return;
		}
		ms_trace_cpls(tb, fn, t1, n, NULL, st);
		break;
	case MS_TC_ANY:
		if (idx && *idx != MPI_UNDEFINED)
			ms_trace_cpl(tb, fn, t1, *idx, st);
		break;
	case MS_TC_SOME:
		if (idx && *idx != MPI_UNDEFINED)
			ms_trace_cpls(tb, fn, t1, *idx, indices, st);
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
	ms_troom(tb);
	ms_tput(tb, ms_now(), 0, 0, id | (unsigned)kind << 10, 0, 0, 0, 0, -1, -1, -1, -1);
}

/* ms_trace_post records a persistent request started by the call that
 * follows (MPI_Start, MPI_Startall): kind MS_TF_SEND or MS_TF_RECV, a
 * message as it was set up (peer as an MPI_COMM_WORLD rank); or
 * MS_TF_COLL, a persistent collective, fn its _init function, tag its
 * root in cm, bytes its byte count. */
void ms_trace_post(unsigned fn, uint64_t t0, const ms_comm *cm, unsigned kind, int peer, int tag, int64_t bytes, uintptr_t req)
{
	/* A persistent request's completion takes its role from the
	 * persistent table: no stale role of a freed request that had its
	 * handle, and no MS_TR_IDLE (ms_preq_start has marked it active),
	 * whether or not a buffer takes the event. */
	ms_trole_note(req, 0);
	ms_tbuf *tb = ms_tb();
	if (tb == NULL)
		return;
	ms_troom(tb);
	unsigned c = ms_tcomm(cm);
	uint32_t k = fn | MS_TK_POST << 10 | (c | (kind | MS_TF_REQ) << 11) << 16;
	if (kind == MS_TF_COLL) {
		ms_tput(tb, t0, 0, 0, k, 1, req, bytes, 0, -1, tag, -1, -1);
		return;
	}
	int32_t w = peer == MPI_PROC_NULL ? -1 : ms_tworld(cm, peer);
	if (kind == MS_TF_SEND)
		ms_tput(tb, t0, 0, 0, k, 1, req, bytes, 0, w, tag, -1, -1);
	else
		ms_tput(tb, t0, 0, 0, k, 1, req, 0, bytes, -1, -1, w, tag);
}

/* ---- windows and files (one-sided and MPI-IO calls) ---- */

#define MS_TWIN_BITS 10
#define MS_TFILES_MAX 1024 /* files named per rank (ms_tfile_name) */
static ms_twin ms_twins[1u << MS_TWIN_BITS], ms_tfiles[1u << MS_TWIN_BITS];
static int ms_twin_next, ms_tfile_next;
static char *ms_tfile_names[MS_TFILES_MAX];
static pthread_mutex_t ms_twin_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned ms_twin_slot(uintptr_t h) { return (unsigned)((uint64_t)h * 0x9E3779B97F4A7C15ull >> (64 - MS_TWIN_BITS)); }

/* ms_tobj_add enters handle h in table tab (open addressing; a freed
 * entry is reused) with the next id; NULL when the table is full. */
static ms_twin *ms_tobj_add(ms_twin *tab, int *next, uintptr_t h, const ms_comm *cm)
{
	if (h <= 1)
		return NULL;
	ms_twin *e = NULL;
	pthread_mutex_lock(&ms_twin_lock);
	unsigned i = ms_twin_slot(h);
	for (unsigned n = 0; n < (1u << MS_TWIN_BITS); n++, i = (i + 1) & ((1u << MS_TWIN_BITS) - 1)) {
		if (tab[i].h <= 1 || tab[i].h == h) {
			e = &tab[i];
			e->id = (*next)++;
			e->cm = cm;
			e->grp = MPI_GROUP_NULL;
			__atomic_store_n(&e->h, h, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&ms_twin_lock);
	return e;
}

static ms_twin *ms_tobj_of(ms_twin *tab, uintptr_t h)
{
	unsigned i = ms_twin_slot(h);
	for (unsigned n = 0; n < (1u << MS_TWIN_BITS); n++, i = (i + 1) & ((1u << MS_TWIN_BITS) - 1)) {
		uintptr_t x = __atomic_load_n(&tab[i].h, __ATOMIC_ACQUIRE);
		if (x == 0)
			return NULL;
		if (x == h)
			return &tab[i];
	}
	return NULL;
}

ms_twin *ms_twin_created(MPI_Win w, const ms_comm *cm)
{
	ms_twin *e = ms_tobj_add(ms_twins, &ms_twin_next, (uintptr_t)w, cm);
	if (e && cm) {
		MPI_Group g;
		if (PMPI_Win_get_group(w, &g) == MPI_SUCCESS)
			e->grp = g;
	}
	return e;
}

ms_twin *ms_twin_of(MPI_Win w) { return w == MPI_WIN_NULL ? NULL : ms_tobj_of(ms_twins, (uintptr_t)w); }

void ms_twin_freed(ms_twin *e)
{
	if (e == NULL)
		return;
	if (e->grp != MPI_GROUP_NULL)
		PMPI_Group_free(&e->grp);
	__atomic_store_n(&e->h, 1, __ATOMIC_RELEASE);
}

ms_twin *ms_tfile_opened(MPI_File f, const ms_comm *cm, const char *name, int amode)
{
	(void)amode;
	ms_twin *e = ms_tobj_add(ms_tfiles, &ms_tfile_next, (uintptr_t)f, cm);
	if (e && e->id < MS_TFILES_MAX && name && ms_tfile_names[e->id] == NULL)
		ms_tfile_names[e->id] = strdup(name);
	return e;
}

ms_twin *ms_tfile_of(MPI_File f) { return f == MPI_FILE_NULL ? NULL : ms_tobj_of(ms_tfiles, (uintptr_t)f); }

void ms_tfile_closed(ms_twin *e)
{
	if (e)
		__atomic_store_n(&e->h, 1, __ATOMIC_RELEASE);
}

/* ms_tgroup_mask sets the bits of group g's members, as ranks of window
 * w's communicator (0-63 in lo, 64-127 in hi), and returns g's size (-1:
 * not known). */
static int ms_tgroup_mask(const ms_twin *w, MPI_Group g, int64_t *lo, int64_t *hi)
{
	int n = 0;
	*lo = *hi = 0;
	if (g == MPI_GROUP_NULL || w == NULL || w->grp == MPI_GROUP_NULL || PMPI_Group_size(g, &n) != MPI_SUCCESS)
		return -1;
	int in[128], out[128];
	int k = n < 128 ? n : 128;
	for (int i = 0; i < k; i++)
		in[i] = i;
	if (k > 0 && PMPI_Group_translate_ranks(g, k, in, w->grp, out) != MPI_SUCCESS)
		return -1;
	for (int i = 0; i < k; i++) {
		if (out[i] >= 0 && out[i] < 64)
			*lo |= (int64_t)((uint64_t)1 << out[i]);
		else if (out[i] >= 64 && out[i] < 128)
			*hi |= (int64_t)((uint64_t)1 << (out[i] - 64));
	}
	return n;
}

/* ms_trace_obj stores a one-sided or I/O call's event (kind MS_TK_RMA,
 * MS_TK_IO): stag the object's id, comm its communicator; a request a
 * nonblocking operation creates is noted with role (ms_trole_note). A
 * failed call is a plain call. */
static void ms_trace_obj(ms_thread *t, unsigned kind, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok,
			 const ms_twin *o, int32_t speer, int64_t sbytes, int64_t rbytes, int32_t rtag,
			 const MPI_Request *req, unsigned role)
{
	ms_tbuf *tb = t->tb;
	if (__builtin_expect(ms_tfull(tb) || tb->dfn, 0)) {
		tb = ms_trace_slow(t); /* writes the deferred event */
		if (tb == NULL)
			return;
	}
	if (!ok || o == NULL) {
		ms_trace_ev(tb, fn, pc, t0, t1, 0, NULL, 0, -1, -1, -1, -1, 0, NULL, NULL);
		return;
	}
	unsigned c = ms_tcomm(o->cm);
	int hasreq = req != NULL;
	uint64_t rq = hasreq ? (uint64_t)(uintptr_t)*req : 0;
	if (hasreq)
		ms_trole_note((uintptr_t)rq, role);
	ms_tput(tb, t0, t1 - t0, (uint64_t)(uintptr_t)pc, fn | kind << 10 | (c | (unsigned)(hasreq ? MS_TF_REQ : 0) << 11) << 16,
		hasreq, rq, sbytes, rbytes, speer, o->id, -1, rtag);
}

/* ms_trace_rma records a one-sided call on window w: target (a rank of
 * the window's communicator, -1 none), bytes sent and received, info (the
 * lock type of MPI_Win_lock, else -1), grp (MPI_Win_post/start: its
 * members as bits, its size as info), the request of MPI_Rput... */
void ms_trace_rma(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *w, int target,
		  int64_t sbytes, int64_t rbytes, int info, MPI_Group grp, const MPI_Request *req)
{
	int32_t peer = -1;
	if (w && target >= 0 && target != MPI_PROC_NULL)
		peer = w->cm ? ms_tworld(w->cm, target) : target;
	if (grp != MPI_GROUP_NULL)
		info = ms_tgroup_mask(w, grp, &sbytes, &rbytes);
	ms_trace_obj(t, MS_TK_RMA, fn, pc, t0, t1, ok, w, peer, sbytes, rbytes, info, req, MS_TR_RMA);
}

/* ms_trace_io records an MPI-IO call on file f: bytes written and read
 * (as requested), info (MPI_File_open: its access mode), the request of
 * MPI_File_iread... */
void ms_trace_io(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *f,
		 int64_t sbytes, int64_t rbytes, int info, const MPI_Request *req)
{
	ms_trace_obj(t, MS_TK_IO, fn, pc, t0, t1, ok, f, -1, sbytes, rbytes, info, req, MS_TR_IO);
}

/* ms_tmsg_note keeps the communicator of message m (MPI_Mprobe,
 * MPI_Improbe) for its MPI_Mrecv/MPI_Imrecv on this thread. */
void ms_tmsg_note(ms_thread *t, MPI_Message m, const ms_comm *cm)
{
	ms_tbuf *tb = t->tb;
	if (tb == &ms_tnone && (tb = ms_trace_slow(t)) == NULL)
		return;
	unsigned i = tb->nmsg++ % MS_TMSGS;
	tb->mh[i] = (uintptr_t)m;
	tb->mcm[i] = cm;
}

/* ms_tmsg_comm returns the communicator of message m, NULL when this
 * thread did not probe it while tracing. */
const ms_comm *ms_tmsg_comm(ms_thread *t, MPI_Message m)
{
	ms_tbuf *tb = t->tb;
	if (tb == &ms_tnone)
		return NULL;
	for (unsigned k = 0; k < MS_TMSGS && k < tb->nmsg; k++) {
		unsigned i = (tb->nmsg - 1 - k) % MS_TMSGS;
		if (tb->mh[i] == (uintptr_t)m)
			return tb->mcm[i];
	}
	return NULL;
}

/* ---- for Go ---- */

int ms_tfile_count(void)
{
	int n = __atomic_load_n(&ms_tfile_next, __ATOMIC_ACQUIRE);
	return n < MS_TFILES_MAX ? n : MS_TFILES_MAX;
}
const char *ms_tfile_name(int i) { return i >= 0 && i < MS_TFILES_MAX && ms_tfile_names[i] ? ms_tfile_names[i] : ""; }

ms_tbuf *ms_tbufs_head(void) { return __atomic_load_n(&ms_tbufs, __ATOMIC_ACQUIRE); }
void ms_trace_release(ms_tbuf *tb, int i) { __atomic_store_n(&tb->busy[i], 0, __ATOMIC_RELEASE); }
char *ms_trace_events(ms_tbuf *tb, int i) { return tb->ev[i]; }

/* ms_trace_wait blocks the writer until a buffer is queued or
 * ms_trace_wake is called. */
void ms_trace_wait(void)
{
	while (sem_wait(&ms_tsem) != 0)
		;
}

void ms_trace_wake(void) { sem_post(&ms_tsem); }

/* ms_trace_pop takes every queued buffer, oldest first. */
ms_thand *ms_trace_pop(void)
{
	ms_thand *h = __atomic_exchange_n(&ms_tready, NULL, __ATOMIC_ACQUIRE), *rev = NULL;
	while (h) {
		ms_thand *next = h->next;
		h->next = rev;
		rev = h;
		h = next;
	}
	return rev;
}

/* ms_trace_hand_all queues every thread's partial buffer (finalize: the
 * application's threads make no more MPI calls). */
void ms_trace_hand_all(void)
{
	for (ms_tbuf *tb = ms_tbufs_head(); tb; tb = tb->next) {
		tb->fgen = (uint32_t)-1;
		ms_trace_swap(tb);
	}
}
/* ms_trace_set turns tracing on or off: the flag and each function's
 * byte (MS_TRACING), which stays 0 for an excluded function. */
void ms_trace_set(int on)
{
	for (int i = 0; i < ms_nfuncs && i < MS_MAXFUNCS; i++)
		__atomic_store_n(&ms_trace_fn[i], (unsigned char)(on && !ms_trace_excl[i]), __ATOMIC_RELAXED);
	__atomic_store_n(&ms_tracing, on, __ATOMIC_RELEASE);
}

/* ms_trace_exclude excludes function fn from the trace (Go, at MPI_Init,
 * before tracing starts). */
void ms_trace_exclude(int fn)
{
	if (fn >= 0 && fn < MS_MAXFUNCS)
		ms_trace_excl[fn] = 1;
}
void ms_trace_flushgen(void)
{
	__atomic_add_fetch(&ms_trace_fgen, 1, __ATOMIC_SEQ_CST);
	for (ms_tbuf *tb = ms_tbufs_head(); tb; tb = tb->next)
		__atomic_store_n(&tb->lim, 0, __ATOMIC_SEQ_CST);
}
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
