//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * regions.c: the regions and user events that MPI_Pcontrol creates
 * (lifecycle.c dispatches the levels): region paths and event texts,
 * interned once per rank, and each thread's region stack, which gives
 * every record its region (ms_thread.rkey, profile.h's site key).
 */
#define _GNU_SOURCE
#include "api.h"
#include "lifecycle.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Regions: interned paths. Index 0 is "no region". */
typedef struct {
	uint32_t parent;
	char *name;
	char *path;
} ms_region_t;
ms_region_t ms_regions[MS_MAXREGIONS];
volatile int ms_nregions = 1;
char *ms_events_text[MS_MAXEVENTS];
volatile int ms_nevents;
static pthread_mutex_t ms_plock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t ms_region_intern(uint32_t parent, const char *name)
{
	int n = __atomic_load_n(&ms_nregions, __ATOMIC_ACQUIRE);
	for (int i = 1; i < n; i++)
		if (ms_regions[i].parent == parent && strcmp(ms_regions[i].name, name) == 0)
			return (uint32_t)i;
	pthread_mutex_lock(&ms_plock);
	n = ms_nregions;
	uint32_t id = 0;
	for (int i = 1; i < n; i++)
		if (ms_regions[i].parent == parent && strcmp(ms_regions[i].name, name) == 0)
			id = (uint32_t)i;
	if (id == 0 && n < MS_MAXREGIONS) {
		ms_regions[n].parent = parent;
		ms_regions[n].name = strdup(name);
		const char *pp = parent ? ms_regions[parent].path : NULL;
		size_t len = (pp ? strlen(pp) + 1 : 0) + strlen(name) + 1;
		char *path = malloc(len);
		if (ms_regions[n].name && path) {
			snprintf(path, len, "%s%s%s", pp ? pp : "", pp ? "/" : "", name);
			ms_regions[n].path = path;
			id = (uint32_t)n;
			__atomic_store_n(&ms_nregions, n + 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&ms_plock);
	return id;
}

static ms_thread *ms_self(void)
{
	ms_thread *t = ms_tls;
	if (t == NULL && ms_started && !ms_finished)
		t = ms_thread_new();
	return t;
}

void ms_region_enter(const char *name)
{
	ms_thread *t = ms_self();
	if (t == NULL || name == NULL)
		return;
	ms_settle(t); /* a deferred call belongs to the region it ended in */
	if (t->rdepth >= MS_RDEPTH) {
		t->rdepth++; /* too deep: counted, not recorded */
		return;
	}
	uint32_t id = ms_region_intern(ms_region(t), name);
	if (id == 0) {
		t->dropped++;
		id = ms_region(t); /* table full: stay in the parent */
	}
	int d = t->rdepth++;
	t->rstack[d] = id;
	t->rstart[d] = ms_now();
	t->rkey = (uint64_t)id << 16;
	if (id)
		t->regions[id].visits++;
	if (__builtin_expect(ms_tracing, 0) && id)
		ms_trace_mark(MS_TK_ENTER, id);
}

void ms_region_leave(void)
{
	ms_thread *t = ms_self();
	if (t == NULL || t->rdepth == 0)
		return;
	if (t->pfn && t->epoch == MS_EPOCH())
		ms_flush(t); /* the deferred call belongs to the region it ended in */
	int d = --t->rdepth;
	if (d >= MS_RDEPTH)
		return;
	uint32_t id = t->rstack[d];
	if (id && t->epoch == MS_EPOCH()) {
		t->regions[id].ticks += ms_now() - t->rstart[d];
	}
	if (__builtin_expect(ms_tracing, 0) && id)
		ms_trace_mark(MS_TK_LEAVE, id);
	t->rkey = (uint64_t)(d > 0 ? t->rstack[d - 1] : 0) << 16;
}

void ms_event(const char *text)
{
	ms_thread *t = ms_self();
	if (t == NULL || text == NULL)
		return;
	ms_catch_up(t);
	int n = __atomic_load_n(&ms_nevents, __ATOMIC_ACQUIRE);
	int id = -1;
	for (int i = 0; i < n; i++)
		if (strcmp(ms_events_text[i], text) == 0)
			id = i;
	if (id < 0) {
		pthread_mutex_lock(&ms_plock);
		n = ms_nevents;
		for (int i = 0; i < n; i++)
			if (strcmp(ms_events_text[i], text) == 0)
				id = i;
		if (id < 0 && n < MS_MAXEVENTS && (ms_events_text[n] = strdup(text)) != NULL) {
			id = n;
			__atomic_store_n(&ms_nevents, n + 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&ms_plock);
	}
	if (id < 0) {
		t->dropped++;
		return;
	}
	t->events[id]++;
	if (__builtin_expect(ms_tracing, 0))
		ms_trace_mark(MS_TK_MARK, (unsigned)id);
}

/* ---- for Go (api.h) ---- */

int ms_region_count(void) { return __atomic_load_n(&ms_nregions, __ATOMIC_ACQUIRE); }
const char *ms_region_path(int i) { return i > 0 && i < ms_nregions ? ms_regions[i].path : ""; }
int ms_region_parent(int i) { return i > 0 && i < ms_nregions ? (int)ms_regions[i].parent : 0; }
int ms_event_count(void) { return __atomic_load_n(&ms_nevents, __ATOMIC_ACQUIRE); }
const char *ms_event_text(int i) { return ms_events_text[i]; }
