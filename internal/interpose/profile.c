//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * profile.c: the cold parts of profiling (profile.h): each thread's site,
 * peer, region and event tables (cleared at a reset, the deferred record
 * written), datatype sizes, the communicator cache and its metadata for
 * the report, persistent requests (their bytes and peers at MPI_Start),
 * and the time spent with recording off. The hot parts are inline in
 * profile.h; the thread's state itself is core.c's.
 */
#define _GNU_SOURCE
#include "api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile uint32_t ms_type_gen = 1;
int ms_world_size, ms_world_rank;
ms_comm ms_world_comm;
ms_comm_meta_t ms_comm_meta[MS_MAXCOMMS];
volatile int ms_ncomms;

static pthread_mutex_t ms_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Group ms_world_group = MPI_GROUP_NULL;

/* ---- a thread's tables ---- */

const ms_site ms_nosite = {.key = ~(uint64_t)0};
/* ms_last_clear forgets each function's last site (ms_record). */
void ms_last_clear(ms_thread *t)
{
	for (int i = 0; i < MS_MAXFUNCS; i++)
		t->last[i] = (ms_site *)&ms_nosite;
}

ms_peerstat *ms_cpeer_of(ms_thread *t, const ms_comm *cm, int w)
{
	const uint64_t key = cm->kbits | (uint32_t)w;
	const uint64_t mask = ((uint64_t)1 << MS_CPEER_BITS) - 1;
	uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> (64 - MS_CPEER_BITS);
	for (int n = 0; n < 16; n++, i = (i + 1) & mask) {
		ms_cpeer *c = &t->cpeers[i];
		if (c->key == key)
			return &c->s;
		if (c->key == 0) {
			c->key = key;
			return &c->s;
		}
	}
	t->dropped++;
	return NULL;
}

MS_HIDDEN void ms_thread_clear(ms_thread *t)
{
	memset(t->sites, 0, ((size_t)1 << MS_SITE_BITS) * sizeof(ms_site));
	memset(t->peers, 0, (size_t)(ms_world_size > 0 ? ms_world_size : 1) * sizeof(ms_peerstat));
	memset(t->regions, 0, MS_MAXREGIONS * sizeof(ms_regstat));
	memset(t->events, 0, MS_MAXEVENTS * sizeof(uint64_t));
	memset(t->cpeers, 0, ((size_t)1 << MS_CPEER_BITS) * sizeof(ms_cpeer));
	t->dropped = t->nsites = 0;
	t->pfn = 0;
	ms_last_clear(t);
}

/* ms_flush records the deferred call (ms_defer). Out of line: it runs
 * after a PMPI_ call has returned, off the critical path of a message. */
__attribute__((noinline)) void ms_flush(ms_thread *t)
{
	unsigned fn = t->pfn - 1;
	t->pfn = 0;
	ms_record(t, fn, t->ppc, t->pdt, t->pbytes, t->pcm);
}

/* ms_flush_rc: profile.h. */
__attribute__((noinline)) int ms_flush_rc(ms_thread *t, int rc)
{
	unsigned fn = t->pfn - 1;
	t->pfn = 0;
	ms_record(t, fn, t->ppc, t->pdt, t->pbytes, t->pcm);
	MS_STORE(t->depth, 0);
	return rc;
}

/* ms_pending_key is the site key of the deferred call (for Go, which
 * counts a record still deferred at collection). */
uint64_t ms_pending_key(const ms_thread *t)
{
	return ms_site_key(t->pfn - 1, t, t->pcm, t->pbytes);
}

/* Pcontrol(3) bumps the epoch in ms_gate; each thread clears its own
 * tables at its next recorded call, so no thread writes another's tables. */
void ms_thread_reset(ms_thread *t)
{
	ms_thread_clear(t);
	uint64_t now = ms_now();
	for (int i = 0; i < t->rdepth && i < MS_RDEPTH; i++)
		t->rstart[i] = now;
	t->epoch = MS_EPOCH();
}

/* ---- datatypes ---- */

int64_t ms_tsize_slow(ms_thread *t, MPI_Datatype d, unsigned i)
{
	uint32_t gen = MS_LOAD(ms_type_gen);
	if (t->tgen != gen) {
		memset(t->tcache, 0, sizeof t->tcache);
		t->tgen = gen;
	}
	if (d == MPI_DATATYPE_NULL)
		return 0;
	int s = 0;
	if (PMPI_Type_size(d, &s) != MPI_SUCCESS || s < 0)
		s = 0;
	t->tcache[i].h = (uintptr_t)d;
	t->tcache[i].size = s;
	return s;
}

#ifdef OPEN_MPI
size_t ms_type_size_off;

/* ms_types_probe finds where Open MPI's datatype objects hold their size:
 * the one offset, among the objects' first 16 words, at which a size_t
 * equals MPI_Type_size for predefined, pair and derived datatypes chosen
 * so that no other field (extent, bounds, element count) equals it for all
 * of them. None or more than one such offset: ms_tsize keeps its cache. */
void ms_types_probe(void)
{
	MPI_Datatype d[16];
	int n = 0;
	const MPI_Datatype pre[] = {MPI_BYTE, MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_DOUBLE, MPI_LONG_DOUBLE,
				    MPI_DOUBLE_INT, MPI_2INT, MPI_C_DOUBLE_COMPLEX};
	const int npre = (int)(sizeof pre / sizeof pre[0]);
	for (int i = 0; i < npre; i++)
		d[n++] = pre[i];
	MPI_Datatype v;
	int bl[2] = {1, 1};
	MPI_Aint disp[2] = {0, 8};
	MPI_Datatype ty[2] = {MPI_CHAR, MPI_DOUBLE};
	if (PMPI_Type_contiguous(3, MPI_INT, &v) == MPI_SUCCESS)
		d[n++] = v; /* size 12 = extent */
	if (PMPI_Type_vector(2, 1, 3, MPI_INT, &v) == MPI_SUCCESS)
		d[n++] = v; /* size 8, extent 16, 2 elements */
	if (PMPI_Type_create_resized(MPI_DOUBLE, -8, 40, &v) == MPI_SUCCESS)
		d[n++] = v; /* size 8, lb -8, extent 40 */
	if (PMPI_Type_create_struct(2, bl, disp, ty, &v) == MPI_SUCCESS)
		d[n++] = v; /* size 9, extent 16 */
	size_t found = 0;
	int nfound = 0;
	for (size_t off = sizeof(size_t); off < 16 * sizeof(size_t); off += sizeof(size_t)) {
		int ok = 1;
		for (int i = 0; i < n && ok; i++) {
			int s = 0;
			ok = PMPI_Type_size(d[i], &s) == MPI_SUCCESS && s >= 0 &&
			     *(const size_t *)((const char *)d[i] + off) == (size_t)s;
		}
		if (ok) {
			found = off;
			nfound++;
		}
	}
	for (int i = npre; i < n; i++)
		PMPI_Type_free(&d[i]);
	MS_STORE(ms_type_size_off, n == npre + 4 && nfound == 1 ? found : 0);
}

size_t ms_type_size_offset(void) { return MS_LOAD(ms_type_size_off); }
#else
void ms_types_probe(void) {}
size_t ms_type_size_offset(void) { return 0; }
#endif

void ms_types_changed(void)
{
	__atomic_add_fetch(&ms_type_gen, 1, __ATOMIC_RELEASE);
}

int64_t ms_sum_w(ms_thread *t, const int *counts, const MPI_Datatype *types, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		if (counts[i] > 0)
			s += (int64_t)counts[i] * ms_tsize(t, types[i]);
	return s;
}

int64_t ms_sum_wc(ms_thread *t, const MPI_Count *counts, const MPI_Datatype *types, int n)
{
	int64_t s = 0;
	for (int i = 0; i < n; i++)
		if (counts[i] > 0)
			s += (int64_t)counts[i] * ms_tsize(t, types[i]);
	return s;
}

/* ---- communicators ---- */

ms_comm *volatile ms_ctab[1 << MS_CTAB_BITS];

static int ms_new_meta(const char *key, int size, int creator)
{
	int id = ms_ncomms;
	if (id >= MS_MAXCOMMS - 1) {
		id = MS_MAXCOMMS - 1;
		snprintf(ms_comm_meta[id].key, sizeof ms_comm_meta[id].key, "other");
		ms_comm_meta[id].creator = -1;
		if (ms_ncomms < MS_MAXCOMMS)
			ms_ncomms = MS_MAXCOMMS;
		return id;
	}
	/* Same creator, size and leader: number them in creation order, which
	 * all members share because creation is collective. */
	int ord = 0;
	size_t kl = strlen(key);
	for (int i = 0; i < id; i++)
		if (strncmp(ms_comm_meta[i].key, key, kl) == 0 && (ms_comm_meta[i].key[kl] == 0 || ms_comm_meta[i].key[kl] == '#'))
			ord++;
	if (ord)
		snprintf(ms_comm_meta[id].key, sizeof ms_comm_meta[id].key, "%s#%d", key, ord + 1);
	else
		snprintf(ms_comm_meta[id].key, sizeof ms_comm_meta[id].key, "%s", key);
	ms_comm_meta[id].size = size;
	ms_comm_meta[id].creator = creator;
	__atomic_store_n(&ms_ncomms, id + 1, __ATOMIC_RELEASE);
	return id;
}

/* ms_comm_register builds the cache entry; called with ms_lock held. */
static ms_comm *ms_comm_register(MPI_Comm c, int fn)
{
	ms_comm *cm = calloc(1, sizeof *cm);
	if (cm == NULL)
		return NULL;
	int inter = 0;
	PMPI_Comm_size(c, &cm->size);
	PMPI_Comm_rank(c, &cm->rank);
	PMPI_Comm_test_inter(c, &inter);
	MPI_Group g = MPI_GROUP_NULL, lg = MPI_GROUP_NULL;
	if (inter) {
		PMPI_Comm_remote_size(c, &cm->rsize);
		PMPI_Comm_remote_group(c, &g);
		PMPI_Comm_group(c, &lg);
	} else {
		cm->rsize = cm->size;
		PMPI_Comm_group(c, &g);
	}
	int leader = -1;
	if (cm->rsize > 0 && ms_world_group != MPI_GROUP_NULL) {
		int *ranks = malloc(sizeof(int) * (size_t)cm->rsize);
		cm->world = malloc(sizeof(int) * (size_t)cm->rsize);
		if (ranks && cm->world) {
			for (int i = 0; i < cm->rsize; i++)
				ranks[i] = i;
			PMPI_Group_translate_ranks(g, cm->rsize, ranks, ms_world_group, cm->world);
			for (int i = 0; i < cm->rsize; i++)
				if (cm->world[i] == MPI_UNDEFINED)
					cm->world[i] = -1;
			leader = cm->world[0];
		}
		free(ranks);
		if (inter && lg != MPI_GROUP_NULL) {
			int zero = 0;
			PMPI_Group_translate_ranks(lg, 1, &zero, ms_world_group, &leader);
		}
	}
	if (g != MPI_GROUP_NULL)
		PMPI_Group_free(&g);
	if (lg != MPI_GROUP_NULL)
		PMPI_Group_free(&lg);
	char key[80];
	const char *cname = fn >= 0 ? ms_fn_names[fn] : "unknown";
	if (strncmp(cname, "MPI_", 4) == 0)
		cname += 4;
	snprintf(key, sizeof key, "%s%s:%d@%d", inter ? "inter:" : "", cname, cm->size, leader);
	cm->id = ms_new_meta(key, cm->size, fn);
	cm->kbits = (uint64_t)(cm->id + 1) << 32;
	cm->handle = (uintptr_t)c;
	return cm;
}

static ms_comm *ms_comm_insert(MPI_Comm c, int fn)
{
	pthread_mutex_lock(&ms_lock);
	uintptr_t h = (uintptr_t)c;
	unsigned i = ms_chash(h);
	ms_comm *found = NULL;
	int slot = -1;
	for (unsigned n = 0; n < (1u << MS_CTAB_BITS); n++, i = (i + 1) & ((1u << MS_CTAB_BITS) - 1)) {
		ms_comm *e = ms_ctab[i];
		if (e == NULL) {
			if (slot < 0)
				slot = (int)i;
			break;
		}
		if (e->handle == h) {
			found = e;
			break;
		}
		if (e->handle == 0 && slot < 0)
			slot = (int)i; /* reuse a freed entry's slot */
	}
	if (found == NULL && slot >= 0) {
		found = ms_comm_register(c, fn);
		if (found)
			__atomic_store_n(&ms_ctab[slot], found, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ms_lock);
	return found;
}

ms_comm *ms_comm_lookup(MPI_Comm c)
{
	uintptr_t h = (uintptr_t)c;
	unsigned i = ms_chash(h);
	for (unsigned n = 0; n < (1u << MS_CTAB_BITS); n++, i = (i + 1) & ((1u << MS_CTAB_BITS) - 1)) {
		ms_comm *e = __atomic_load_n(&ms_ctab[i], __ATOMIC_ACQUIRE);
		if (e == NULL)
			break;
		if (e->handle == h)
			return e;
	}
	/* First use of a communicator we did not see created. */
	return ms_comm_insert(c, -1);
}

void ms_comm_created(MPI_Comm c, int fn)
{
	if (c == MPI_COMM_NULL || c == MPI_COMM_WORLD)
		return;
	ms_comm_insert(c, fn);
}

ms_comm ms_nocomm;

ms_comm *ms_comm_memo(ms_thread *t, MPI_Comm c)
{
	ms_comm *m = ms_comm_get(c);
	if (m != NULL)
		t->cmemo = m;
	return m;
}

void ms_comm_freed(MPI_Comm c)
{
	if (c == MPI_COMM_NULL || c == MPI_COMM_WORLD || c == MPI_COMM_SELF)
		return;
	uintptr_t h = (uintptr_t)c;
	pthread_mutex_lock(&ms_lock);
	unsigned i = ms_chash(h);
	for (unsigned n = 0; n < (1u << MS_CTAB_BITS); n++, i = (i + 1) & ((1u << MS_CTAB_BITS) - 1)) {
		ms_comm *e = ms_ctab[i];
		if (e == NULL)
			break;
		if (e->handle == h) {
			/* Readers may still hold e: keep it allocated, only dead. */
			__atomic_store_n(&e->handle, 0, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&ms_lock);
}

/* ---- persistent requests ---- */

#define MS_PTAB_BITS 12
typedef struct {
	uintptr_t req; /* 0 = empty, 1 = freed */
	const ms_comm *cm;
	int64_t bytes;
	int speer, rpeer, tag; /* a collective: tag = root */
	int cfn; /* a persistent collective: its MS_FN_ (the _init function); -1 point-to-point */
	int active; /* atomic: started and not yet seen complete (traces) */
} ms_preq;
static ms_preq ms_ptab[1 << MS_PTAB_BITS];

void ms_preq_init(MPI_Request r, ms_comm *cm, int64_t bytes, int speer, int rpeer, int tag, int cfn)
{
	uintptr_t h = (uintptr_t)r;
	if (h <= 1)
		return;
	pthread_mutex_lock(&ms_lock);
	unsigned i = ms_chash(h) & ((1u << MS_PTAB_BITS) - 1);
	for (unsigned n = 0; n < (1u << MS_PTAB_BITS); n++, i = (i + 1) & ((1u << MS_PTAB_BITS) - 1)) {
		ms_preq *e = &ms_ptab[i];
		if (e->req <= 1 || e->req == h) {
			e->cm = cm;
			e->bytes = bytes;
			e->speer = speer;
			e->rpeer = rpeer;
			e->tag = tag;
			e->cfn = cfn;
			e->active = 0;
			__atomic_store_n(&e->req, h, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&ms_lock);
}

static ms_preq *ms_preq_find(uintptr_t h, unsigned probes)
{
	unsigned i = ms_chash(h) & ((1u << MS_PTAB_BITS) - 1);
	for (unsigned n = 0; n < probes; n++, i = (i + 1) & ((1u << MS_PTAB_BITS) - 1)) {
		ms_preq *e = &ms_ptab[i];
		uintptr_t r = __atomic_load_n(&e->req, __ATOMIC_ACQUIRE);
		if (r == 0)
			return NULL;
		if (r == h)
			return e;
	}
	return NULL;
}

/* ms_preq_start accounts the persistent requests an MPI_Start(all) call
 * (function fn, begun at t0) started, and returns their bytes (-1: none
 * known). When tracing, each becomes a post event and is marked active. */
int64_t ms_preq_start(ms_thread *t, unsigned fn, uint64_t t0, MPI_Request *r, int n)
{
	int64_t total = -1;
	int tracing = MS_LOAD(ms_tracing);
	for (int k = 0; k < n; k++) {
		ms_preq *e = ms_preq_find((uintptr_t)r[k], 1u << MS_PTAB_BITS);
		if (e == NULL)
			continue;
		if (tracing) {
			__atomic_store_n(&e->active, 1, __ATOMIC_RELAXED);
			if (e->cfn >= 0)
				ms_trace_post((unsigned)e->cfn, t0, e->cm, MS_TF_COLL, -1, e->tag, e->bytes, (uintptr_t)r[k]);
			else if (e->speer != MPI_PROC_NULL)
				ms_trace_post(fn, t0, e->cm, MS_TF_SEND, e->speer, e->tag, e->bytes, (uintptr_t)r[k]);
			else
				ms_trace_post(fn, t0, e->cm, MS_TF_RECV, e->rpeer, e->tag, e->bytes, (uintptr_t)r[k]);
		}
		if (total < 0)
			total = 0;
		total += e->bytes;
		if (e->speer != MPI_PROC_NULL)
			ms_peer_send(t, e->cm, e->speer, e->bytes);
		if (e->rpeer != MPI_PROC_NULL)
			ms_peer_recv(t, e->cm, e->rpeer, e->bytes);
	}
	return total;
}

/* ms_preq_done tells whether a request seen complete by a Wait/Test call
 * really completed, and what it was: 0, a persistent request that is not
 * active (MPI_Test on an inactive request returns at once with flag =
 * true); MS_TF_SEND or MS_TF_COLL, an active persistent send or
 * collective, as MPI_Start found it set up (ms_preq_start); MS_TF_RECV,
 * a persistent receive or any other request (its status describes what
 * it received, if anything). */
int ms_preq_done(uintptr_t h)
{
	/* Called for every completion while tracing: a bounded search (a
	 * request found further away is taken as not persistent). */
	ms_preq *e = ms_preq_find(h, 32);
	if (e == NULL)
		return MS_TF_RECV;
	if (!__atomic_load_n(&e->active, __ATOMIC_RELAXED) || !__atomic_exchange_n(&e->active, 0, __ATOMIC_RELAXED))
		return 0;
	return e->cfn >= 0 ? MS_TF_COLL : e->speer != MPI_PROC_NULL ? MS_TF_SEND : MS_TF_RECV;
}

void ms_preq_free(MPI_Request r)
{
	uintptr_t h = (uintptr_t)r;
	if (h <= 1)
		return;
	ms_trole_forget(h); /* its trace note, if it says inactive */
	pthread_mutex_lock(&ms_lock);
	ms_preq *e = ms_preq_find(h, 1u << MS_PTAB_BITS);
	if (e)
		__atomic_store_n(&e->req, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ms_lock);
}

/* ---- start-up ---- */

MS_HIDDEN void ms_comm_init(void)
{
	PMPI_Comm_size(MPI_COMM_WORLD, &ms_world_size);
	PMPI_Comm_rank(MPI_COMM_WORLD, &ms_world_rank);
	PMPI_Comm_group(MPI_COMM_WORLD, &ms_world_group);
	ms_world_comm.handle = (uintptr_t)MPI_COMM_WORLD;
	ms_world_comm.id = ms_new_meta("world", ms_world_size, -2);
	ms_world_comm.kbits = (uint64_t)(ms_world_comm.id + 1) << 32;
	ms_world_comm.size = ms_world_comm.rsize = ms_world_size;
	ms_world_comm.rank = ms_world_rank;
	ms_world_comm.world = NULL;
	ms_comm *self = ms_comm_insert(MPI_COMM_SELF, -1);
	if (self) {
		snprintf(ms_comm_meta[self->id].key, sizeof ms_comm_meta[0].key, "self@%d", ms_world_rank);
		ms_comm_meta[self->id].creator = -2;
	}
}

/* ---- time off ---- */

/* Time with recording off (MPI_Pcontrol(0), MPISCOPE_ENABLE=0), in ticks:
 * ms_off_ticks closed intervals since the last reset, ms_off_since the
 * start of the open one (0: recording is on). Cold: Pcontrol and start. */
static uint64_t ms_off_ticks, ms_off_since;

/* ms_off_mark notes that recording turns off (off != 0) or on at time now. */
MS_HIDDEN void ms_off_mark(int off, uint64_t now)
{
	uint64_t since = __atomic_load_n(&ms_off_since, __ATOMIC_ACQUIRE);
	if (off && since == 0)
		__atomic_store_n(&ms_off_since, now ? now : 1, __ATOMIC_RELEASE);
	else if (!off && since != 0) {
		__atomic_add_fetch(&ms_off_ticks, now > since ? now - since : 0, __ATOMIC_RELAXED);
		__atomic_store_n(&ms_off_since, 0, __ATOMIC_RELEASE);
	}
}

/* ms_off_reset restarts the count at a reset (Pcontrol(3)), at time now. */
MS_HIDDEN void ms_off_reset(uint64_t now)
{
	__atomic_store_n(&ms_off_ticks, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&ms_off_since, __ATOMIC_ACQUIRE) != 0)
		__atomic_store_n(&ms_off_since, now ? now : 1, __ATOMIC_RELEASE);
}

/* ms_off_total is the time off up to end (ticks). */
uint64_t ms_off_total(uint64_t end)
{
	uint64_t since = __atomic_load_n(&ms_off_since, __ATOMIC_ACQUIRE);
	uint64_t n = __atomic_load_n(&ms_off_ticks, __ATOMIC_RELAXED);
	if (since != 0 && end > since)
		n += end - since;
	return n;
}

/* ms_comm_peek finds the communicator of handle h without adding it. */
const ms_comm *ms_comm_peek(uintptr_t h)
{
	if (h == 0)
		return NULL;
	if (h == (uintptr_t)MPI_COMM_WORLD)
		return &ms_world_comm;
	unsigned i = ms_chash(h);
	for (unsigned n = 0; n < (1u << MS_CTAB_BITS); n++, i = (i + 1) & ((1u << MS_CTAB_BITS) - 1)) {
		ms_comm *e = __atomic_load_n(&ms_ctab[i], __ATOMIC_ACQUIRE);
		if (e == NULL)
			break;
		if (MS_LOAD(e->handle) == h)
			return e;
	}
	return NULL;
}

/* ---- for Go (api.h) ---- */

int ms_comm_count(void) { return __atomic_load_n(&ms_ncomms, __ATOMIC_ACQUIRE); }
ms_comm_meta_t *ms_comm_meta_at(int i) { return &ms_comm_meta[i]; }
int ms_world_rank_get(void) { return ms_world_rank; }
int ms_world_size_get(void) { return ms_world_size; }
