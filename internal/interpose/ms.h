/*
 * ms.h: mpiscope's C hot path, shared by the generated wrappers (zwrap_*.c),
 * the hand-written ones (special.c) and the runtime (hot.c).
 *
 * Per MPI call: two timestamps and an update of this thread's tables. No
 * malloc, no lock, no call into Go. Everything here is either inline or a
 * cold out-of-line path (first call of a thread, first use of a
 * communicator or datatype, reset).
 */
#ifndef MS_H
#define MS_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* Each generated MPI_X reaches its fast path, ms_on_MPI_X, by a tail call,
 * so that the fast path's return address is the callsite: GCC and Clang
 * make sibling calls when optimizing (cgo.go's CFLAGS: -O2), and
 * TestWrappersTailCall checks the built library. Unoptimized wrappers would
 * record every call at a site inside the library. */
#if !defined(__OPTIMIZE__)
#error "mpiscope's wrappers must be compiled with optimization (-O2): see ms.h"
#endif

#define MS_HIDDEN __attribute__((visibility("hidden")))
/* MS_INLINE: inlined into every wrapper even where the compiler's unit
 * growth limit would keep an out-of-line copy (the generated file is big). */
#define MS_INLINE static inline __attribute__((always_inline))

#define MS_MAXFUNCS 1024  /* function ids; the generator checks the count */
#define MS_SITE_BITS 14   /* 16384 (function, callsite, region, communicator, size bin) slots per thread */
#define MS_NBINS 64       /* log2 message-size bins */
#define MS_MAXCOMMS 1024  /* communicators followed per rank */
#define MS_MAXREGIONS 256 /* distinct region paths per rank */
#define MS_MAXEVENTS 256  /* distinct user-event texts per rank */
#define MS_RDEPTH 32      /* region nesting depth */
#define MS_TCACHE 64      /* datatype size cache entries per thread */

/* One record of the per-thread site table: everything a call updates is in
 * this one cache line (besides a message's peer counters). The key holds,
 * besides the function and region, the communicator and the message-size
 * bin, so that the per-function size histogram and the per-communicator
 * totals are sums over sites made at collection (cgo.go), not more lines
 * written per call. */
typedef struct ms_site {
	uint64_t pc;      /* return address of the call */
	uint64_t key;     /* ms_site_key: function, region, communicator, bin */
	uint64_t calls;
	uint64_t ticks;
	uint64_t min;
	uint64_t max;
	int64_t bytes;
	uint64_t pad;
} ms_site;

/* Site key fields: bits 0-15 function id, 16-31 region id, 32-47
 * communicator id + 1 (0: none), 48-55 size bin (MS_NOBIN: the function
 * moves no counted data). */
#define MS_NOBIN 0xff
_Static_assert(MS_MAXFUNCS <= 0x10000 && MS_MAXREGIONS <= 0x10000 && MS_MAXCOMMS < 0xffff && MS_NBINS < MS_NOBIN, "ms_site key fields");

typedef struct { uint64_t smsgs, sbytes, rmsgs, rbytes; } ms_peerstat;
typedef struct { uint64_t visits, ticks; } ms_regstat; /* a region's MPI time is summed from the site records (cgo.go) */

/* A communicator as the hot path sees it. */
typedef struct ms_comm {
	uintptr_t handle; /* 0 once freed */
	uint64_t kbits;   /* (id + 1) << 32: its field of a site key (ms_site_key) */
	int id;           /* index into ms_comm_meta */
	int size;         /* local group size */
	int rsize;        /* remote group size for intercommunicators, else size */
	int rank;         /* my rank in it */
	int *world;       /* peer rank -> MPI_COMM_WORLD rank; NULL: identity */
} ms_comm;

/* What Go reads about each communicator at the end. */
typedef struct {
	char key[96];
	char name[64];
	int size;
	int creator; /* function id, -1 unknown, -2 predefined */
} ms_comm_meta_t;

/* The fields every recorded call reads come first, in one cache line (the
 * struct is page-aligned): 64 bytes up to pcm. */
typedef struct ms_thread {
	int depth;        /* >0 while inside a recorded MPI call (>= MS_DEPTH_BUSY: a published call in progress); MS_DEPTH_RELAY: a relayed Fortran call (fortran.h). Written with MS_STORE: snapshots read it from other threads */
	uint32_t epoch;   /* reset epoch this thread's data belongs to (MS_EPOCH: flag bits 0) */
	struct ms_tbuf *tb; /* trace buffers (trace.h), NULL until the first traced call */
	/* The deferred record (ms_defer): function id + 1 (0: none), bytes,
	 * call site, duration, communicator. Its region is the current one:
	 * a region change records it first. */
	uint32_t pfn;
	uint64_t rkey;    /* innermost region (0 = none) << 16: its field of a site key (ms_site_key) */
	int64_t pbytes;
	uint64_t ppc, pdt;
	const struct ms_comm *pcm;
	/* The call in progress (ms_busy_args, MS_TIMED_BUSY): a call that may
	 * block publishes its callsite, communicator, peer (or root), tag and
	 * entry time here before its PMPI_ call, then its function in depth
	 * (MS_DEPTH_BUSY + id), so that a snapshot written meanwhile by
	 * another thread can count it and name it (ms_busy_read, hot.c).
	 * Plain stores on x86; nothing clears them: depth 0 says no call. */
	uint64_t bt0, bpc;
	uintptr_t bcomm;
	int32_t bpeer, btag;
	struct ms_comm *cmemo; /* the last communicator but MPI_COMM_WORLD a wrapper looked up (ms_comm_of) */
	int rdepth;
	uint32_t rstack[MS_RDEPTH];
	uint64_t rstart[MS_RDEPTH];
	uint64_t dropped, nsites;
	uint32_t tgen;
	struct { uintptr_t h; int64_t size; } tcache[MS_TCACHE];
	struct ms_site *last[MS_MAXFUNCS]; /* per function, the site it last recorded (&ms_nosite: none) */
	ms_site *sites;        /* 1 << MS_SITE_BITS */
	ms_peerstat *peers;    /* world size */
	ms_regstat *regions;   /* MS_MAXREGIONS */
	uint64_t *events;      /* MS_MAXEVENTS */
	struct ms_thread *next;
	int tid;
	size_t maplen;
} ms_thread;
_Static_assert(offsetof(ms_thread, pcm) + sizeof(void *) <= 64, "ms_thread: the hot fields span one cache line");

/* ms_region is the thread's innermost region (0: none). */
static inline uint32_t ms_region(const ms_thread *t) { return (uint32_t)(t->rkey >> 16); }

/* Generated tables (zwrap_<family>.c). */
extern const int ms_nfuncs;
extern const char *const ms_fn_names[];
extern const char *const ms_fn_classes[];

/* Runtime state (hot.c). */
/* Flags shared between threads are read and written with relaxed atomics:
 * plain moves on x86, and race-free for the C memory model (and TSan). */
#define MS_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define MS_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* ms_gate is the one word a generated wrapper tests, with its thread's
 * epoch and depth, to take its fast path (ms_fast):
 *   bit 0 (MS_G_OFF)    recording is off (before MPI_Init, Pcontrol(0),
 *                       after finalize or an internal error);
 *   bit 1 (MS_G_NOTSC)  timestamps come from clock_gettime, not the TSC
 *                       (x86 only: elsewhere the fast path reads ms_now);
 *   bit 2 (MS_G_PB)     the piggyback channel is on (piggyback.h): the
 *                       wrappers with a handler take their slow path. Set
 *                       once at MPI_Init; part of the epoch value that a
 *                       thread's epoch field copies, so the others keep
 *                       their fast path;
 *   bits 3-31           the reset epoch: Pcontrol(3) adds MS_G_EPOCH1, and
 *                       each thread clears its tables at its next call.
 * Its writers are cold (start, Pcontrol, finalize, abort, signals) and use
 * atomic read-modify-writes, so that none loses another's bit. */
#define MS_G_OFF 1u
#define MS_G_NOTSC 2u
#define MS_G_FLAGS 3u
#define MS_G_PB 4u
#define MS_G_EPOCH1 8u
MS_HIDDEN extern volatile uint32_t ms_gate;
MS_HIDDEN extern int ms_use_tsc;

/* ms_gate_set sets (on) or clears one flag bit of ms_gate: async-signal
 * safe. */
static inline void ms_gate_set(uint32_t bit, int on)
{
	if (on)
		__atomic_or_fetch(&ms_gate, bit, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(&ms_gate, ~bit, __ATOMIC_SEQ_CST);
}

/* MS_EPOCH is the current reset epoch: what a thread's epoch field holds
 * while its tables are current. */
#define MS_EPOCH() (MS_LOAD(ms_gate) & ~MS_G_FLAGS)
MS_HIDDEN extern volatile uint32_t ms_type_gen;
extern int ms_world_size, ms_world_rank;
MS_HIDDEN extern ms_comm ms_world_comm;
extern __thread ms_thread *ms_tls __attribute__((tls_model("initial-exec")));
extern ms_thread *volatile ms_threads;
extern ms_comm_meta_t ms_comm_meta[MS_MAXCOMMS];
extern volatile int ms_ncomms;

MS_HIDDEN ms_thread *ms_thread_new(void);
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

/* A generated wrapper calls PMPI_X through its pointer ms_p_X (MS_PMPI),
 * not through this library's PLT: one indirect jump, where the PLT makes
 * two (a jump to the PLT entry, which jumps through the GOT). The pointer
 * first holds a stub that calls PMPI_X the usual way and binds the pointer
 * with ms_bind. Binding at the first call, not at load (as -fno-plt would:
 * its GOT entries must all resolve when the library loads), keeps the
 * library loadable against an MPI library older than the header the
 * wrappers were made from, which lacks some PMPI_ functions.
 *
 * ms_bind stores in *slot the address of the function called name, looked
 * up as the dynamic linker binds this library's calls (dlsym RTLD_DEFAULT
 * from here: the global scope, then this library's own dependencies), or
 * fallback when there is none (a static executable): a stub with no
 * binding in it. Racing first calls store the same value. */
MS_HIDDEN void ms_bind(void *slot, const char *name, void *fallback);
MS_HIDDEN extern int ms_bound; /* bindings dlsym found (tests; racing first calls may each count) */
#define MS_PMPI(f) (__atomic_load_n(&ms_p_##f, __ATOMIC_RELAXED))

static inline uint64_t ms_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (__builtin_expect(ms_use_tsc, 1))
		return __rdtsc();
#endif
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* MS_TIMED_FAST is MS_TIMED on a wrapper's fast path, which ms_gate's
 * MS_G_NOTSC bit keeps off where the clock is not the TSC. */
#if defined(__x86_64__) || defined(__i386__)
#define MS_TIMED_FAST(t0, t1, stmt) do { t0 = __rdtsc(); stmt; t1 = __rdtsc(); } while (0)
#else
#define MS_TIMED_FAST(t0, t1, stmt) MS_TIMED(t0, t1, stmt)
#endif

/* MS_TIMED runs stmt between two timestamps, t0 and t1, testing the clock
 * source once for both (the call sits in each branch). */
#if defined(__x86_64__) || defined(__i386__)
#define MS_TIMED(t0, t1, stmt) do {                                    \
	if (__builtin_expect(ms_use_tsc, 1)) {                         \
		t0 = __rdtsc();                                        \
		stmt;                                                  \
		t1 = __rdtsc();                                        \
	} else {                                                       \
		t0 = ms_now();                                         \
		stmt;                                                  \
		t1 = ms_now();                                         \
	}                                                              \
} while (0)
#else
#define MS_TIMED(t0, t1, stmt) do { t0 = ms_now(); stmt; t1 = ms_now(); } while (0)
#endif

/* ms_thread.depth of a thread whose next wrapper is reached from a relayed
 * Fortran call: not inside a recorded call, but not on the fast path. */
#define MS_DEPTH_RELAY (-1)

/* A call that may block (the generator's list: blocking point-to-point
 * calls and collectives, waits, communicator creation, RMA
 * synchronization) publishes itself for snapshots, racily but safely:
 * ms_busy_args stores its callsite and communicator handle, and the
 * wrapper its peer (or root) and tag if it has them, before the first
 * timestamp; MS_TIMED_BUSY stores the entry time, then (release: after
 * the other fields) depth = MS_DEPTH_BUSY + function id, right before the
 * PMPI_ call (such a wrapper sets depth there only). Four to six plain
 * stores on x86, into the thread's second cache line, one fewer than
 * before; the call's end clears depth as before. ms_busy_read (hot.c)
 * reads them from the snapshot writer's thread. */
#define MS_DEPTH_BUSY 2

/* ms_busy_t is a call in progress as ms_busy_read (hot.c) reads it for Go. */
typedef struct {
	int fn;      /* function id */
	int comm;    /* communicator id (ms_comm_meta), -1 none or unknown */
	int peer;    /* MPI_COMM_WORLD rank of the peer or root; -1 none (or invalid), -2 MPI_ANY_SOURCE */
	int tag;     /* -1 MPI_ANY_TAG; meaningful only for functions with a tag (busyRoles, busy.go) */
	uint64_t t0; /* entry time, ticks */
	uint64_t pc; /* callsite */
	uint64_t kbits; /* the communicator's field of a site key */
} ms_busy_t;

/* ms_busy_args stores the callsite and communicator (0: none); a function
 * with a peer (or root) and a tag stores them after it, in bpeer and btag
 * (the reader knows which functions have them: busyRoles, busy.go). */
MS_INLINE void ms_busy_args(ms_thread *t, void *pc, uintptr_t comm)
{
	MS_STORE(t->bpc, (uint64_t)(uintptr_t)pc);
	MS_STORE(t->bcomm, comm);
}

#define MS_BUSY_T0(t, fn, t0) do {                                                    \
	MS_STORE((t)->bt0, t0);                                                       \
	__atomic_store_n(&(t)->depth, (int)(fn) + MS_DEPTH_BUSY, __ATOMIC_RELEASE);  \
} while (0)

/* MS_TIMED_BUSY and MS_TIMED_FAST_BUSY are MS_TIMED and MS_TIMED_FAST for
 * such a call (t its thread, fn its function id). */
#if defined(__x86_64__) || defined(__i386__)
#define MS_TIMED_FAST_BUSY(t, fn, t0, t1, stmt) do { t0 = __rdtsc(); MS_BUSY_T0(t, fn, t0); stmt; t1 = __rdtsc(); } while (0)
#define MS_TIMED_BUSY(t, fn, t0, t1, stmt) do {                        \
	if (__builtin_expect(ms_use_tsc, 1)) {                         \
		t0 = __rdtsc();                                        \
		MS_BUSY_T0(t, fn, t0);                                 \
		stmt;                                                  \
		t1 = __rdtsc();                                        \
	} else {                                                       \
		t0 = ms_now();                                         \
		MS_BUSY_T0(t, fn, t0);                                 \
		stmt;                                                  \
		t1 = ms_now();                                         \
	}                                                              \
} while (0)
#else
#define MS_TIMED_BUSY(t, fn, t0, t1, stmt) do { t0 = ms_now(); MS_BUSY_T0(t, fn, t0); stmt; t1 = ms_now(); } while (0)
#define MS_TIMED_FAST_BUSY(t, fn, t0, t1, stmt) MS_TIMED_BUSY(t, fn, t0, t1, stmt)
#endif

/* ms_enter returns this thread's state when the call is to be recorded, or
 * NULL: profiling off, not initialized, or nested inside a recorded call. */
static inline ms_thread *ms_enter(void)
{
	if (__builtin_expect(MS_LOAD(ms_gate) & MS_G_OFF, 0))
		return NULL;
	ms_thread *t = ms_tls;
	if (__builtin_expect(t == NULL, 0)) {
		t = ms_thread_new();
		if (t == NULL)
			return NULL;
	}
	if (t->depth > 0)
		return NULL;
	MS_STORE(t->depth, 1);
	return t;
}

/* ms_fast tells whether a generated wrapper takes its fast path, given
 * ms_tls and the value of ms_gate it has found without MS_G_OFF: a thread
 * exists, the clock is the TSC, the thread's tables belong to the current
 * epoch, and it is neither inside a recorded call nor reached from a
 * relayed Fortran call (MS_DEPTH_RELAY). One branch for what
 * ms_enter, MS_TIMED and ms_catch_up otherwise check one by one. */
MS_INLINE int ms_fast(const ms_thread *t, uint32_t g)
{
	return __builtin_expect(t != NULL && ((g ^ t->epoch) | (uint32_t)t->depth) == 0, 1);
}

/* The communicators a rank uses, by handle (hot.c): open addressing. */
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
 * ms_types_probe (hot.c); 0: not found, ms_tsize uses the cache. */
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

static inline void ms_peer_send(ms_thread *t, const ms_comm *cm, int peer, int64_t bytes)
{
	int w = ms_world_of(cm, peer);
	if (w < 0)
		return;
	t->peers[w].smsgs++;
	t->peers[w].sbytes += (uint64_t)bytes;
}

static inline void ms_peer_recv(ms_thread *t, const ms_comm *cm, int peer, int64_t bytes)
{
	int w = ms_world_of(cm, peer);
	if (w < 0)
		return;
	t->peers[w].rmsgs++;
	t->peers[w].rbytes += (uint64_t)bytes;
}

#include "trace.h" /* event tracing: ms_tracing, ms_trace_call... */

/* ms_record adds one call to the thread's tables. Inlined into every
 * wrapper (MS_INLINE): as an out-of-line call, with ms_tsize, it cost
 * MPICH's 2-rank MPI_Allreduce 9.5 ns more per call in profile mode
 * (median of 8 interleaved runs). */
/* ms_site_key is the key of a call's site record (fields above). */
MS_INLINE uint64_t ms_site_key(unsigned fn, const ms_thread *t, const ms_comm *cm, int64_t bytes)
{
	const uint64_t bin = bytes < 0 ? MS_NOBIN : bytes ? 64 - (unsigned)__builtin_clzll((uint64_t)bytes) : 0;
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

#endif
