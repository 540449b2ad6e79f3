//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * callpath.c: call paths (callpath.h): the depth set at start, each
 * thread's path table, and the capture of a call's path: the walk up the
 * application's stack from the frame a wrapper noted, and the interning.
 */
#define _GNU_SOURCE
#include "api.h"
#include "callpath.h"
#include "qmpi.h"
#include "unwind.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

int ms_path_depth = 1;
__thread ms_pnote_t ms_pnote[2] __attribute__((tls_model("initial-exec")));
static ms_paths *volatile ms_paths_list;
static __thread ms_paths *ms_ptls __attribute__((tls_model("initial-exec")));
static __thread int ms_ptls_failed __attribute__((tls_model("initial-exec")));


int ms_path_auto_fp, ms_path_auto_n;

void ms_path_setup(int depth)
{
	if (depth == MS_PATH_AUTO && ms_qmpi_wanted()) {
		/* QMPI mode records in the QMPI wrappers, which take no paths:
		 * the default must not refuse it (an explicit depth > 1 does). */
		ms_path_auto_n = -1;
		depth = 1;
	} else if (depth == MS_PATH_AUTO) {
		/* The default (docs/callpaths.md, "The default depth"): paths
		 * where they are cheap, i.e. where the program's own code keeps
		 * frame pointers (more than half of the functions judged). */
		ms_unwind_main_fp(&ms_path_auto_fp, &ms_path_auto_n);
		depth = ms_path_auto_n > 0 && 2 * ms_path_auto_fp > ms_path_auto_n ? MS_PATH_AUTO_FP : 1;
	}
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
		if (pthread_attr_getstack(&a, &lo, &sz) == 0 && lo != NULL) {
			p->stack_hi = (uintptr_t)lo + sz;
			/* ms_path_hit's bounds: as ms_path_take's below. */
			t->plo = (uintptr_t)lo;
			t->ptop = p->stack_hi - 16;
		}
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

/* ms_path_find returns the slot of path f[0..n) (rules r) in p's table,
 * entered if new; -1 when the table is full. */
static int64_t ms_path_find(ms_paths *p, const uintptr_t *f, const uint64_t *r, int n)
{
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
				return -1;
			memcpy(&p->frames[p->nframes], f, (size_t)n * sizeof f[0]);
			memcpy(&p->rules[p->nframes], r, (size_t)n * sizeof r[0]);
			uint32_t k = 1;
			while (k < (uint32_t)n && r[k - 1] == MS_UNWIND_RULE_FP)
				k++;
			e->hash = (uint32_t)h;
			e->nfp = k;
			e->off = p->nframes;
			p->nframes += (uint32_t)n;
			p->npaths++;
			__atomic_store_n(&e->n, (uint32_t)n, __ATOMIC_RELEASE);
			return i;
		}
		if (e->hash == (uint32_t)h && en == (uint32_t)n) {
			const uintptr_t *g = &p->frames[e->off];
			int j = 0;
			while (j < n && g[j] == f[j])
				j++;
			if (j == n)
				return i;
		}
	}
	return -1;
}

/* ms_path_walk is ms_path_take's general case: the walk from the note
 * (ms_unwind_hint, following the callsite's last path hp), then the path
 * found among the callsite's last two or in the table, or entered. */
static __attribute__((noinline)) uint64_t ms_path_walk(ms_paths *p, uintptr_t pc, uintptr_t lo, uintptr_t hi, ms_plast *c,
                                                       const ms_path *hp)
{
	uintptr_t f[MS_PATH_MAXDEPTH];
	uint64_t r[MS_PATH_MAXDEPTH];
	int n = 0, same = 0;
	const int nh = hp ? (int)hp->n : 0;
	for (int s = 0; s < 2 && n == 0; s++) {
		uintptr_t sp = ms_pnote[s].sp;
		if (sp <= lo + 8 || sp > hi || (sp & 7) != 0 || ((const uintptr_t *)sp)[-1] != pc)
			continue;
		uintptr_t fp = ms_pnote[s].fp;
		n = ms_unwind_hint(pc, sp, fp, f, r, ms_path_depth, hp ? &p->frames[hp->off] : NULL,
		                   hp ? &p->rules[hp->off] : NULL, nh, &same);
	}
	ms_pnote[0].sp = ms_pnote[1].sp = 0;
	if (n <= 0) {
		p->walks_short++;
		f[0] = pc;
		r[0] = 0; /* not known: a walk that follows this path looks it up */
		n = 1;
		same = nh >= 1 && p->frames[hp->off] == pc && nh == 1;
	}
	if (__builtin_expect(same == n && n == nh, 1)) {
		p->hits++;
		return MS_PATH_TAG | c->idx[0];
	}
	/* The callsite's path before the last? */
	if (c->pc[1] == pc) {
		const ms_path *e = &p->slot[c->idx[1]];
		if (e->n == (uint32_t)n) {
			const uintptr_t *g = &p->frames[e->off];
			int j = 0;
			while (j < n && g[j] == f[j])
				j++;
			if (j == n) {
				uint32_t i = c->idx[1];
				c->pc[1] = c->pc[0];
				c->idx[1] = c->idx[0];
				c->pc[0] = pc;
				c->idx[0] = i;
				p->hits++;
				return MS_PATH_TAG | i;
			}
		}
	}
	int64_t i = ms_path_find(p, f, r, n);
	if (i < 0) {
		p->other++;
		return MS_PATH_TAG | MS_PATH_OTHER | (pc & (MS_PATH_OTHER - 1));
	}
	c->pc[1] = c->pc[0];
	c->idx[1] = c->idx[0];
	c->pc[0] = pc;
	c->idx[0] = (uint32_t)i;
	return MS_PATH_TAG | (uint64_t)i;
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
	/* The callsite's last path: the hint the walk follows. */
	ms_plast *c = &p->last[(pc * 0x9E3779B97F4A7C15ull) >> (64 - MS_PLAST_BITS)];
	const ms_path *hp = c->pc[0] == pc ? &p->slot[c->idx[0]] : NULL;
	/* The common case: a call from the C entry (note 0) along that path,
	 * which reached the depth by frame-pointer steps alone. Its frames
	 * are checked as ms_unwind_hint checks them (each rbp inside the
	 * stack, above the frame before; the return address the path's, so
	 * code): per frame two loads and three compares, nothing stored. */
	uintptr_t sp = ms_pnote[0].sp;
	if (hp && hp->nfp == (uint32_t)ms_path_depth && p->stack_hi && sp > lo + 8 && sp <= hi && !(sp & 7) &&
	    ((const uintptr_t *)sp)[-1] == pc) {
		const uintptr_t *g = &p->frames[hp->off];
		const uintptr_t top = hi - 16;
		uintptr_t fp = ms_pnote[0].fp;
		uint32_t k = 1;
		while (k < hp->n && fp >= sp && fp <= top && ((const uintptr_t *)fp)[1] == g[k]) {
			sp = fp + 16;
			fp = ((const uintptr_t *)fp)[0];
			k++;
		}
		if (k == hp->n) {
			ms_pnote[0].sp = ms_pnote[1].sp = 0;
			p->hits++;
			return MS_PATH_TAG | c->idx[0];
		}
	}
	return ms_path_walk(p, pc, lo, hi, c, hp);
}

/* ms_path_lean is ms_path_take for a call that a lean ms_path_X handed
 * over (callpath.h, ms_path_handover): its note is in ms_pnote. The path found
 * becomes function fn's plean when ms_path_hit can follow it: a path of
 * the thread's table (not the "other paths" bucket) as deep as the depth,
 * reached by frame-pointer steps alone (ms_path_take's own fast case). */
uint64_t ms_path_lean(ms_thread *t, unsigned fn, void *pc)
{
	const uint64_t k = ms_path_take(t, pc);
	const ms_paths *p = ms_ptls;
	if (p == NULL || p->stack_hi == 0 || (k & (MS_PATH_TAG | MS_PATH_OTHER)) != MS_PATH_TAG || fn >= MS_MAXFUNCS)
		return k;
	const ms_path *e = &p->slot[(uint32_t)k];
	if (e->n != (uint32_t)ms_path_depth || e->nfp != e->n)
		return k;
	ms_plean *l = &t->plean[fn];
	l->pc = (uintptr_t)pc;
	l->end = &p->frames[e->off + e->n];
	l->k = 1 - (intptr_t)e->n;
	l->key = k;
	return k;
}

int ms_path_handover(ms_thread *t, int rc, uint64_t t1, void *pc, unsigned fn, ms_fin_fn fin)
{
	return fin(t, rc, t1, (void *)(uintptr_t)ms_path_lean(t, fn, pc));
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
