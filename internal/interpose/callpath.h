/*
 * callpath.h: call paths (MPISCOPE_DEPTH > 1). A recorded call's site
 * record is keyed, instead of by its return address alone, by its call
 * path: up to MPISCOPE_DEPTH return addresses, the callsite first, then
 * the return address of each frame above it. Each thread interns its paths
 * in a table of its own (ms_paths, callpath.c), and the site record's pc
 * field holds MS_PATH_TAG | the path's index in that table: the site
 * table, the deferred record and the collection stay as they are.
 *
 * How a call reaches the capture, at depth > 1 only (ms_gate's MS_G_PATH
 * bit; at depth 1 nothing here runs and every wrapper keeps its fast path
 * unchanged):
 *   - MPI_X sees MS_G_PATH in the gate word it already tests and tail-calls
 *     ms_path_X (generated), whose frame is forced (frame pointer): it
 *     notes the application's stack pointer just after the call returns
 *     and its frame pointer (MS_PATH_NOTE, slot MS_PN_C), then calls the
 *     slow path ms_slow_X;
 *   - a Fortran entry notes its own caller's the same way (slot MS_PN_F)
 *     before it calls ms_slow_X or relays the call;
 *   - ms_slow_X, once the call is known to be recorded, asks ms_path_key
 *     for the key: ms_path_take checks a note against the callsite (the
 *     return address slot just below the noted stack pointer must hold
 *     it), walks up from there and interns the path.
 * So neither our wrappers' frames nor the MPI library's ever appear in a
 * path, and a note that does not match its callsite (a stale one, a
 * relayed call) only shortens the path to the callsite alone.
 *
 * Per call at depth > 1: the slow path's checks and the walk, which
 * follows the last path entered from the same callsite (ms_plast): while
 * the frames found equal that path's, each frame costs its loads and a
 * compare, its rule taken from the path (ms_unwind_hint). A call whose
 * path is that one, or the callsite's one before, is entered with no hash
 * and no probe; any other path is hashed and looked up in the thread's
 * table. No malloc, lock or call into Go (the table is mapped at a
 * thread's first path).
 */
#ifndef MS_CALLPATH_H
#define MS_CALLPATH_H

#include "ms.h"

#define MS_PATH_MAXDEPTH 32
#define MS_PATH_BITS 12                 /* 4096 paths per thread */
#define MS_PATH_FRAMES (1u << 16)       /* return addresses per thread, all paths */
#define MS_PATH_TAG (1ull << 63)        /* a site's pc: a path index of its thread */
#define MS_PATH_OTHER (1ull << 62)      /* with MS_PATH_TAG: the "other paths" bucket, the callsite in the low bits */

/* One interned path: frames[off .. off+n) of its table, their rules
 * (ms_unwind_hint's) in rules[off .. off+n); its first nfp frames are
 * reached from the first by frame-pointer steps. n == 0: empty. */
typedef struct ms_path {
	uint32_t hash, nfp;
	uint32_t off, n;
} ms_path;

/* The last two paths entered from one callsite (a set of ms_paths.last,
 * chosen by the callsite's hash): way 0 the most recent. pc 0: empty. */
#define MS_PLAST_BITS 8 /* 256 sets */
typedef struct ms_plast {
	uintptr_t pc[2];
	uint32_t idx[2];
} ms_plast;

/* A thread's path table: written by its thread only; read by the Go side at
 * collection (slots whose n is set, published with release). */
typedef struct ms_paths {
	const ms_thread *owner;
	struct ms_paths *next;
	uintptr_t stack_hi;     /* the thread's stack top (pthread_getattr_np), 0: unknown */
	uint32_t npaths, nframes;
	uint64_t other;         /* calls that went to the "other paths" bucket */
	uint64_t walks_short;   /* calls whose note did not match: path of the callsite alone */
	uint64_t hits;          /* calls whose path was their callsite's last (no hash, no probe) */
	ms_plast last[1u << MS_PLAST_BITS];
	ms_path slot[1u << MS_PATH_BITS];
	uintptr_t frames[MS_PATH_FRAMES];
	uint64_t rules[MS_PATH_FRAMES];
} ms_paths;

/* The application frame a wrapper of ours was entered from. */
typedef struct { uintptr_t sp, fp; } ms_pnote_t;
#define MS_PN_C 0 /* noted by ms_path_X (C entry) */
#define MS_PN_F 1 /* noted by a Fortran entry */
extern __thread ms_pnote_t ms_pnote[2] __attribute__((tls_model("initial-exec")));

MS_HIDDEN extern int ms_path_depth; /* MPISCOPE_DEPTH, set at start: 1 = off */

/* MPISCOPE_DEPTH=auto (the default): MS_PATH_AUTO_FP when the program's
 * own code keeps frame pointers (ms_unwind_main_fp: ms_path_auto_fp of
 * ms_path_auto_n functions judged), else 1. */
#define MS_PATH_AUTO 0
#define MS_PATH_AUTO_FP 4
extern int ms_path_auto_fp, ms_path_auto_n;

/* MS_PATH_NOTE records, in the function that uses it, where its caller's
 * frame is: its own frame (forced) holds the caller's frame pointer and,
 * above it, the return address. Only at depth > 1. */
#define MS_PATH_NOTE(slot) do {                                                   \
	if (__builtin_expect(MS_LOAD(ms_gate) & MS_G_PATH, 0)) {                  \
		uintptr_t *ms_fa_ = (uintptr_t *)__builtin_frame_address(0);      \
		ms_pnote[slot].sp = (uintptr_t)(ms_fa_ + 2);                      \
		ms_pnote[slot].fp = ms_fa_[0];                                    \
	}                                                                         \
} while (0)

/* MS_PATH_NOTE_AT is MS_PATH_NOTE from frame pointer fr, at depth > 1
 * (the lean ms_path_X, whose frame is forced by MS_PATH_FRAME: its frame
 * pointer, read where it is used; in a variable, GCC keeps a copy of it
 * across the PMPI_ call in a callee-saved register). */
#define MS_PATH_FRAME() ((const uintptr_t *)__builtin_frame_address(0))
#define MS_PATH_NOTE_AT(slot, fr) do {                                            \
	ms_pnote[slot].sp = (uintptr_t)((fr) + 2);                                \
	ms_pnote[slot].fp = (fr)[0];                                              \
} while (0)

MS_HIDDEN uint64_t ms_path_take(ms_thread *t, void *pc);

/* ms_path_key is the pc a wrapper's slow path records: the callsite, or at
 * depth > 1 its path (MS_PATH_TAG | index). */
MS_INLINE void *ms_path_key(ms_thread *t, void *pc)
{
	if (__builtin_expect(MS_LOAD(ms_gate) & MS_G_PATH, 0))
		return (void *)(uintptr_t)ms_path_take(t, pc);
	return pc;
}

/* ---- the lean fast path at depth > 1 (internal/wrapgen, lean.go) ----
 *
 * A function with the lean fast path has a lean ms_path_X too: MPI_X
 * sends it the call at depth > 1, it makes the call as ms_on_X does and,
 * after it, finds the call's path inline (ms_path_hit): the path of the
 * function's last call that frame-pointer steps alone reach (ms_thread,
 * plean), checked frame by frame as a walk checks it. Found: the path's
 * key, and the record goes on as at depth 1. Not found: the wrapper notes
 * the application's frame (ms_pnote) and hands the call over to
 * ms_fin_X through ms_path_handover, which takes the path the general way
 * (ms_path_lean: ms_path_take, which may decode rules and intern a new
 * path) and makes it the function's plean when ms_path_hit can follow
 * it. */

/* ms_path_hit is the key of the call whose callsite is ra and whose
 * wrapper's frame is fr (its frame pointer: fr[0] the application's rbp,
 * fr + 2 its stack pointer once the call returns), when its path is
 * function fn's plean, else NULL. Per frame, as ms_unwind_hint checks a
 * frame-pointer step: the rbp inside the thread's stack (at or above the
 * frame below, at most its top - 16), the return address above it the
 * path's (so code: it was proved code when the path was entered); nothing
 * stored. A stack pointer below the thread's stack (a signal handler's
 * own stack) finds nothing. */
MS_INLINE void *ms_path_hit(const ms_thread *t, unsigned fn, void *ra, const uintptr_t *fr)
{
	const ms_plean *l = &t->plean[fn];
	if (__builtin_expect(l->pc != (uintptr_t)ra, 0))
		return NULL;
	uintptr_t sp = (uintptr_t)(fr + 2), fp = fr[0];
	if (__builtin_expect(sp < t->plo, 0))
		return NULL;
	const uintptr_t top = t->ptop;
	const uintptr_t *const end = l->end;
	intptr_t k = l->k; /* < 0: a plean is as deep as the depth, at least 2 */
	do {
		if (fp < sp || fp > top || ((const uintptr_t *)fp)[1] != end[k])
			return NULL;
		sp = fp + 16;
		fp = ((const uintptr_t *)fp)[0];
	} while (++k != 0);
	const uint64_t key = l->key;
	if (!(key & MS_PATH_TAG))
		__builtin_unreachable(); /* a plean with a pc has a path's key: no NULL test */
	return (void *)(uintptr_t)key;
}

MS_HIDDEN uint64_t ms_path_lean(ms_thread *t, unsigned fn, void *pc);

/* ms_path_handover hands a call that the lean ms_path_X of function fn
 * did not find the path of over to its ms_fin_X (fin), with the call's
 * path taken the general way (ms_path_lean: the note is in ms_pnote) for
 * its callsite pc. Out of line, reached by a tail call: ms_fin_X stays
 * as at depth 1. */
typedef int (*ms_fin_fn)(ms_thread *t, int rc, uint64_t t1, void *pc);
MS_HIDDEN int ms_path_handover(ms_thread *t, int rc, uint64_t t1, void *pc, unsigned fn, ms_fin_fn fin);

/* For Go (callpath_cgo.go). depth: 1 to MS_PATH_MAXDEPTH, or
 * MS_PATH_AUTO. */
void ms_path_setup(int depth);
ms_paths *ms_paths_head(void);
const uintptr_t *ms_path_frames(const ms_paths *p, uint32_t i, uint32_t *n);

#endif
