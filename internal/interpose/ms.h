/*
 * ms.h: the core of mpiscope's C hot path, shared by the generated
 * wrappers (zwrap_*.c, zfwrap_*.c) and every room of the runtime: the
 * gate word (ms_gate), the clock (ms_now, MS_TIMED), each thread's state
 * (ms_thread) and its lookup (ms_enter, ms_fast), the binding of the
 * wrappers' PMPI_ pointers (MS_PMPI), and a blocking call's publication
 * for snapshots (MS_TIMED_BUSY). Its cold parts are in core.c. It
 * includes the hot parts of the other rooms: profile.h (site tables,
 * communicators, datatype sizes) and trace.h (event records).
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
#define MS_LEAN_ARGS 6    /* arguments a lean fast path keeps across its PMPI_ call (ms_thread.fa) */

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
/* Point-to-point traffic on communicators other than MPI_COMM_WORLD, per
 * (communicator, world peer): an open-addressed table of 1 << MS_CPEER_BITS
 * slots per thread, key (id + 1) << 32 | world peer, 0 empty. A message on
 * MPI_COMM_WORLD never touches it; a full table counts in dropped. */
#define MS_CPEER_BITS 12
typedef struct { uint64_t key; ms_peerstat s; } ms_cpeer;
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

/* A function's path for the lean fast path at depth > 1 (callpath.h,
 * ms_path_hit): its callsite pc, the return addresses above it end[k ..
 * 0) (k < 0: the path's frames 1 to n - 1, in its thread's table), and
 * its key, the pc its site records hold (MS_PATH_TAG | index). */
typedef struct ms_plean {
	uintptr_t pc;
	const uintptr_t *end;
	intptr_t k;
	uint64_t key;
} ms_plean;

/* The fields every recorded call reads come first, in one cache line (the
 * struct is page-aligned): 64 bytes up to pcm. */
typedef struct ms_thread {
	int depth;        /* >0 while inside a recorded MPI call (>= MS_DEPTH_BUSY: a published call in progress); MS_DEPTH_RELAY: a relayed Fortran call (fortran.h). Written with MS_STORE: snapshots read it from other threads */
	uint32_t epoch;   /* reset epoch this thread's data belongs to (MS_EPOCH: flag bits 0) */
	struct ms_tbuf *tb; /* trace buffers (trace.h), &ms_tnone until the first traced call */
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
	 * another thread can count it and name it (ms_busy_read, core.c).
	 * Plain stores on x86; nothing clears them: depth 0 says no call. */
	uint64_t bt0, bpc;
	uintptr_t bcomm;
	int32_t bpeer, btag;
	struct ms_comm *cmemo; /* the last communicator but MPI_COMM_WORLD a wrapper looked up (ms_comm_of) */
	/* The arguments a lean fast path (internal/wrapgen, lean.go) uses
	 * after its PMPI_ call, kept here across it (its entry time is in
	 * bt0): one store each, where a callee-saved register costs a push, a
	 * pop and a move. Only this thread reads them. */
	uint64_t fa[MS_LEAN_ARGS];
	int rdepth;
	uint32_t rstack[MS_RDEPTH];
	uint64_t rstart[MS_RDEPTH];
	uint64_t dropped, nsites;
	uint32_t tgen;
	struct { uintptr_t h; int64_t size; } tcache[MS_TCACHE];
	struct ms_site *last[MS_MAXFUNCS]; /* per function, the site it last recorded (&ms_nosite: none) */
	ms_site *sites;        /* 1 << MS_SITE_BITS */
	ms_peerstat *peers;    /* world size */
	ms_cpeer *cpeers;      /* 1 << MS_CPEER_BITS (ms_cpeer_of, profile.h) */
	ms_regstat *regions;   /* MS_MAXREGIONS */
	uint64_t *events;      /* MS_MAXEVENTS */
	struct ms_thread *next;
	int tid;
	size_t maplen;
	/* Call paths at depth > 1 (callpath.h, ms_path_hit): the thread's
	 * stack as a walk bounds it (plo: its bottom, ptop: its top - 16; set
	 * with the thread's path table) and, per function, the path of a
	 * recent call that frame-pointer steps alone follow (pc 0: none).
	 * Zero pages until call paths use them. */
	uintptr_t plo, ptop;
	ms_plean plean[MS_MAXFUNCS];
} ms_thread;
_Static_assert(offsetof(ms_thread, pcm) + sizeof(void *) <= 64, "ms_thread: the hot fields span one cache line");

/* ms_region is the thread's innermost region (0: none). */
static inline uint32_t ms_region(const ms_thread *t) { return (uint32_t)(t->rkey >> 16); }

/* Generated tables (zwrap_<family>.c). */
extern const int ms_nfuncs;
extern const char *const ms_fn_names[];
MS_HIDDEN int ms_fn_lookup(const char *name); /* chain.c: index in ms_fn_names, or -1 */
extern const char *const ms_fn_classes[];

/* Runtime state (core.c). */
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
 *                       also set while overhead compensation or the test
 *                       delay is on (compensate.h), so that every wrapper
 *                       takes its slow path, whose ms_enter applies them;
 *   bit 2 (MS_G_PB)     the piggyback channel is on (piggyback.h): the
 *                       wrappers with a handler take their slow path. Set
 *                       once at MPI_Init; part of the epoch value that a
 *                       thread's epoch field copies, so the others keep
 *                       their fast path;
 *   bit 3 (MS_G_PATH)   call paths are on (MPISCOPE_DEPTH > 1,
 *                       callpath.h): every wrapper goes to ms_path_X. Set
 *                       once at MPI_Init;
 *   bits 4-31           the reset epoch: Pcontrol(3) adds MS_G_EPOCH1, and
 *                       each thread clears its tables at its next call.
 * Its writers are cold (start, Pcontrol, finalize, abort, signals) and use
 * atomic read-modify-writes, so that none loses another's bit. */
#define MS_G_OFF 1u
#define MS_G_NOTSC 2u
#define MS_G_PB 4u
#define MS_G_PATH 8u
#define MS_G_FLAGS (MS_G_OFF | MS_G_NOTSC | MS_G_PATH)
#define MS_G_EPOCH1 16u
MS_HIDDEN extern volatile uint32_t ms_gate;
MS_HIDDEN extern int ms_use_tsc;

/* QMPI mode (qmpi.c, docs/stacking.md): MPICH calls mpiscope's QMPI
 * wrappers, which record while ms_qoff is 0; ms_gate keeps MS_G_OFF set so
 * that every MPI_X only passes its call on, and MS_G_OFF's writers set
 * ms_qoff instead. */
MS_HIDDEN extern int ms_qmpi_mode;
MS_HIDDEN extern volatile uint32_t ms_qoff;

/* ms_gate_set sets (on) or clears one flag bit of ms_gate: async-signal
 * safe. */
static inline void ms_gate_set(uint32_t bit, int on)
{
	if (bit == MS_G_OFF && __builtin_expect(MS_LOAD(ms_qmpi_mode), 0)) {
		MS_STORE(ms_qoff, (uint32_t)(on != 0));
		return;
	}
	if (on)
		__atomic_or_fetch(&ms_gate, bit, __ATOMIC_SEQ_CST);
	else
		__atomic_and_fetch(&ms_gate, ~bit, __ATOMIC_SEQ_CST);
}

/* MS_EPOCH is the current reset epoch: what a thread's epoch field holds
 * while its tables are current. */
#define MS_EPOCH() (MS_LOAD(ms_gate) & ~MS_G_FLAGS)
extern __thread ms_thread *ms_tls __attribute__((tls_model("initial-exec")));
extern ms_thread *volatile ms_threads;

MS_HIDDEN ms_thread *ms_thread_new(void);

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

/* MS_TICK_FAST is one timestamp on a wrapper's fast path (the lean one,
 * internal/wrapgen, lean.go, which keeps the first in ms_thread.bt0). */
#if defined(__x86_64__) || defined(__i386__)
#define MS_TICK_FAST() __rdtsc()
#else
#define MS_TICK_FAST() ms_now()
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

/* A call that may block (the generator's list, wrapgen's busyArgs:
 * blocking point-to-point calls and collectives, waits, communicator and
 * topology creation, RMA synchronization and window creation, blocking
 * MPI-IO, spawning and connecting) publishes itself for snapshots,
 * racily but safely: ms_busy_args stores its callsite and communicator
 * handle, and the wrapper its peer (or root) and tag if it has them,
 * before the first timestamp; MS_TIMED_BUSY stores the entry time, then
 * (release: after the other fields) depth = MS_DEPTH_BUSY + function id,
 * right before the PMPI_ call (such a wrapper sets depth there only).
 * Four to six plain stores on x86, into the thread's second cache line,
 * one fewer than before; the call's end clears depth as before.
 * ms_busy_read (core.c) reads them from the snapshot writer's thread. */
#define MS_DEPTH_BUSY 2

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

/* compensate.c: compensation or the test delay is on (ms_comp_enter: the
 * delay of a recorded call; MS_G_NOTSC then sends every wrapper here). */
MS_HIDDEN extern int ms_comp_on;
MS_HIDDEN void ms_comp_enter(void);

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
	if (__builtin_expect(ms_comp_on, 0))
		ms_comp_enter();
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

#include "profile.h" /* profiling: the site tables, communicators, datatype sizes */
#include "trace.h"   /* event tracing: ms_tracing, ms_trace_call... */

#endif
