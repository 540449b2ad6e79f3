/*
 * profile.h: profiling in the C hot path (profile.c holds its cold
 * parts). Included by ms.h. A recorded call adds itself to its thread's
 * site table (ms_record, or ms_defer for a call that completes receives),
 * keyed by function, callsite, region, communicator and message-size bin;
 * its communicator comes from a per-rank cache by handle, its bytes from
 * datatype sizes known without a call into MPI, and a message's peer
 * counts go to the thread's peer table. Persistent requests and the time
 * with recording off are accounted here too.
 */
#ifndef MS_PROFILE_H
#define MS_PROFILE_H

#include "ms.h"

/* Runtime state (profile.c). */
MS_HIDDEN extern volatile uint32_t ms_type_gen;
extern int ms_world_size, ms_world_rank;
MS_HIDDEN extern ms_comm ms_world_comm;
extern ms_comm_meta_t ms_comm_meta[MS_MAXCOMMS];
extern volatile int ms_ncomms;

MS_HIDDEN void ms_thread_reset(ms_thread *t);
MS_HIDDEN void ms_flush(ms_thread *t);
MS_HIDDEN int64_t ms_tsize_slow(ms_thread *t, MPI_Datatype d, unsigned i);
MS_HIDDEN ms_comm *ms_comm_lookup(MPI_Comm c);
MS_HIDDEN void ms_comm_created(MPI_Comm c, int fn);
MS_HIDDEN void ms_comm_freed(MPI_Comm c);
MS_HIDDEN void ms_types_changed(void);
MS_HIDDEN void ms_types_probe(void); /* at start: Open MPI datatype objects' size field (ms_tsize) */
MS_HIDDEN int64_t ms_sum_w(ms_thread *t, const int *counts, const MPI_Datatype *types, int n);
MS_HIDDEN int64_t ms_sum_wc(ms_thread *t, const MPI_Count *counts, const MPI_Datatype *types, int n);
MS_HIDDEN void ms_preq_init(MPI_Request r, ms_comm *cm, int64_t bytes, int speer, int rpeer, int tag, int cfn);
MS_HIDDEN int64_t ms_preq_start(ms_thread *t, unsigned fn, uint64_t t0, MPI_Request *r, int n);
MS_HIDDEN int ms_preq_done(uintptr_t h);
MS_HIDDEN void ms_preq_free(MPI_Request r);
MS_HIDDEN void ms_off_mark(int off, uint64_t now); /* recording turns off or on (Pcontrol, start) */
MS_HIDDEN void ms_off_reset(uint64_t now);
MS_HIDDEN void ms_last_clear(ms_thread *t); /* each function's last site forgotten (ms_record) */
MS_HIDDEN void ms_comm_init(void); /* at start: MPI_COMM_WORLD, MPI_COMM_SELF */
MS_HIDDEN const ms_comm *ms_comm_peek(uintptr_t h); /* the communicator of handle h, not added if new */

/* The communicators a rank uses, by handle (profile.c): open addressing. */
#define MS_CTAB_BITS 12
MS_HIDDEN extern ms_comm *volatile ms_ctab[1 << MS_CTAB_BITS];

MS_INLINE unsigned ms_chash(uintptr_t h)
{
	return (unsigned)((h * 0x9E3779B97F4A7C15ull) >> (64 - MS_CTAB_BITS));
}

/* ms_comm_get: a communicator found in its home slot costs no call; the
 * rest (collisions, first use) is ms_comm_lookup's. */
MS_INLINE ms_comm *ms_comm_get(MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return &ms_world_comm;
	if (c == MPI_COMM_NULL)
		return NULL;
	const uintptr_t h = (uintptr_t)c;
	ms_comm *e = __atomic_load_n(&ms_ctab[ms_chash(h)], __ATOMIC_ACQUIRE);
	if (__builtin_expect(e != NULL && MS_LOAD(e->handle) == h, 1))
		return e;
	return ms_comm_lookup(c);
}

/* ms_comm_of is ms_comm_get for a wrapper: the thread's last communicator
 * other than MPI_COMM_WORLD is tried before the table, so that calls on
 * one communicator find it with one compare (no hash). A freed
 * communicator's record has handle 0 and matches nothing; ms_nocomm (also
 * handle 0) stands in before the first. */
MS_HIDDEN extern ms_comm ms_nocomm;
MS_HIDDEN ms_comm *ms_comm_memo(ms_thread *t, MPI_Comm c);
MS_INLINE ms_comm *ms_comm_of(ms_thread *t, MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return &ms_world_comm;
	ms_comm *m = t->cmemo;
	if (__builtin_expect(MS_LOAD(m->handle) == (uintptr_t)c, 1))
		return m;
	return ms_comm_memo(t, c);
}

static inline int ms_comm_size(const ms_comm *cm) { return cm ? cm->size : 0; }
static inline int ms_comm_rsize(const ms_comm *cm) { return cm ? cm->rsize : 0; }
static inline int ms_comm_rank(const ms_comm *cm) { return cm ? cm->rank : 0; }

MS_INLINE int ms_world_of(const ms_comm *cm, int peer)
{
	if (cm == NULL || peer < 0 || peer >= cm->rsize)
		return -1;
	return cm->world ? cm->world[peer] : peer;
}

#ifdef MPICH
#define MS_MPICH_SIZE_OK(d, n) (((uint32_t)(d) >> 30) == 1 && ((uint32_t)(d) >> 8 & 0xff) == (n))
#define MS_MPICH_SIZES (MS_MPICH_SIZE_OK(MPI_BYTE, 1) && MS_MPICH_SIZE_OK(MPI_CHAR, 1) && MS_MPICH_SIZE_OK(MPI_INT, sizeof(int)) && \
			MS_MPICH_SIZE_OK(MPI_LONG, sizeof(long)) && MS_MPICH_SIZE_OK(MPI_DOUBLE, sizeof(double)) &&          \
			MS_MPICH_SIZE_OK(MPI_INT64_T, 8) && MS_MPICH_SIZE_OK(MPI_C_DOUBLE_COMPLEX, 16) && \
			((uint32_t)MPI_FLOAT_INT >> 30) != 1)
#endif

#ifdef OPEN_MPI
/* ms_type_size_off: the offset at which an Open MPI datatype object holds
 * its size in bytes (a size_t; not in mpi.h), found at start by
 * ms_types_probe (profile.c); 0: not found, ms_tsize uses the cache. */
MS_HIDDEN extern size_t ms_type_size_off;
#endif

MS_INLINE int64_t ms_tsize(ms_thread *t, MPI_Datatype d)
{
	uintptr_t h = (uintptr_t)d;
#ifdef OPEN_MPI
	/* Open MPI's handle is the datatype object: one load, no cache and
	 * no generation to check (a handle freed and reused is a new object
	 * with its own size). Only a successful call's datatype is read. */
	const size_t off = MS_LOAD(ms_type_size_off);
	if (__builtin_expect(off != 0, 1))
		return (int64_t)*(const size_t *)(h + off);
#endif
#ifdef MPICH
	/* MPICH's predefined datatypes, but for the pair types, are handles
	 * of kind "builtin" (bits 30-31 = 01) holding their size in bits
	 * 8-15: the values of its mpi.h. MS_MPICH_SIZES (a constant) checks
	 * that this mpi.h follows that encoding; if not, the branch goes. */
	if (MS_MPICH_SIZES && ((uint32_t)h >> 30) == 1)
		return (int64_t)(h >> 8 & 0xff);
#endif
	_Static_assert(MS_TCACHE == 64, "ms_tsize's hash gives 6 bits");
	unsigned i = (unsigned)(h * 0x9E3779B97F4A7C15ull >> 58); /* the product's top bits */
	if (__builtin_expect(t->tcache[i].h == h && t->tgen == MS_LOAD(ms_type_gen), 1))
		return t->tcache[i].size;
	return ms_tsize_slow(t, d, i);
}

#define MS_SUM(arr, n) __extension__({                       \
	int64_t ms_s_ = 0;                                   \
	int ms_n_ = (n);                                     \
	for (int ms_i_ = 0; ms_i_ < ms_n_; ms_i_++)          \
		ms_s_ += (int64_t)(arr)[ms_i_];              \
	ms_s_;                                               \
})

/* ms_cpeer_of is the slot of (cm, world peer w) in the thread's table of
 * traffic on communicators other than MPI_COMM_WORLD (ms.h), NULL when the
 * table is full (counted in dropped). Out of line: only messages on such
 * communicators reach it. */
MS_HIDDEN ms_peerstat *ms_cpeer_of(ms_thread *t, const ms_comm *cm, int w);

static inline void ms_peer_send(ms_thread *t, const ms_comm *cm, int peer, int64_t bytes)
{
	int w = ms_world_of(cm, peer);
	if (w < 0)
		return;
	t->peers[w].smsgs++;
	t->peers[w].sbytes += (uint64_t)bytes;
	if (cm != &ms_world_comm) {
		ms_peerstat *c = ms_cpeer_of(t, cm, w);
		if (c) {
			c->smsgs++;
			c->sbytes += (uint64_t)bytes;
		}
	}
}

static inline void ms_peer_recv(ms_thread *t, const ms_comm *cm, int peer, int64_t bytes)
{
	int w = ms_world_of(cm, peer);
	if (w < 0)
		return;
	t->peers[w].rmsgs++;
	t->peers[w].rbytes += (uint64_t)bytes;
	if (cm != &ms_world_comm) {
		ms_peerstat *c = ms_cpeer_of(t, cm, w);
		if (c) {
			c->rmsgs++;
			c->rbytes += (uint64_t)bytes;
		}
	}
}

/* ms_record adds one call to the thread's tables. Inlined into every
 * wrapper (MS_INLINE): as an out-of-line call, with ms_tsize, it cost
 * MPICH's 2-rank MPI_Allreduce 9.5 ns more per call in profile mode
 * (median of 8 interleaved runs). */
/* ms_site_key is the key of a call's site record (fields above). */
MS_INLINE uint64_t ms_site_key(unsigned fn, const ms_thread *t, const ms_comm *cm, int64_t bytes)
{
	/* The bin: 0 for 0 bytes, else 64 - clz(bytes) (1 byte: 1; 2-3: 2; ...),
	 * which is the index of the top bit of 2 x bytes + 1: one lea and one
	 * bsr, with no branch for 0. */
	const uint64_t bin = bytes < 0 ? MS_NOBIN : 63 - (unsigned)__builtin_clzll(2 * (uint64_t)bytes + 1);
	return fn | t->rkey | (cm ? cm->kbits : 0) | bin << 48;
}

/* ms_nosite stands in t->last for a function with no site yet, so that
 * the check needs no NULL test: its key matches no call (bits 56-63 of a
 * site key are 0). */
MS_HIDDEN extern const ms_site ms_nosite;

MS_INLINE void ms_record(ms_thread *t, unsigned fn, uint64_t k, uint64_t dt, int64_t bytes, const ms_comm *cm)
{
	const uint64_t key = ms_site_key(fn, t, cm, bytes);
	/* The function's last site first: its address is known before the
	 * key, so the check overlaps the key's computation; the hash and
	 * probe run when a function is called from another site. */
	ms_site *s = t->last[fn];
	if (__builtin_expect(s->pc != k || s->key != key, 0)) {
		const uint64_t mask = (1u << MS_SITE_BITS) - 1;
		uint64_t i = ((k ^ (key << 5)) * 0x9E3779B97F4A7C15ull) >> (64 - MS_SITE_BITS);
		for (uint64_t n = 0;; n++, i = (i + 1) & mask) {
			s = &t->sites[i];
			if (s->calls == 0) {
				s->pc = k;
				s->key = key;
				s->min = UINT64_MAX;
				t->nsites++;
				break;
			}
			if (s->pc == k && s->key == key)
				break;
			if (n > mask) {
				t->dropped++;
				return;
			}
		}
		t->last[fn] = s;
	}
	s->calls++;
	s->ticks += dt;
	if (dt < s->min)
		s->min = dt;
	if (dt > s->max)
		s->max = dt;
	if (bytes > 0)
		s->bytes += bytes;
}

/* ms_catch_up clears the thread's tables if a reset (Pcontrol(3)) came
 * since its last record (the wrappers' fast path has tested it in
 * ms_fast). */
MS_INLINE void ms_catch_up(ms_thread *t)
{
	if (__builtin_expect(t->epoch != MS_EPOCH(), 0))
		ms_thread_reset(t);
}

/* ms_settle readies the thread's tables for a record outside a wrapper
 * (a region change): caught up with a reset, the deferred record
 * written. */
MS_INLINE void ms_settle(ms_thread *t)
{
	ms_catch_up(t);
	if (t->pfn)
		ms_flush(t);
}

/* ms_leave_fast records one call and ends it, after the deferred record
 * if there is one: a wrapper's fast path, where ms_fast has checked the
 * epoch. bytes < 0: the function moves no counted data. */
MS_INLINE void ms_leave_fast(ms_thread *t, unsigned fn, void *pc, uint64_t dt, int64_t bytes, const ms_comm *cm)
{
	if (__builtin_expect(t->pfn != 0, 0))
		ms_flush(t);
	ms_record(t, fn, (uint64_t)(uintptr_t)pc, dt, bytes, cm);
	MS_STORE(t->depth, 0);
}

/* ms_defer_fast is ms_defer (below) on the fast path. */
MS_INLINE void ms_defer_fast(ms_thread *t, unsigned fn, void *pc, uint64_t dt, int64_t bytes, const ms_comm *cm)
{
	if (__builtin_expect(t->pfn != 0, 0))
		ms_flush(t);
	t->pfn = fn + 1;
	t->pbytes = bytes;
	t->ppc = (uint64_t)(uintptr_t)pc;
	t->pdt = dt;
	t->pcm = cm;
	MS_STORE(t->depth, 0);
}

/* ms_leave is ms_leave_fast anywhere else: a reset is applied first. */
MS_INLINE void ms_leave(ms_thread *t, unsigned fn, void *pc, uint64_t dt, int64_t bytes, const ms_comm *cm)
{
	ms_catch_up(t);
	ms_leave_fast(t, fn, pc, dt, bytes, cm);
}

/* ms_defer ends a call that completes receives (MPI_Recv, MPI_Wait...)
 * and keeps its record for the next recorded call's ms_leave, which comes
 * after that call's PMPI_ function has returned. An application typically
 * answers a receive with a send: the receive's exit and the send's entry
 * are on the message's critical path, and the send's exit is not (the
 * message is on its way). Deferring moves the table update off that path;
 * in a 2-rank ping-pong it was 2-9 ns per call (bench/progs/ab.c). A
 * second deferral in a row records the first one (ms_flush) first. Go
 * reads a record still deferred at collection (cgo.go). */
MS_INLINE void ms_defer(ms_thread *t, unsigned fn, void *pc, uint64_t dt, int64_t bytes, const ms_comm *cm)
{
	ms_catch_up(t);
	ms_defer_fast(t, fn, pc, dt, bytes, cm);
}


/* ---- the lean fast path (internal/wrapgen, lean.go) ----
 *
 * A lean wrapper keeps nothing but its thread in a register across its
 * PMPI_ call (its entry time and the arguments it needs after it are in
 * the thread's state, bt0 and fa), and after the call makes no call: each
 * step below either finds what it needs inline or tells the wrapper to
 * hand the call over to its generated ms_fin_X (a tail call), which does
 * the whole record the usual way (ms_comm_of, ms_tsize, ms_peer_send,
 * ms_leave_fast...). No step writes anything before the last one has
 * succeeded, so a hand-over records the call once. */

/* ms_comm_hit is ms_comm_of's inline part: the communicator when it is
 * MPI_COMM_WORLD or the thread's last one, else NULL (hand over). */
MS_INLINE ms_comm *ms_comm_hit(const ms_thread *t, MPI_Comm c)
{
	if (c == MPI_COMM_WORLD)
		return &ms_world_comm;
	ms_comm *m = t->cmemo;
	return __builtin_expect(MS_LOAD(m->handle) == (uintptr_t)c, 1) ? m : NULL;
}

/* ms_tsize_hit is ms_tsize without its call: a size it does not know sets
 * *miss (hand over). */
MS_INLINE int64_t ms_tsize_hit(const ms_thread *t, MPI_Datatype d, int *miss)
{
	uintptr_t h = (uintptr_t)d;
#ifdef OPEN_MPI
	const size_t off = MS_LOAD(ms_type_size_off);
	if (__builtin_expect(off != 0, 1))
		return (int64_t)*(const size_t *)(h + off);
#endif
#ifdef MPICH
	if (MS_MPICH_SIZES && ((uint32_t)h >> 30) == 1)
		return (int64_t)(h >> 8 & 0xff);
#endif
	unsigned i = (unsigned)(h * 0x9E3779B97F4A7C15ull >> 58); /* ms_tsize's slot */
	if (__builtin_expect(t->tcache[i].h == h && t->tgen == MS_LOAD(ms_type_gen), 1))
		return t->tcache[i].size;
	*miss = 1;
	return 0;
}

/* ms_cpeer_hit is the slot of (cm, world peer w) when it is in its home
 * slot of the thread's table (ms_cpeer_of's first probe), else NULL (hand
 * over). */
MS_INLINE ms_peerstat *ms_cpeer_hit(ms_thread *t, const ms_comm *cm, int w)
{
	const uint64_t key = cm->kbits | (uint32_t)w;
	ms_cpeer *c = &t->cpeers[(key * 0x9E3779B97F4A7C15ull) >> (64 - MS_CPEER_BITS)];
	return __builtin_expect(c->key == key, 1) ? &c->s : NULL;
}

/* ms_peer_note counts a message of bytes to (send) or from world peer w
 * (w < 0: none), and in c (ms_cpeer_hit) on a communicator other than
 * MPI_COMM_WORLD. */
MS_INLINE void ms_peer_note(ms_thread *t, int w, ms_peerstat *c, int64_t bytes, int send)
{
	if (w < 0)
		return;
	/* The branch between the two counters of a peer keeps GCC from
	 * pairing them in a vector register (six instructions for two). */
	if (send) {
		t->peers[w].sbytes += (uint64_t)bytes;
		if (c) {
			c->sbytes += (uint64_t)bytes;
			c->smsgs++;
		}
		t->peers[w].smsgs++;
	} else {
		t->peers[w].rbytes += (uint64_t)bytes;
		if (c) {
			c->rbytes += (uint64_t)bytes;
			c->rmsgs++;
		}
		t->peers[w].rmsgs++;
	}
}

/* ms_site_hit is the function's last site when the call (callsite pc, site
 * key) is its, else NULL (hand over: ms_record hashes and probes). */
MS_INLINE ms_site *ms_site_hit(const ms_thread *t, unsigned fn, void *pc, uint64_t key)
{
	ms_site *s = t->last[fn];
	return __builtin_expect(s->pc == (uint64_t)(uintptr_t)pc && s->key == key, 1) ? s : NULL;
}

/* ms_site_add adds one call to site s (ms_record's update). */
MS_INLINE void ms_site_add(ms_site *s, uint64_t dt, int64_t bytes)
{
	s->ticks += dt;
	if (dt < s->min)
		s->min = dt;
	if (dt > s->max)
		s->max = dt;
	s->calls++;
	if (bytes > 0)
		s->bytes += bytes;
}

/* ms_flush_rc ends a lean wrapper's call when a record was deferred: it
 * writes that record (ms_flush; after the call's own, which it does not
 * change: both are in the same region) and returns rc, by a tail call
 * that keeps the wrapper's frame empty. */
MS_HIDDEN int ms_flush_rc(ms_thread *t, int rc);

#endif
