//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * core.c: the cold parts of what every recorded call stands on (ms.h):
 * the gate word (ms_gate); the clock (ms_use_tsc, the TSC check,
 * CLOCK_MONOTONIC pairs for calibration); the list of per-thread states
 * and a state's creation at its thread's first recorded call
 * (ms_thread_new); the binding of the wrappers' PMPI_ pointers (ms_bind);
 * and the reading of the blocking call a thread has published
 * (ms_busy_read), from the thread that writes a snapshot. The tables
 * inside a thread's state are profile.c's; the run's start and end,
 * lifecycle.c's.
 */
#define _GNU_SOURCE
#include "api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile uint32_t ms_gate = MS_G_OFF;
int ms_use_tsc;
int ms_comp_on; /* ms_enter's test (ms.h): set by compensate.c */
__thread ms_thread *ms_tls __attribute__((tls_model("initial-exec")));
ms_thread *volatile ms_threads;

/* ---- threads ---- */

static size_t ms_align(size_t n) { return (n + 4095) & ~(size_t)4095; }

ms_thread *ms_thread_new(void)
{
	size_t nsites = (size_t)1 << MS_SITE_BITS;
	size_t off_sites = ms_align(sizeof(ms_thread));
	size_t off_peers = off_sites + ms_align(nsites * sizeof(ms_site));
	size_t off_regions = off_peers + ms_align((size_t)(ms_world_size > 0 ? ms_world_size : 1) * sizeof(ms_peerstat));
	size_t off_events = off_regions + ms_align(MS_MAXREGIONS * sizeof(ms_regstat));
	size_t off_cpeers = off_events + ms_align(MS_MAXEVENTS * sizeof(uint64_t));
	size_t len = off_cpeers + ms_align(((size_t)1 << MS_CPEER_BITS) * sizeof(ms_cpeer));
	/* Zero pages from mmap: only the pages a thread touches cost memory. */
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	ms_thread *t = (ms_thread *)m;
	t->sites = (ms_site *)(m + off_sites);
	t->peers = (ms_peerstat *)(m + off_peers);
	t->regions = (ms_regstat *)(m + off_regions);
	t->events = (uint64_t *)(m + off_events);
	t->cpeers = (ms_cpeer *)(m + off_cpeers);
	t->maplen = len;
	t->cmemo = &ms_nocomm;
	t->tb = &ms_tnone; /* no buffer yet (trace.h) */
	ms_last_clear(t);
	t->epoch = MS_EPOCH();
	t->tid = (int)syscall(SYS_gettid);
	ms_thread *head = __atomic_load_n(&ms_threads, __ATOMIC_RELAXED);
	do
		t->next = head;
	while (!__atomic_compare_exchange_n(&ms_threads, &head, t, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	ms_tls = t;
	return t;
}

/* ---- clock ---- */

/* ms_tsc_invariant reports whether the TSC ticks at a constant rate across
 * power states, the condition for using it as a clock. */
MS_HIDDEN int ms_tsc_invariant(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f == NULL)
		return 0;
	char line[4096];
	int ok = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5) == 0) {
			ok = strstr(line, " constant_tsc") != NULL && strstr(line, " nonstop_tsc") != NULL;
			break;
		}
	}
	fclose(f);
	return ok;
#else
	return 0;
#endif
}

uint64_t ms_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ms_clock_pair reads the timer and CLOCK_MONOTONIC at one instant: the
 * timer between two clock reads, keeping the try with the closest pair of
 * clock reads. Two plain reads in a row can be a time slice apart on a
 * loaded node, and a calibration pair off by that shifts a rank's trace
 * by a different amount at each point of the run, which the clock
 * correction cannot repair. */
void ms_clock_pair(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 8; i++) {
		uint64_t a = ms_mono_ns(), t = ms_now(), b = ms_mono_ns();
		if (b - a < best) {
			best = b - a;
			*ticks = t;
			*ns = a + (b - a) / 2;
		}
	}
}

/* ---- binding of the wrappers' PMPI_ pointers (ms.h, MS_PMPI) ---- */

int ms_bound;

void ms_bind(void *slot, const char *name, void *fallback)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	if (p != NULL)
		__atomic_add_fetch(&ms_bound, 1, __ATOMIC_RELAXED);
	else
		p = fallback;
	__atomic_store_n((void **)slot, p, __ATOMIC_RELAXED);
}

/* ---- calls in progress (snapshots) ---- */

/* ms_busy_read reads the call thread t has published (ms_busy_args,
 * MS_TIMED_BUSY, ms.h) from another thread, while t runs on: 1 and *b
 * when t is inside such a call, else 0. The fields are read between two
 * reads of depth and the entry time; a call that ended or began meanwhile
 * makes it read again. */
int ms_busy_read(const ms_thread *t, ms_busy_t *b)
{
	for (int tries = 0; tries < 1000; tries++) {
		int d = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
		if (d < MS_DEPTH_BUSY || d - MS_DEPTH_BUSY >= ms_nfuncs)
			return 0;
		uint64_t t0 = MS_LOAD(t->bt0), pc = MS_LOAD(t->bpc);
		uintptr_t h = MS_LOAD(t->bcomm);
		int peer = MS_LOAD(t->bpeer), tag = MS_LOAD(t->btag);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&t->depth, __ATOMIC_RELAXED) != d || MS_LOAD(t->bt0) != t0)
			continue;
		const ms_comm *cm = ms_comm_peek(h);
		b->fn = d - MS_DEPTH_BUSY;
		b->t0 = t0;
		b->pc = pc;
		b->comm = cm ? cm->id : -1;
		b->kbits = cm ? cm->kbits : 0;
		/* bpeer and btag may be a previous call's when this function has
		 * none: Go keeps them only for functions that have them. */
		if (peer == MPI_PROC_NULL || peer == MPI_ROOT)
			b->peer = -1;
		else if (peer == MPI_ANY_SOURCE)
			b->peer = -2;
		else
			b->peer = ms_world_of(cm, peer);
		b->tag = tag == MPI_ANY_TAG ? -1 : tag < 0 ? -2 : tag;
		return 1;
	}
	return 0;
}

/* ---- for Go (api.h; cgo does not read volatile globals well) ---- */

ms_thread *ms_threads_head(void) { return __atomic_load_n(&ms_threads, __ATOMIC_ACQUIRE); }
uint32_t ms_epoch_now(void) { return __atomic_load_n(&ms_gate, __ATOMIC_ACQUIRE) & ~MS_G_FLAGS; }
uint64_t ms_ticks_now(void) { return ms_now(); }
int ms_use_tsc_get(void) { return ms_use_tsc; }
const char *ms_fn_name(int i) { return ms_fn_names[i]; }
const char *ms_fn_class(int i) { return ms_fn_classes[i]; }
int ms_nfuncs_get(void) { return ms_nfuncs; }
