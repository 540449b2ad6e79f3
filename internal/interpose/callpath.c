//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * callpath.c: call paths (callpath.h): the depth set at start, each
 * thread's path table, and the capture of a call's path: the walk up the
 * application's stack from the frame a wrapper noted, and the interning.
 */
#define _GNU_SOURCE
#include "api.h"
#include "callpath.h"
#include "unwind.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

int ms_path_depth = 1;
__thread ms_pnote_t ms_pnote[2] __attribute__((tls_model("initial-exec")));
static ms_paths *volatile ms_paths_list;
static __thread ms_paths *ms_ptls __attribute__((tls_model("initial-exec")));
static __thread int ms_ptls_failed __attribute__((tls_model("initial-exec")));


void ms_path_setup(int depth)
{
	if (depth < 1)
		depth = 1;
	if (depth > MS_PATH_MAXDEPTH)
		depth = MS_PATH_MAXDEPTH;
	ms_path_depth = depth;
	if (depth > 1)
		ms_unwind_init(); /* cold: the objects' call-frame information, this thread's stack bounds */
	ms_gate_set(MS_G_PATH, depth > 1);
}

/* ms_paths_new maps the calling thread's table (cold: a thread's first
 * path). Zero pages from mmap: only the pages used cost memory. */
static ms_paths *ms_paths_new(ms_thread *t)
{
	if (ms_ptls_failed)
		return NULL;
	void *m = mmap(NULL, sizeof(ms_paths), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		ms_ptls_failed = 1;
		return NULL;
	}
	ms_paths *p = m;
	p->owner = t;
	pthread_attr_t a;
	if (pthread_getattr_np(pthread_self(), &a) == 0) {
		void *lo = NULL;
		size_t sz = 0;
		if (pthread_attr_getstack(&a, &lo, &sz) == 0 && lo != NULL)
			p->stack_hi = (uintptr_t)lo + sz;
		pthread_attr_destroy(&a);
	}
	ms_paths *head = __atomic_load_n(&ms_paths_list, __ATOMIC_RELAXED);
	do
		p->next = head;
	while (!__atomic_compare_exchange_n(&ms_paths_list, &head, p, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	ms_ptls = p;
	return p;
}

static inline uint64_t ms_path_hash(const uintptr_t *f, int n)
{
	uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < n; i++)
		h = (h ^ f[i]) * 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

uint64_t ms_path_take(ms_thread *t, void *pcv)
{
	const uintptr_t pc = (uintptr_t)pcv;
	ms_paths *p = ms_ptls;
	if (__builtin_expect(p == NULL, 0) && (p = ms_paths_new(t)) == NULL)
		return pc;
	/* Our own frame bounds the stack from below: the application's
	 * frames are above it. */
	const uintptr_t lo = (uintptr_t)__builtin_frame_address(0);
	const uintptr_t hi = p->stack_hi ? p->stack_hi : lo + ((uintptr_t)64 << 20);
	uintptr_t f[MS_PATH_MAXDEPTH];
	int n = 0;
	for (int s = 0; s < 2 && n == 0; s++) {
		uintptr_t sp = ms_pnote[s].sp;
		if (sp <= lo + 8 || sp > hi || (sp & 7) != 0 || ((const uintptr_t *)sp)[-1] != pc)
			continue;
		uintptr_t fp = ms_pnote[s].fp;
		n = ms_unwind(pc, sp, fp, f, ms_path_depth);
	}
	ms_pnote[0].sp = ms_pnote[1].sp = 0;
	if (n <= 0) {
		p->walks_short++;
		f[0] = pc;
		n = 1;
	}
	if (n > ms_path_depth)
		n = ms_path_depth;
	const uint64_t h = ms_path_hash(f, n);
	const uint32_t mask = (1u << MS_PATH_BITS) - 1;
	for (uint32_t i = (uint32_t)(h >> (64 - MS_PATH_BITS)), k = 0; k <= mask; k++, i = (i + 1) & mask) {
		ms_path *e = &p->slot[i];
		uint32_t en = e->n;
		if (en == 0) {
			/* A new path: a quarter of the slots stay free (short
			 * probes); beyond that, or with the frames full, the
			 * "other paths" bucket keeps the callsite. */
			if (p->npaths >= (mask + 1) / 4 * 3 || p->nframes + (uint32_t)n > MS_PATH_FRAMES)
				break;
			memcpy(&p->frames[p->nframes], f, (size_t)n * sizeof f[0]);
			e->hash = h;
			e->off = p->nframes;
			p->nframes += (uint32_t)n;
			p->npaths++;
			__atomic_store_n(&e->n, (uint32_t)n, __ATOMIC_RELEASE);
			return MS_PATH_TAG | i;
		}
		if (e->hash == h && en == (uint32_t)n && memcmp(&p->frames[e->off], f, (size_t)n * sizeof f[0]) == 0)
			return MS_PATH_TAG | i;
	}
	p->other++;
	return MS_PATH_TAG | MS_PATH_OTHER | (pc & (MS_PATH_OTHER - 1));
}

/* ---- for Go (callpath_cgo.go) ---- */

ms_paths *ms_paths_head(void) { return __atomic_load_n(&ms_paths_list, __ATOMIC_ACQUIRE); }

const uintptr_t *ms_path_frames(const ms_paths *p, uint32_t i, uint32_t *n)
{
	*n = 0;
	if (i >= (1u << MS_PATH_BITS))
		return NULL;
	uint32_t en = __atomic_load_n(&p->slot[i].n, __ATOMIC_ACQUIRE);
	if (en == 0)
		return NULL;
	*n = en;
	return &p->frames[p->slot[i].off];
}
