//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * piggyback.c: the piggyback channel's handlers (piggyback.h).
 *
 * Three pieces of state:
 *   - per thread, a cache of the struct datatypes [header, user buffer],
 *     keyed by (buffer, count, datatype, direction): each entry holds
 *     MS_PB_SLOTS headers, each with its own committed datatype (the
 *     datatype holds the header's absolute address). A blocking call uses
 *     a free slot for its duration; a nonblocking one holds it (busy)
 *     until the request completes. With no free slot, a call builds a
 *     datatype of its own, with its header on the stack (blocking) or
 *     allocated (nonblocking), and frees both after;
 *   - per process, the requests of ours in flight (a table keyed by the
 *     request handle): which header to read when a receive completes,
 *     which slot to release; persistent requests stay until
 *     MPI_Request_free;
 *   - per thread, the wait-state table (piggyback.h, ms_pb_wrow).
 * No lock: the request table is claimed with compare-and-swap.
 */
#include "piggyback.h"
#include "compensate.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ms_pb_wtab *volatile ms_pb_wtabs;
int64_t ms_pb_off_ns;
double ms_pb_delay;
uint64_t ms_pb_stats[5];
extern int64_t ms_trace_skew; /* trace.c: testing, added to this rank's clock */

int ms_pb_below;
static __thread void *ms_pb_pc;

void ms_pb_at(void *pc) { ms_pb_pc = pc; }

/* ms_pb_take: the callsite left by the wrapper whose call reached a bottom
 * hook; NULL for the next (a call a tool makes of its own is not
 * recorded). */
void *ms_pb_take(void)
{
	void *pc = ms_pb_pc;
	ms_pb_pc = NULL;
	return pc;
}

void ms_pb_enable(int64_t off_ns)
{
#ifdef MS_NO_PIGGYBACK
	(void)off_ns;
	return;
#endif
	ms_pb_off_ns = off_ns + ms_trace_skew;
	/* Below the stacked tools, if any, before the gate opens. */
	if (ms_chain_pb())
		ms_pb_below = 1;
	ms_gate_set(MS_G_PB, 1);
}

/* ms_pb_gnow is now on rank 0's CLOCK_MONOTONIC (ns). */
static inline int64_t ms_pb_gnow(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ms_pb_off_ns;
}

static inline void ms_pb_stamp(ms_pb_hdr *h, int64_t t)
{
	h->t = t;
	h->delay = ms_pb_delay;
	h->rank = ms_world_rank;
	h->flags = 0;
}

/* ---- wait states ---- */

static __thread ms_pb_wtab *ms_pb_wt;
static pthread_mutex_t ms_pb_wlock = PTHREAD_MUTEX_INITIALIZER;

static __attribute__((cold, noinline)) ms_pb_wtab *ms_pb_wtab_new(void)
{
	ms_pb_wtab *w = calloc(1, sizeof *w);
	if (w == NULL)
		return NULL;
	w->epoch = MS_EPOCH();
	pthread_mutex_lock(&ms_pb_wlock);
	w->next = ms_pb_wtabs;
	__atomic_store_n(&ms_pb_wtabs, w, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ms_pb_wlock);
	ms_pb_wt = w;
	return w;
}

/* ms_pb_wclear empties this thread's wait-state table. */
MS_HIDDEN void ms_pb_wclear(void)
{
	ms_pb_wtab *w = ms_pb_wt;
	if (w == NULL)
		return;
	memset(w->rows, 0, sizeof w->rows);
	w->dropped = 0;
	w->epoch = MS_EPOCH();
}

static void ms_pb_note(int kind, unsigned fn, void *pc, int comm, int64_t wait, int peer)
{
	ms_pb_wtab *w = ms_pb_wt;
	if (w == NULL && (w = ms_pb_wtab_new()) == NULL)
		return;
	if (__builtin_expect(w->epoch != MS_EPOCH(), 0))
		ms_pb_wclear(); /* Pcontrol(3) since this thread's last wait (Go skips a table of an older epoch) */
	if (wait < 0)
		wait = 0;
	const uint64_t k = (uint64_t)(uintptr_t)pc, mask = (1u << MS_PB_WBITS) - 1;
	uint64_t i = ((k ^ ((uint64_t)fn << 8 | (uint64_t)kind) ^ ((uint64_t)(uint32_t)comm << 40)) * 0x9E3779B97F4A7C15ull) >> (64 - MS_PB_WBITS);
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		ms_pb_wrow *r = &w->rows[i];
		if (r->n == 0) {
			r->pc = k;
			r->kind = (uint32_t)kind;
			r->fn = fn;
			r->comm = comm;
			r->peer = peer;
		} else if (r->pc != k || r->kind != (uint32_t)kind || r->fn != fn || r->comm != comm) {
			continue;
		}
		if (r->n == 0 || (uint64_t)wait > r->max) {
			r->max = (uint64_t)wait;
			r->peer = peer;
		}
		r->sum += (uint64_t)wait;
		MS_STORE(r->n, r->n + 1);
		return;
	}
	w->dropped++;
}

static inline int ms_pb_comm_id(MPI_Comm c)
{
	ms_comm *cm = ms_comm_get(c);
	return cm ? cm->id : -1;
}

/* ms_pb_got: a receive completed with header h, entered at te. With
 * compensation on, the delay moves (ms_comp_recv) and the wait noted is
 * the one the uninstrumented run would have had. */
static inline void ms_pb_got(const ms_pb_hdr *h, int64_t te, unsigned fn, void *pc, int comm)
{
	if (h->rank < 0)
		return;
	int64_t w = h->t - te;
	if (ms_comp_active)
		w = (int64_t)ms_comp_recv(h->t, h->delay, te, fn, pc);
	if (pc != NULL)
		ms_pb_note(MS_PB_LATE_SENDER, fn, pc, comm, w, h->rank);
}

void ms_pb_coll(MPI_Comm comm, int kind, int root, unsigned fn, void *pc)
{
	int inter = 0, me = 0;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
	    PMPI_Comm_rank(comm, &me) != MPI_SUCCESS)
		return;
	const int64_t te = ms_pb_gnow();
	/* (entry, rank) and (the root's entry, rank); with compensation, the
	 * same for the entries less the delays: the uninstrumented ones. */
	const double d = ms_pb_delay, ne = -1e300;
	struct { double t; int r; } in[4], out[4];
	in[0].t = (double)te;
	in[1].t = me == root ? (double)te : ne;
	in[2].t = (double)te - d;
	in[3].t = me == root ? (double)te - d : ne;
	for (int i = 0; i < 4; i++)
		in[i].r = ms_world_rank;
	const int comp = ms_comp_active;
	if (PMPI_Allreduce(in, out, comp ? 4 : 2, MPI_DOUBLE_INT, MPI_MAXLOC, comm) != MPI_SUCCESS)
		return;
	int64_t w = 0;
	int peer = out[0].r, note = 1;
	/* u: when this member would have left the collective uninstrumented
	 * (less the collective's own time, the same in both runs). */
	double u = out[2].t, w0 = out[2].t - in[2].t;
	switch (kind) {
	case MS_PB_WAIT_NXN:
		w = (int64_t)(out[0].t - in[0].t);
		break;
	case MS_PB_LATE_BCAST:
		note = me != root;
		w = (int64_t)(out[1].t - in[0].t);
		peer = out[1].r;
		u = me == root ? in[2].t : (out[3].t > in[2].t ? out[3].t : in[2].t);
		w0 = u - in[2].t;
		break;
	case MS_PB_EARLY_REDUCE:
		note = me == root;
		w = (int64_t)(out[0].t - in[0].t);
		if (me != root)
			u = in[2].t, w0 = 0;
		break;
	default:
		return;
	}
	if (comp) {
		/* Now, instrumented, against u uninstrumented: the new delay,
		 * our reduction's own cost (after the last member entered)
		 * included, as measured in this call. */
		ms_comp_add(fn, pc, (double)ms_pb_gnow() - u - d);
		w = (int64_t)w0;
	}
	if (pc != NULL && note)
		ms_pb_note(kind, fn, pc, ms_pb_comm_id(comm), w, peer);
}

/* ---- the datatype cache ---- */

/* Directions: MS_PB_SEND is a send whose data is read during the call
 * (or until its request completes), which may be staged; MS_PB_PSEND a
 * persistent send (its data is read at every MPI_Start: never staged). */
enum { MS_PB_SEND, MS_PB_RECV, MS_PB_REPL, MS_PB_PSEND };
#define MS_PB_SLOTS 4
#define MS_PB_CBITS 7

typedef struct ms_pb_slot {
	MPI_Datatype type; /* MPI_DATATYPE_NULL until first used */
	int busy;          /* requests holding it (atomic: they may complete on another thread) */
	ms_pb_hdr hdr;
	char *sbuf;        /* staging buffer (ms_pb_stage_max + header), allocated at its first use, kept */
} ms_pb_slot;

typedef struct ms_pb_ent {
	const void *buf;
	MPI_Count count;
	MPI_Datatype dt;
	int dir;
	uint32_t gen;
	int used;
	int staged;        /* sends of this entry are staged: sn bytes from buf + soff */
	size_t sn;
	MPI_Aint soff;
	ms_pb_slot s[MS_PB_SLOTS];
} ms_pb_ent;

/* Staging (MPISCOPE_PIGGYBACK_STAGE, piggyback.go): a send of at most
 * ms_pb_stage_max bytes of contiguous data copies header and data into
 * the slot's staging buffer and sends them as MPI_PACKED, which is
 * cheaper than a struct datatype up to about 1 KiB (the bench's channel
 * section); the receiver's struct datatype takes it as it is
 * (docs/compensation.md, "Staging"). 0: never. */
int ms_pb_stage_max = 1024;

static __thread ms_pb_ent *ms_pb_cache;
static int ms_pb_ntypes; /* datatypes of ours in existence (debugging) */

static void ms_pb_tfree(MPI_Datatype *t)
{
	PMPI_Type_free(t);
	ms_pb_ntypes--;
}

/* Every thread's cache, for ms_pb_fini. */
typedef struct ms_pb_cnode {
	struct ms_pb_cnode *next;
	ms_pb_ent *c;
} ms_pb_cnode;
static ms_pb_cnode *ms_pb_caches;

static __attribute__((cold, noinline)) ms_pb_ent *ms_pb_cache_new(void)
{
	ms_pb_ent *c = calloc(1u << MS_PB_CBITS, sizeof *c);
	ms_pb_cnode *n = malloc(sizeof *n);
	if (c == NULL || n == NULL) {
		free(c);
		free(n);
		return NULL;
	}
	n->c = c;
	pthread_mutex_lock(&ms_pb_wlock);
	n->next = ms_pb_caches;
	ms_pb_caches = n;
	pthread_mutex_unlock(&ms_pb_wlock);
	return ms_pb_cache = c;
}

/* A header and the datatype that sends it with the user's buffer. */
typedef struct ms_pb_use {
	ms_pb_hdr *hdr;
	MPI_Datatype type;
	int *busy;         /* the cached slot held (nonblocking), or NULL */
	MPI_Datatype own;  /* a datatype of our own to free after, or MPI_DATATYPE_NULL */
	void *mem;         /* the header allocated for it, or NULL */
	void *sbuf;        /* staged: send sn bytes of sbuf as MPI_PACKED (hdr is its start), not 1 x type */
	int sn;
} ms_pb_use;

/* ms_pb_build commits [h: 24 bytes, buf: count x dt] in *out. */
static __attribute__((noinline)) int ms_pb_build(const void *h, const void *buf, MPI_Count count, MPI_Datatype dt,
						  MPI_Datatype *out)
{
	MPI_Aint ah, ab;
	if (PMPI_Get_address((void *)h, &ah) != MPI_SUCCESS || PMPI_Get_address((void *)buf, &ab) != MPI_SUCCESS)
		return -1;
	MPI_Datatype types[2] = {MPI_BYTE, dt};
	int rc;
	if (count <= INT_MAX) {
		int bl[2] = {MS_PB_HDR, (int)count};
		MPI_Aint d[2] = {ah, ab};
		rc = PMPI_Type_create_struct(2, bl, d, types, out);
	} else {
#if MPI_VERSION >= 4
		MPI_Count bl[2] = {MS_PB_HDR, count}, d[2] = {ah, ab};
		rc = PMPI_Type_create_struct_c(2, bl, d, types, out);
#else
		return -1;
#endif
	}
	if (rc != MPI_SUCCESS)
		return -1;
	ms_pb_ntypes++;
	if (PMPI_Type_commit(out) != MPI_SUCCESS) {
		PMPI_Type_free(out);
		return -1;
	}
	return 0;
}

/* ms_pb_stageable decides, on a cache miss, whether sends of e are staged:
 * a predefined datatype (a derived one may repeat or reorder bytes that
 * its size and extents do not reveal) whose count elements lie back to
 * back, at most ms_pb_stage_max bytes in all, and whose packed form,
 * checked once here with MPI_Pack into the slot's staging buffer, is the
 * bytes in memory: a copy then produces exactly the packing unit that
 * MPI_Pack of the header and the data would. */
static __attribute__((noinline)) void ms_pb_stageable(ms_pb_ent *e, ms_pb_slot *s)
{
	int ni = 0, na = 0, nd = 0, comb = 0, psz = 0, pos = 0;
	MPI_Count size = 0, lb = 0, ext = 0, tlb = 0, text = 0;
	e->staged = 0;
	if (e->buf == MPI_BOTTOM || e->count < 0 || e->count > ms_pb_stage_max ||
	    PMPI_Type_get_envelope(e->dt, &ni, &na, &nd, &comb) != MPI_SUCCESS || comb != MPI_COMBINER_NAMED ||
	    PMPI_Type_size_x(e->dt, &size) != MPI_SUCCESS || size <= 0 || e->count * size > ms_pb_stage_max ||
	    PMPI_Type_get_extent_x(e->dt, &lb, &ext) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent_x(e->dt, &tlb, &text) != MPI_SUCCESS || text != size || (e->count > 1 && ext != size))
		return;
	const size_t n = (size_t)(e->count * size), cap = (size_t)ms_pb_stage_max + MS_PB_HDR;
	if (s->sbuf == NULL && (s->sbuf = malloc(cap)) == NULL)
		return;
	if (PMPI_Pack_size((int)e->count, e->dt, MPI_COMM_WORLD, &psz) != MPI_SUCCESS || (size_t)psz != n ||
	    PMPI_Pack(&s->hdr, MS_PB_HDR, MPI_BYTE, s->sbuf, (int)cap, &pos, MPI_COMM_WORLD) != MPI_SUCCESS ||
	    pos != MS_PB_HDR || PMPI_Pack(e->buf, (int)e->count, e->dt, s->sbuf, (int)cap, &pos, MPI_COMM_WORLD) != MPI_SUCCESS ||
	    (size_t)pos != MS_PB_HDR + n || memcmp(s->sbuf, &s->hdr, MS_PB_HDR) != 0 ||
	    memcmp(s->sbuf + MS_PB_HDR, (const char *)e->buf + tlb, n) != 0)
		return;
	e->staged = 1;
	e->sn = n;
	e->soff = (MPI_Aint)tlb;
}

/* ms_pb_get fills u for a call on (buf, count, dt) in direction dir; hold:
 * a nonblocking call keeps the header until its request completes.
 * stackhdr: a blocking call's header when no slot is free. Returns -1 if
 * no datatype could be made (the call then fails as MPI would on a bad
 * argument: the caller passes it on unchanged). */
static int ms_pb_get(ms_pb_use *u, const void *buf, MPI_Count count, MPI_Datatype dt, int dir, int hold,
		     ms_pb_hdr *stackhdr)
{
	u->busy = NULL;
	u->own = MPI_DATATYPE_NULL;
	u->mem = NULL;
	u->sbuf = NULL;
	ms_pb_ent *c = ms_pb_cache;
	if (__builtin_expect(c == NULL, 0))
		c = ms_pb_cache_new();
	if (c != NULL) {
		const uint64_t k = (uint64_t)(uintptr_t)buf ^ (uint64_t)count << 17 ^ (uint64_t)(uintptr_t)dt << 3 ^ (uint64_t)dir;
		ms_pb_ent *e = &c[(k * 0x9E3779B97F4A7C15ull) >> (64 - MS_PB_CBITS)];
		const uint32_t gen = MS_LOAD(ms_type_gen);
		if (!(e->used && e->buf == buf && e->count == count && e->dt == dt && e->dir == dir && e->gen == gen)) {
			/* A miss: take the entry over unless a request holds one of
			 * its headers. */
			int held = 0;
			for (int i = 0; i < MS_PB_SLOTS; i++)
				held |= __atomic_load_n(&e->s[i].busy, __ATOMIC_ACQUIRE) != 0;
			if (held)
				goto own;
			ms_pb_stats[1]++;
			char *sb[MS_PB_SLOTS];
			for (int i = 0; i < MS_PB_SLOTS; i++) {
				if (e->used && e->s[i].type != MPI_DATATYPE_NULL)
					ms_pb_tfree(&e->s[i].type);
				sb[i] = e->s[i].sbuf; /* the staging buffers stay with the entry */
			}
			memset(e, 0, sizeof *e);
			for (int i = 0; i < MS_PB_SLOTS; i++) {
				e->s[i].type = MPI_DATATYPE_NULL;
				e->s[i].sbuf = sb[i];
			}
			e->buf = buf;
			e->count = count;
			e->dt = dt;
			e->dir = dir;
			e->gen = gen;
			e->used = 1;
			if (dir == MS_PB_SEND && ms_pb_stage_max > 0)
				ms_pb_stageable(e, &e->s[0]);
		} else {
			ms_pb_stats[0]++;
		}
		for (int i = 0; i < MS_PB_SLOTS; i++) {
			ms_pb_slot *s = &e->s[i];
			if (__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE) != 0)
				continue;
			if (e->staged) {
				if (s->sbuf == NULL && (s->sbuf = malloc((size_t)ms_pb_stage_max + MS_PB_HDR)) == NULL)
					break;
				memcpy(s->sbuf + MS_PB_HDR, (const char *)buf + e->soff, e->sn);
				ms_pb_stats[4]++;
				if (hold) {
					__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
					u->busy = &s->busy;
				}
				u->hdr = (ms_pb_hdr *)(void *)s->sbuf;
				u->sbuf = s->sbuf;
				u->sn = (int)(MS_PB_HDR + e->sn);
				u->type = MPI_PACKED;
				return 0;
			}
			if (s->type == MPI_DATATYPE_NULL && ms_pb_build(&s->hdr, buf, count, dt, &s->type) != 0) {
				s->type = MPI_DATATYPE_NULL;
				break;
			}
			if (hold) {
				__atomic_store_n(&s->busy, 1, __ATOMIC_RELAXED);
				u->busy = &s->busy;
			}
			u->hdr = &s->hdr;
			u->type = s->type;
			return 0;
		}
	}
own:
	ms_pb_stats[2]++;
	u->hdr = stackhdr;
	if (hold) {
		u->mem = u->hdr = malloc(sizeof(ms_pb_hdr));
		if (u->hdr == NULL)
			return -1;
	}
	memset(u->hdr, 0, sizeof *u->hdr);
	if (ms_pb_build(u->hdr, buf, count, dt, &u->own) != 0) {
		free(u->mem);
		u->mem = NULL;
		return -1;
	}
	u->type = u->own;
	return 0;
}

/* ms_pb_put releases what u holds. */
static void ms_pb_put(ms_pb_use *u)
{
	if (u->busy)
		__atomic_store_n(u->busy, 0, __ATOMIC_RELEASE);
	if (u->own != MPI_DATATYPE_NULL)
		ms_pb_tfree(&u->own);
	free(u->mem);
	u->busy = NULL;
	u->mem = NULL;
	u->sbuf = NULL;
}

/* ms_pb_fix makes a received status tell the user's part of the message. */
static void ms_pb_fix(MPI_Status *st)
{
	MPI_Count n = 0;
	if (st == MPI_STATUS_IGNORE)
		return;
	if (PMPI_Get_elements_x(st, MPI_BYTE, &n) == MPI_SUCCESS && n != MPI_UNDEFINED && n >= MS_PB_HDR)
		PMPI_Status_set_elements_x(st, MPI_BYTE, n - MS_PB_HDR);
}

static int ms_pb_class(int err)
{
	int c = MPI_ERR_OTHER;
	if (err == MPI_SUCCESS)
		return MPI_SUCCESS;
	PMPI_Error_class(err, &c);
	return c;
}

/* ms_pb_fixe fixes the status of a receive into one element of type that
 * ended with error err (its return code, or its status's MPI_ERROR in a
 * multiple completion). After a truncation the implementation reports
 * either the message's size (Open MPI 4.1.4: larger than the receive's
 * type, and the header is taken off as usual) or, when it stopped inside
 * the receive's type, a count that the user's type alone would not have
 * given: MPICH 4.0.2 reports for a truncated message a count that varies
 * from run to run (0 bytes, or part of the message: 12 bytes seen with
 * mpiscope loaded and the channel off; 40 bytes, our header and 16 of the
 * user's, into our struct of 44), copying nothing; a count below our
 * type's size is then reported as 0, one of the counts MPICH gives
 * without us. */
static void ms_pb_fixe(MPI_Status *st, int err, MPI_Datatype type)
{
	MPI_Count n = 0, sz = 0;
	if (st == MPI_STATUS_IGNORE)
		return;
	if (err != MPI_SUCCESS && ms_pb_class(err) == MPI_ERR_TRUNCATE && PMPI_Get_elements_x(st, MPI_BYTE, &n) == MPI_SUCCESS &&
	    PMPI_Type_size_x(type, &sz) == MPI_SUCCESS && n != MPI_UNDEFINED && n < sz) {
		PMPI_Status_set_elements_x(st, MPI_BYTE, 0);
		return;
	}
	ms_pb_fix(st);
}

static int ms_pb_cancelled(const MPI_Status *st)
{
	int c = 0;
	PMPI_Test_cancelled(st, &c);
	return c;
}

static const ms_pb_use ms_pb_none = {NULL, MPI_DATATYPE_NULL, NULL, MPI_DATATYPE_NULL, NULL, NULL, 0};

/* ---- requests in flight ---- */

#define MS_PB_R_RECV 1    /* read the header at completion */
#define MS_PB_R_PERSIST 2 /* persistent: kept until MPI_Request_free */
#define MS_PB_R_SEND 4    /* stamp the send header at MPI_Start */

typedef struct ms_pb_req {
	uintptr_t key; /* the request handle; 0 free, 1 deleted, 2 being written */
	uint32_t mark; /* the last completion call of arrays that found it (ms_pb_many_begin) */
	int flags;
	int comm;      /* communicator id of the receive */
	ms_pb_use s;   /* the send part */
	ms_pb_use r;   /* the receive part */
} ms_pb_req;

#define MS_PB_RBITS 14
static ms_pb_req ms_pb_reqs[1 << MS_PB_RBITS];
static volatile int ms_pb_pending; /* records in the table */

static inline uintptr_t ms_pb_rkey(MPI_Request r)
{
#ifdef OPEN_MPI
	return (uintptr_t)r;
#else
	return (uintptr_t)(unsigned)r;
#endif
}

static inline uint64_t ms_pb_rhash(uintptr_t k) { return ((uint64_t)k * 0x9E3779B97F4A7C15ull) >> (64 - MS_PB_RBITS); }

static void ms_pb_add(MPI_Request r, int flags, int comm, const ms_pb_use *s, const ms_pb_use *ru)
{
	const uintptr_t k = ms_pb_rkey(r), mask = (1u << MS_PB_RBITS) - 1;
	if (k < 3)
		return;
	ms_pb_stats[3]++;
	uint64_t i = ms_pb_rhash(k);
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		ms_pb_req *q = &ms_pb_reqs[i];
		uintptr_t cur = __atomic_load_n(&q->key, __ATOMIC_ACQUIRE);
		if (cur == k) {
			/* A handle handed out again while we still had it: the
			 * operation it named has completed (MPI deallocates a
			 * request freed by MPI_Request_free when its operation
			 * completes, not before; Open MPI returns one shared,
			 * already completed request for every send it finished
			 * at once), so what it held is free. */
			if (!__atomic_compare_exchange_n(&q->key, &cur, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				continue;
			ms_pb_put(&q->s);
			ms_pb_put(&q->r);
			__atomic_sub_fetch(&ms_pb_pending, 1, __ATOMIC_RELAXED);
		} else if (cur > 1 || !__atomic_compare_exchange_n(&q->key, &cur, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			continue;
		}
		q->flags = flags;
		q->comm = comm;
		q->s = *s;
		q->r = *ru;
		__atomic_add_fetch(&ms_pb_pending, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&q->key, k, __ATOMIC_RELEASE);
		return;
	}
	/* Full: the headers are leaked (a receive's header is not read). */
}

static ms_pb_req *ms_pb_find(uintptr_t k)
{
	const uint64_t mask = (1u << MS_PB_RBITS) - 1;
	if (k < 3)
		return NULL;
	uint64_t i = ms_pb_rhash(k);
	for (uint64_t n = 0; n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t cur = __atomic_load_n(&ms_pb_reqs[i].key, __ATOMIC_ACQUIRE);
		if (cur == k)
			return &ms_pb_reqs[i];
		if (cur == 0)
			return NULL;
	}
	return NULL;
}

static void ms_pb_del(ms_pb_req *q)
{
	const uint64_t mask = (1u << MS_PB_RBITS) - 1;
	uint64_t next = (uint64_t)(q - ms_pb_reqs + 1) & mask;
	/* Followed by a free slot: no probe passes through this one. */
	uintptr_t v = __atomic_load_n(&ms_pb_reqs[next].key, __ATOMIC_ACQUIRE) == 0 ? 0 : 1;
	__atomic_store_n(&q->key, v, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&ms_pb_pending, 1, __ATOMIC_RELAXED);
}

static inline int ms_pb_any(void) { return MS_LOAD(ms_pb_pending) != 0; }

/* ms_pb_done: the request of q completed with status st (NULL: unknown)
 * and error err in a call entered at te; gone: its handle is
 * MPI_REQUEST_NULL now. Persistent requests stay, unless gone: Open MPI
 * 4.1.4 frees a persistent request whose operation failed (a truncated
 * receive), and the program then cannot free it. */
static void ms_pb_done(ms_pb_req *q, MPI_Status *st, int err, int gone, int64_t te, unsigned fn, void *pc)
{
	if ((q->flags & MS_PB_R_RECV) && q->r.hdr != NULL) {
		if (st == NULL || !ms_pb_cancelled(st)) {
			if (st != NULL)
				ms_pb_fixe(st, err, q->r.type);
			if (err == MPI_SUCCESS)
				ms_pb_got(q->r.hdr, te, fn, pc, q->comm);
		}
	}
	if ((q->flags & MS_PB_R_PERSIST) && !gone)
		return;
	ms_pb_put(&q->s);
	ms_pb_put(&q->r);
	ms_pb_del(q);
}


/* ---- point-to-point handlers ---- */

typedef int (*ms_pb_sendfn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*ms_pb_isendfn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* ms_pb_sent: a call sent a header (compensation: its cost inside the
 * call). */
static inline void ms_pb_sent(unsigned fn, void *pc)
{
	if (ms_comp_active)
		ms_comp_add(fn, pc, ms_comp_in_ns);
}

static int ms_pb_send(ms_pb_sendfn f, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		      unsigned fn, void *pc)
{
	ms_pb_hdr sh;
	ms_pb_use u;
	const int64_t te = ms_pb_gnow();
	if (dest == MPI_PROC_NULL || ms_pb_get(&u, buf, count, dt, MS_PB_SEND, 0, &sh) != 0)
		return -1;
	ms_pb_stamp(u.hdr, te);
	int rc = u.sbuf ? f(u.sbuf, u.sn, MPI_PACKED, dest, tag, comm) : f(MPI_BOTTOM, 1, u.type, dest, tag, comm);
	ms_pb_put(&u);
	ms_pb_sent(fn, pc);
	return rc;
}

static int ms_pb_isend(ms_pb_isendfn f, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		       MPI_Request *req, int persist, unsigned fn, void *pc)
{
	ms_pb_use u;
	const int64_t te = ms_pb_gnow();
	if (dest == MPI_PROC_NULL || ms_pb_get(&u, buf, count, dt, persist ? MS_PB_PSEND : MS_PB_SEND, 1, NULL) != 0)
		return -1;
	ms_pb_stamp(u.hdr, te);
	int rc = u.sbuf ? f(u.sbuf, u.sn, MPI_PACKED, dest, tag, comm, req) : f(MPI_BOTTOM, 1, u.type, dest, tag, comm, req);
	ms_pb_sent(fn, pc);
	if (rc != MPI_SUCCESS)
		ms_pb_put(&u);
	else
		ms_pb_add(*req, persist ? MS_PB_R_PERSIST | MS_PB_R_SEND : 0, -1, &u, &ms_pb_none);
	return rc;
}

/* ms_pb_packed sends header and data packed into one contiguous buffer
 * (MPI_PACKED matches any type signature): buffered mode, which copies
 * the message anyway. (MPICH 4.0.2 leaks an object of its datatype engine
 * for each buffered send of a noncontiguous datatype, such as ours.) The
 * packed copy of a nonblocking send lives until its request completes. */
static int ms_pb_packed(int nb, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
			MPI_Request *req)
{
	int us = 0, hs = 0, pos = 0;
	const int64_t te = ms_pb_gnow();
	if (dest == MPI_PROC_NULL || count > INT_MAX || PMPI_Pack_size((int)count, dt, comm, &us) != MPI_SUCCESS ||
	    PMPI_Pack_size(MS_PB_HDR, MPI_BYTE, comm, &hs) != MPI_SUCCESS || us > INT_MAX - hs)
		return -1;
	char *tmp = malloc((size_t)us + (size_t)hs);
	if (tmp == NULL)
		return -1;
	ms_pb_hdr h;
	ms_pb_stamp(&h, te);
	if (PMPI_Pack(&h, MS_PB_HDR, MPI_BYTE, tmp, us + hs, &pos, comm) != MPI_SUCCESS ||
	    PMPI_Pack(buf, (int)count, dt, tmp, us + hs, &pos, comm) != MPI_SUCCESS) {
		free(tmp);
		return -1;
	}
	int rc;
	if (!nb) {
		rc = PMPI_Bsend(tmp, pos, MPI_PACKED, dest, tag, comm);
		free(tmp);
		return rc;
	}
	rc = PMPI_Ibsend(tmp, pos, MPI_PACKED, dest, tag, comm, req);
	if (rc != MPI_SUCCESS) {
		free(tmp);
		return rc;
	}
	ms_pb_use u = ms_pb_none;
	u.mem = tmp;
	ms_pb_add(*req, 0, -1, &u, &ms_pb_none);
	return rc;
}

int ms_pb_MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_packed(0, buf, count, dt, dest, tag, comm, NULL);
	return rc == -1 ? PMPI_Bsend(buf, count, dt, dest, tag, comm) : rc;
}

int ms_pb_MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r,
		     unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_packed(1, buf, count, dt, dest, tag, comm, r);
	return rc == -1 ? PMPI_Ibsend(buf, count, dt, dest, tag, comm, r) : rc;
}

/* The send functions reach ms_pb_send through these trampolines, never as
 * &PMPI_X: taking a PMPI_ function's address binds it when the library loads
 * (a GOT relocation), and the library must load against an MPI that lacks
 * some of them (TestLazyPMPIBinding). */
#define MS_PB_SENDS(X, IX)                                                                                                   \
	static int ms_pb_do_##X(const void *b, int c, MPI_Datatype d, int de, int t, MPI_Comm cm)                        \
	{                                                                                                                \
		return PMPI_##X(b, c, d, de, t, cm);                                                                     \
	}                                                                                                                \
	static int ms_pb_do_##IX(const void *b, int c, MPI_Datatype d, int de, int t, MPI_Comm cm, MPI_Request *r)       \
	{                                                                                                                \
		return PMPI_##IX(b, c, d, de, t, cm, r);                                                                 \
	}                                                                                                                \
	int ms_pb_MPI_##X(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, unsigned fn,       \
			  void *pc)                                                                                         \
	{                                                                                                                \
		int rc = ms_pb_send(ms_pb_do_##X, buf, count, dt, dest, tag, comm, fn, pc);                                  \
		return rc == -1 ? PMPI_##X(buf, count, dt, dest, tag, comm) : rc;                                        \
	}                                                                                                                \
	int ms_pb_MPI_##IX(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *r, \
			   unsigned fn, void *pc)                                                                        \
	{                                                                                                                \
		int rc = ms_pb_isend(ms_pb_do_##IX, buf, count, dt, dest, tag, comm, r, 0, fn, pc);                          \
		return rc == -1 ? PMPI_##IX(buf, count, dt, dest, tag, comm, r) : rc;                                    \
	}

#define MS_PB_INIT(X)                                                            \
	static int ms_pb_do_##X##_init(const void *b, int c, MPI_Datatype d, int de, int t, MPI_Comm cm, MPI_Request *r) \
	{                                                                                                                \
		return PMPI_##X##_init(b, c, d, de, t, cm, r);                                                           \
	}                                                                                                                \
	int ms_pb_MPI_##X##_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,          \
				 MPI_Request *r, unsigned fn, void *pc)                                                 \
	{                                                                                                                \
		int rc = ms_pb_isend(ms_pb_do_##X##_init, buf, count, dt, dest, tag, comm, r, 1, fn, pc);                    \
		return rc == -1 ? PMPI_##X##_init(buf, count, dt, dest, tag, comm, r) : rc;                              \
	}

MS_PB_SENDS(Send, Isend)
MS_PB_SENDS(Ssend, Issend)
MS_PB_SENDS(Rsend, Irsend)
MS_PB_INIT(Send)
MS_PB_INIT(Bsend)
MS_PB_INIT(Ssend)
MS_PB_INIT(Rsend)

/* The receives, Sendrecv and Sendrecv_replace work on MPI_Count counts,
 * for the calls with int counts and their large-count forms (MPI_X_c,
 * MPI-4) alike: the joined call passes one element of our datatype, so it
 * is always the int form; -1: no datatype could be made, the caller
 * makes its own call unchanged. */

static int ms_pb_recv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st,
		      unsigned fn, void *pc)
{
	ms_pb_hdr sh;
	ms_pb_use u;
	const int64_t te = ms_pb_gnow();
	if (src == MPI_PROC_NULL || ms_pb_get(&u, buf, count, dt, MS_PB_RECV, 0, &sh) != 0)
		return -1;
	u.hdr->rank = -1;
	int rc = PMPI_Recv(MPI_BOTTOM, 1, u.type, src, tag, comm, st);
	if (rc == MPI_SUCCESS) {
		ms_pb_fix(st);
		ms_pb_got(u.hdr, te, fn, pc, ms_pb_comm_id(comm));
	} else {
		ms_pb_fixe(st, rc, u.type);
	}
	ms_pb_put(&u);
	return rc;
}

int ms_pb_MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st, unsigned fn,
		   void *pc)
{
	int rc = ms_pb_recv(buf, count, dt, src, tag, comm, st, fn, pc);
	return rc == -1 ? PMPI_Recv(buf, count, dt, src, tag, comm, st) : rc;
}

static int ms_pb_irecv(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r,
		       int persist)
{
	ms_pb_use u;
	if (src == MPI_PROC_NULL || ms_pb_get(&u, buf, count, dt, MS_PB_RECV, 1, NULL) != 0)
		return -1;
	u.hdr->rank = -1;
	int rc = persist ? PMPI_Recv_init(MPI_BOTTOM, 1, u.type, src, tag, comm, r)
			 : PMPI_Irecv(MPI_BOTTOM, 1, u.type, src, tag, comm, r);
	if (rc != MPI_SUCCESS)
		ms_pb_put(&u);
	else
		ms_pb_add(*r, MS_PB_R_RECV | (persist ? MS_PB_R_PERSIST : 0), ms_pb_comm_id(comm), &ms_pb_none, &u);
	return rc;
}

int ms_pb_MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r, unsigned fn,
		    void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_irecv(buf, count, dt, src, tag, comm, r, 0);
	return rc == -1 ? PMPI_Irecv(buf, count, dt, src, tag, comm, r) : rc;
}

int ms_pb_MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r,
			unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_irecv(buf, count, dt, src, tag, comm, r, 1);
	return rc == -1 ? PMPI_Recv_init(buf, count, dt, src, tag, comm, r) : rc;
}

static int ms_pb_mrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st, unsigned fn, void *pc)
{
	ms_pb_hdr sh;
	ms_pb_use u;
	const int64_t te = ms_pb_gnow();
	if (*msg == MPI_MESSAGE_NO_PROC || ms_pb_get(&u, buf, count, dt, MS_PB_RECV, 0, &sh) != 0)
		return -1;
	u.hdr->rank = -1;
	int rc = PMPI_Mrecv(MPI_BOTTOM, 1, u.type, msg, st);
	ms_pb_fixe(st, rc, u.type);
	if (rc == MPI_SUCCESS)
		ms_pb_got(u.hdr, te, fn, pc, -1);
	ms_pb_put(&u);
	return rc;
}

int ms_pb_MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st, unsigned fn, void *pc)
{
	int rc = ms_pb_mrecv(buf, count, dt, msg, st, fn, pc);
	return rc == -1 ? PMPI_Mrecv(buf, count, dt, msg, st) : rc;
}

static int ms_pb_imrecv(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *r)
{
	ms_pb_use u;
	if (*msg == MPI_MESSAGE_NO_PROC || ms_pb_get(&u, buf, count, dt, MS_PB_RECV, 1, NULL) != 0)
		return -1;
	u.hdr->rank = -1;
	int rc = PMPI_Imrecv(MPI_BOTTOM, 1, u.type, msg, r);
	if (rc != MPI_SUCCESS)
		ms_pb_put(&u);
	else
		ms_pb_add(*r, MS_PB_R_RECV, -1, &ms_pb_none, &u);
	return rc;
}

int ms_pb_MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *r, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_imrecv(buf, count, dt, msg, r);
	return rc == -1 ? PMPI_Imrecv(buf, count, dt, msg, r) : rc;
}

/* ms_pb_sendrecv: MPI_Sendrecv, and with r != NULL MPI_Isendrecv (the
 * headers are held until the request completes); big: the caller's call
 * is the large-count form, which the joined call then also is (a side
 * to MPI_PROC_NULL passes the user's arguments on). */
static int ms_pb_sendrecv(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
			  MPI_Count rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st,
			  MPI_Request *req, int big, unsigned fn, void *pc)
{
	ms_pb_hdr sh, rh;
	ms_pb_use s = ms_pb_none, r = ms_pb_none;
	const int64_t te = ms_pb_gnow();
	const void *sb = sbuf;
	void *rb = rbuf;
	MPI_Datatype st_ = sdt, rt_ = rdt;
	MPI_Count sc = scount, rc_ = rcount;
	const int hold = req != NULL;
	if (dest == MPI_PROC_NULL && src == MPI_PROC_NULL)
		return -1;
	if (dest != MPI_PROC_NULL) {
		if (ms_pb_get(&s, sbuf, scount, sdt, MS_PB_SEND, hold, &sh) != 0)
			return -1;
		ms_pb_stamp(s.hdr, te);
		if (s.sbuf)
			sb = s.sbuf, sc = s.sn, st_ = MPI_PACKED;
		else
			sb = MPI_BOTTOM, sc = 1, st_ = s.type;
	}
	if (src != MPI_PROC_NULL) {
		if (ms_pb_get(&r, rbuf, rcount, rdt, MS_PB_RECV, hold, &rh) != 0) {
			ms_pb_put(&s);
			return -1;
		}
		r.hdr->rank = -1;
		rb = MPI_BOTTOM, rc_ = 1, rt_ = r.type;
	}
	int rc;
	if (req != NULL) {
#if MPI_VERSION >= 4
		rc = big ? PMPI_Isendrecv_c(sb, sc, st_, dest, stag, rb, rc_, rt_, src, rtag, comm, req)
			 : PMPI_Isendrecv(sb, (int)sc, st_, dest, stag, rb, (int)rc_, rt_, src, rtag, comm, req);
#else
		rc = MPI_ERR_INTERN;
#endif
	} else if (big) {
#if MPI_VERSION >= 4
		rc = PMPI_Sendrecv_c(sb, sc, st_, dest, stag, rb, rc_, rt_, src, rtag, comm, st);
#else
		rc = MPI_ERR_INTERN;
#endif
	} else {
		rc = PMPI_Sendrecv(sb, (int)sc, st_, dest, stag, rb, (int)rc_, rt_, src, rtag, comm, st);
	}
	if (dest != MPI_PROC_NULL)
		ms_pb_sent(fn, pc);
	if (req != NULL) {
		if (rc == MPI_SUCCESS)
			ms_pb_add(*req, src != MPI_PROC_NULL ? MS_PB_R_RECV : 0, ms_pb_comm_id(comm), &s, &r);
		else {
			ms_pb_put(&s);
			ms_pb_put(&r);
		}
		return rc;
	}
	if (src != MPI_PROC_NULL) {
		ms_pb_fixe(st, rc, r.type);
		if (rc == MPI_SUCCESS)
			ms_pb_got(r.hdr, te, fn, pc, ms_pb_comm_id(comm));
	}
	ms_pb_put(&s);
	ms_pb_put(&r);
	return rc;
}

int ms_pb_MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
		       MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc)
{
	int rc = ms_pb_sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st, NULL, 0, fn, pc);
	return rc == -1 ? PMPI_Sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st) : rc;
}

/* ms_pb_replace: MPI_Sendrecv_replace. One datatype for both parts:
 * nothing is sent to MPI_PROC_NULL, and nothing received from it leaves
 * the header as it was (so then no header is read). */
static int ms_pb_replace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
			 MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc)
{
	ms_pb_hdr sh;
	ms_pb_use u;
	const int64_t te = ms_pb_gnow();
	if ((dest == MPI_PROC_NULL && src == MPI_PROC_NULL) || ms_pb_get(&u, buf, count, dt, MS_PB_REPL, 0, &sh) != 0)
		return -1;
	ms_pb_stamp(u.hdr, te);
	int rc = PMPI_Sendrecv_replace(MPI_BOTTOM, 1, u.type, dest, stag, src, rtag, comm, st);
	if (dest != MPI_PROC_NULL)
		ms_pb_sent(fn, pc);
	if (src != MPI_PROC_NULL) {
		ms_pb_fixe(st, rc, u.type);
		if (rc == MPI_SUCCESS)
			ms_pb_got(u.hdr, te, fn, pc, ms_pb_comm_id(comm));
	}
	ms_pb_put(&u);
	return rc;
}

int ms_pb_MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
			       MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc)
{
	int rc = ms_pb_replace(buf, count, dt, dest, stag, src, rtag, comm, st, fn, pc);
	return rc == -1 ? PMPI_Sendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, st) : rc;
}

#if MPI_VERSION >= 4
/* ---- MPI-4: MPI_Isendrecv(_replace) and the large-count forms ---- */

/* ms_pb_ireplace: MPI_Isendrecv_replace(_c). MPICH 4.0.2's
 * MPI_Isendrecv_replace fails on MPI_BOTTOM (a segmentation fault) and
 * receives garbage into noncontiguous datatypes, so it is made of
 * MPI_Isendrecv, as an implementation makes it: the send part is header
 * and data packed into a buffer of ours (MPI_PACKED: the receiver's
 * datatype takes it, see ms_pb_packed), held until the request
 * completes, and the receive part goes into the user's buffer with a
 * header of its own. */
static int ms_pb_ireplace(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
			  MPI_Comm comm, MPI_Request *req, unsigned fn, void *pc)
{
	const int64_t te = ms_pb_gnow();
	ms_pb_use s = ms_pb_none, r = ms_pb_none;
	int pos = 0;
	if (dest == MPI_PROC_NULL && src == MPI_PROC_NULL)
		return -1;
	if (dest != MPI_PROC_NULL) {
		int us = 0, hs = 0;
		if (count > INT_MAX || PMPI_Pack_size((int)count, dt, comm, &us) != MPI_SUCCESS ||
		    PMPI_Pack_size(MS_PB_HDR, MPI_BYTE, comm, &hs) != MPI_SUCCESS || us > INT_MAX - hs ||
		    (s.mem = malloc((size_t)us + (size_t)hs)) == NULL)
			return -1;
		ms_pb_hdr h;
		ms_pb_stamp(&h, te);
		if (PMPI_Pack(&h, MS_PB_HDR, MPI_BYTE, s.mem, us + hs, &pos, comm) != MPI_SUCCESS ||
		    PMPI_Pack(buf, (int)count, dt, s.mem, us + hs, &pos, comm) != MPI_SUCCESS) {
			ms_pb_put(&s);
			return -1;
		}
	}
	if (src != MPI_PROC_NULL) {
		if (ms_pb_get(&r, buf, count, dt, MS_PB_RECV, 1, NULL) != 0) {
			ms_pb_put(&s);
			return -1;
		}
		r.hdr->rank = -1;
	}
	int rc = PMPI_Isendrecv(s.mem ? s.mem : MPI_BOTTOM, pos, MPI_PACKED, dest, stag, src != MPI_PROC_NULL ? MPI_BOTTOM : buf,
				src != MPI_PROC_NULL ? 1 : 0, src != MPI_PROC_NULL ? r.type : MPI_BYTE, src, rtag, comm, req);
	if (dest != MPI_PROC_NULL)
		ms_pb_sent(fn, pc);
	if (rc == MPI_SUCCESS) {
		ms_pb_add(*req, src != MPI_PROC_NULL ? MS_PB_R_RECV : 0, ms_pb_comm_id(comm), &s, &r);
	} else {
		ms_pb_put(&s);
		ms_pb_put(&r);
	}
	return rc;
}

int ms_pb_MPI_Isendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
			MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Request *r, unsigned fn, void *pc)
{
	int rc = ms_pb_sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, NULL, r, 0, fn, pc);
	return rc == -1 ? PMPI_Isendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, r) : rc;
}

int ms_pb_MPI_Isendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
			  MPI_Count rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Request *r, unsigned fn,
			  void *pc)
{
	int rc = ms_pb_sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, NULL, r, 1, fn, pc);
	return rc == -1 ? PMPI_Isendrecv_c(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, r) : rc;
}

int ms_pb_MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
				MPI_Comm comm, MPI_Request *r, unsigned fn, void *pc)
{
	int rc = ms_pb_ireplace(buf, count, dt, dest, stag, src, rtag, comm, r, fn, pc);
	return rc == -1 ? PMPI_Isendrecv_replace(buf, count, dt, dest, stag, src, rtag, comm, r) : rc;
}

int ms_pb_MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
				  MPI_Comm comm, MPI_Request *r, unsigned fn, void *pc)
{
	int rc = ms_pb_ireplace(buf, count, dt, dest, stag, src, rtag, comm, r, fn, pc);
	return rc == -1 ? PMPI_Isendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, r) : rc;
}

int ms_pb_MPI_Sendrecv_c(const void *sbuf, MPI_Count scount, MPI_Datatype sdt, int dest, int stag, void *rbuf,
			 MPI_Count rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st, unsigned fn,
			 void *pc)
{
	int rc = ms_pb_sendrecv(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st, NULL, 1, fn, pc);
	return rc == -1 ? PMPI_Sendrecv_c(sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, st) : rc;
}

int ms_pb_MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype dt, int dest, int stag, int src, int rtag,
				 MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc)
{
	int rc = ms_pb_replace(buf, count, dt, dest, stag, src, rtag, comm, st, fn, pc);
	return rc == -1 ? PMPI_Sendrecv_replace_c(buf, count, dt, dest, stag, src, rtag, comm, st) : rc;
}

int ms_pb_MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st,
		     unsigned fn, void *pc)
{
	int rc = ms_pb_recv(buf, count, dt, src, tag, comm, st, fn, pc);
	return rc == -1 ? PMPI_Recv_c(buf, count, dt, src, tag, comm, st) : rc;
}

int ms_pb_MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r,
		      unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_irecv(buf, count, dt, src, tag, comm, r, 0);
	return rc == -1 ? PMPI_Irecv_c(buf, count, dt, src, tag, comm, r) : rc;
}

int ms_pb_MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *r,
			  unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_irecv(buf, count, dt, src, tag, comm, r, 1);
	return rc == -1 ? PMPI_Recv_init_c(buf, count, dt, src, tag, comm, r) : rc;
}

int ms_pb_MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *st, unsigned fn, void *pc)
{
	int rc = ms_pb_mrecv(buf, count, dt, msg, st, fn, pc);
	return rc == -1 ? PMPI_Mrecv_c(buf, count, dt, msg, st) : rc;
}

int ms_pb_MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *r, unsigned fn,
		       void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_imrecv(buf, count, dt, msg, r);
	return rc == -1 ? PMPI_Imrecv_c(buf, count, dt, msg, r) : rc;
}

/* The sends: the joined call passes one element (or the staged bytes), so
 * it is the int form, reached through the same trampolines. */
#define MS_PB_SENDS_C(X, IX)                                                                                             \
	int ms_pb_MPI_##X##_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,       \
			      unsigned fn, void *pc)                                                                    \
	{                                                                                                                \
		int rc = ms_pb_send(ms_pb_do_##X, buf, count, dt, dest, tag, comm, fn, pc);                                  \
		return rc == -1 ? PMPI_##X##_c(buf, count, dt, dest, tag, comm) : rc;                                    \
	}                                                                                                                \
	int ms_pb_MPI_##IX##_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,      \
			       MPI_Request *r, unsigned fn, void *pc)                                                   \
	{                                                                                                                \
		int rc = ms_pb_isend(ms_pb_do_##IX, buf, count, dt, dest, tag, comm, r, 0, fn, pc);                          \
		return rc == -1 ? PMPI_##IX##_c(buf, count, dt, dest, tag, comm, r) : rc;                                \
	}

#define MS_PB_INIT_C(X)                                                                                                  \
	int ms_pb_MPI_##X##_init_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,  \
				   MPI_Request *r, unsigned fn, void *pc)                                               \
	{                                                                                                                \
		int rc = ms_pb_isend(ms_pb_do_##X##_init, buf, count, dt, dest, tag, comm, r, 1, fn, pc);                    \
		return rc == -1 ? PMPI_##X##_init_c(buf, count, dt, dest, tag, comm, r) : rc;                            \
	}

MS_PB_SENDS_C(Send, Isend)
MS_PB_SENDS_C(Ssend, Issend)
MS_PB_SENDS_C(Rsend, Irsend)
MS_PB_INIT_C(Send)
MS_PB_INIT_C(Bsend)
MS_PB_INIT_C(Ssend)
MS_PB_INIT_C(Rsend)

static int ms_pb_do_Bsend(const void *b, int c, MPI_Datatype d, int de, int t, MPI_Comm cm)
{
	return PMPI_Bsend(b, c, d, de, t, cm);
}

static int ms_pb_do_Ibsend(const void *b, int c, MPI_Datatype d, int de, int t, MPI_Comm cm, MPI_Request *r)
{
	return PMPI_Ibsend(b, c, d, de, t, cm, r);
}

/* Buffered: packed like MPI_Bsend; a message too large to pack in an int
 * count goes with the datatype. */
int ms_pb_MPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, unsigned fn,
		      void *pc)
{
	int rc = ms_pb_packed(0, buf, count, dt, dest, tag, comm, NULL);
	if (rc == -1)
		rc = ms_pb_send(ms_pb_do_Bsend, buf, count, dt, dest, tag, comm, fn, pc);
	return rc == -1 ? PMPI_Bsend_c(buf, count, dt, dest, tag, comm) : rc;
}

int ms_pb_MPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		       MPI_Request *r, unsigned fn, void *pc)
{
	int rc = ms_pb_packed(1, buf, count, dt, dest, tag, comm, r);
	if (rc == -1)
		rc = ms_pb_isend(ms_pb_do_Ibsend, buf, count, dt, dest, tag, comm, r, 0, fn, pc);
	return rc == -1 ? PMPI_Ibsend_c(buf, count, dt, dest, tag, comm, r) : rc;
}
#endif

/* ---- probes ---- */

int ms_pb_MPI_Probe(int src, int tag, MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Probe(src, tag, comm, st);
	if (rc == MPI_SUCCESS && src != MPI_PROC_NULL)
		ms_pb_fix(st);
	return rc;
}

int ms_pb_MPI_Iprobe(int src, int tag, MPI_Comm comm, int *flag, MPI_Status *st, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Iprobe(src, tag, comm, flag, st);
	if (rc == MPI_SUCCESS && *flag && src != MPI_PROC_NULL)
		ms_pb_fix(st);
	return rc;
}

int ms_pb_MPI_Mprobe(int src, int tag, MPI_Comm comm, MPI_Message *m, MPI_Status *st, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Mprobe(src, tag, comm, m, st);
	if (rc == MPI_SUCCESS && src != MPI_PROC_NULL)
		ms_pb_fix(st);
	return rc;
}

int ms_pb_MPI_Improbe(int src, int tag, MPI_Comm comm, int *flag, MPI_Message *m, MPI_Status *st, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Improbe(src, tag, comm, flag, m, st);
	if (rc == MPI_SUCCESS && *flag && src != MPI_PROC_NULL)
		ms_pb_fix(st);
	return rc;
}

/* ---- persistent requests, cancel, free ---- */

static void ms_pb_started(MPI_Request *r, int n)
{
	if (!ms_pb_any())
		return;
	int64_t t = ms_pb_gnow();
	for (int i = 0; i < n; i++) {
		ms_pb_req *q = ms_pb_find(ms_pb_rkey(r[i]));
		if (q == NULL)
			continue;
		if (q->flags & MS_PB_R_SEND)
			ms_pb_stamp(q->s.hdr, t);
		if (q->flags & MS_PB_R_RECV)
			q->r.hdr->rank = -1;
	}
}

int ms_pb_MPI_Start(MPI_Request *r, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	ms_pb_started(r, 1);
	return PMPI_Start(r);
}

int ms_pb_MPI_Startall(int n, MPI_Request r[], unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	ms_pb_started(r, n);
	return PMPI_Startall(n, r);
}

int ms_pb_MPI_Request_free(MPI_Request *r, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	ms_pb_req *q = ms_pb_any() ? ms_pb_find(ms_pb_rkey(*r)) : NULL;
	int rc = PMPI_Request_free(r);
	if (q != NULL && rc == MPI_SUCCESS) {
		if (q->flags & MS_PB_R_PERSIST) {
			/* An inactive persistent request (the usual case): its
			 * headers are ours again. */
			ms_pb_put(&q->s);
			ms_pb_put(&q->r);
		}
		/* else: the message may still be under way into or out of
		 * the header: left allocated. */
		ms_pb_del(q);
	}
	return rc;
}

/* ---- completion ---- */

int ms_pb_MPI_Wait(MPI_Request *r, MPI_Status *st, unsigned fn, void *pc)
{
	if (!ms_pb_any())
		return PMPI_Wait(r, st);
	ms_pb_req *q = ms_pb_find(ms_pb_rkey(*r));
	if (q == NULL)
		return PMPI_Wait(r, st);
	const int64_t te = ms_pb_gnow();
	MPI_Status mine;
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	int rc = PMPI_Wait(r, st);
	ms_pb_done(q, st, rc, *r == MPI_REQUEST_NULL, te, fn, pc);
	return rc;
}

int ms_pb_MPI_Test(MPI_Request *r, int *flag, MPI_Status *st, unsigned fn, void *pc)
{
	if (!ms_pb_any())
		return PMPI_Test(r, flag, st);
	ms_pb_req *q = ms_pb_find(ms_pb_rkey(*r));
	if (q == NULL)
		return PMPI_Test(r, flag, st);
	const int64_t te = ms_pb_gnow();
	MPI_Status mine;
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	int rc = PMPI_Test(r, flag, st);
	if (*flag || (rc != MPI_SUCCESS && *r == MPI_REQUEST_NULL))
		ms_pb_done(q, st, rc, *r == MPI_REQUEST_NULL, te, fn, pc);
	return rc;
}

int ms_pb_MPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	ms_pb_req *q = ms_pb_any() ? ms_pb_find(ms_pb_rkey(r)) : NULL;
	int rc = PMPI_Request_get_status(r, flag, st);
	/* The header is read by the call that completes the request. */
	if (q != NULL && (q->flags & MS_PB_R_RECV) && rc == MPI_SUCCESS && *flag && st != MPI_STATUS_IGNORE &&
	    !ms_pb_cancelled(st))
		ms_pb_fix(st);
	return rc;
}

/* Completion of arrays of requests: the records are looked up before the
 * call (it sets completed requests to MPI_REQUEST_NULL). */
#define MS_PB_STACK 64
static uint32_t ms_pb_calls; /* completion calls of arrays that found records */

typedef struct {
	ms_pb_req *qs[MS_PB_STACK];
	MPI_Status sts[MS_PB_STACK];
	ms_pb_req **q;
	MPI_Status *st;
	int found;
	int64_t te;
} ms_pb_many;

/* ms_pb_many_begin finds the records of r[0..n); *sts: the statuses to
 * pass (ours when the caller ignores them and one is ours). 0: none. */
static int ms_pb_many_begin(ms_pb_many *m, MPI_Request *r, int n, MPI_Status **sts)
{
	m->found = 0;
	m->q = m->qs;
	m->st = NULL;
	if (!ms_pb_any() || n <= 0)
		return 0;
	if (n > MS_PB_STACK && (m->q = malloc((size_t)n * sizeof *m->q)) == NULL)
		return 0;
	/* A handle may come more than once (Open MPI's shared completed
	 * send request): its record is completed once. */
	const uint32_t call = __atomic_add_fetch(&ms_pb_calls, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++) {
		ms_pb_req *q = ms_pb_find(ms_pb_rkey(r[i]));
		if (q != NULL && q->mark == call)
			q = NULL;
		if ((m->q[i] = q) != NULL) {
			q->mark = call;
			m->found = 1;
		}
	}
	if (!m->found) {
		if (m->q != m->qs)
			free(m->q);
		return 0;
	}
	if (*sts == MPI_STATUSES_IGNORE) {
		m->st = m->sts;
		if (n > MS_PB_STACK && (m->st = malloc((size_t)n * sizeof *m->st)) == NULL) {
			m->st = NULL;
		}
		if (m->st != NULL)
			*sts = m->st;
	}
	m->te = ms_pb_gnow();
	return 1;
}

static void ms_pb_many_end(ms_pb_many *m)
{
	if (m->q != m->qs)
		free(m->q);
	if (m->st != NULL && m->st != m->sts)
		free(m->st);
}

/* ms_pb_done_in completes the record of r[i] after a completion call of
 * arrays that returned rc, its status sts[k]. When rc is
 * MPI_ERR_IN_STATUS, each status's MPI_ERROR tells the request's fate: a
 * request that is MPI_ERR_PENDING has not completed (MPICH 4.0.2's
 * MPI_Waitall returns at the first failed request, leaving the others
 * active), so its record stays for the call that completes it, and its
 * status is left as the implementation left it. After another error, or
 * without statuses, a request the call completed is MPI_REQUEST_NULL now
 * (a persistent one is taken for completed). */
static void ms_pb_done_in(ms_pb_many *m, int i, MPI_Request r[], MPI_Status sts[], int k, int rc, unsigned fn, void *pc)
{
	MPI_Status *st = sts != MPI_STATUSES_IGNORE ? &sts[k] : NULL;
	int err = MPI_SUCCESS;
	if (rc != MPI_SUCCESS) {
		if (ms_pb_class(rc) == MPI_ERR_IN_STATUS && st != NULL) {
			err = st->MPI_ERROR;
			if (ms_pb_class(err) == MPI_ERR_PENDING)
				return;
		} else {
			err = rc;
			if (r[i] != MPI_REQUEST_NULL && !(m->q[i]->flags & MS_PB_R_PERSIST))
				return;
		}
	}
	ms_pb_done(m->q[i], st, err, r[i] == MPI_REQUEST_NULL, m->te, fn, pc);
}

int ms_pb_MPI_Waitall(int n, MPI_Request r[], MPI_Status sts[], unsigned fn, void *pc)
{
	ms_pb_many m;
	if (!ms_pb_many_begin(&m, r, n, &sts))
		return PMPI_Waitall(n, r, sts);
	int rc = PMPI_Waitall(n, r, sts);
	for (int i = 0; i < n; i++)
		if (m.q[i] != NULL)
			ms_pb_done_in(&m, i, r, sts, i, rc, fn, pc);
	ms_pb_many_end(&m);
	return rc;
}

int ms_pb_MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status sts[], unsigned fn, void *pc)
{
	ms_pb_many m;
	if (!ms_pb_many_begin(&m, r, n, &sts))
		return PMPI_Testall(n, r, flag, sts);
	int rc = PMPI_Testall(n, r, flag, sts);
	if (*flag || rc != MPI_SUCCESS)
		for (int i = 0; i < n; i++)
			if (m.q[i] != NULL)
				ms_pb_done_in(&m, i, r, sts, i, rc, fn, pc);
	ms_pb_many_end(&m);
	return rc;
}

int ms_pb_MPI_Waitany(int n, MPI_Request r[], int *idx, MPI_Status *st, unsigned fn, void *pc)
{
	ms_pb_many m;
	MPI_Status *one = st == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : st, mine;
	if (!ms_pb_many_begin(&m, r, n, &one))
		return PMPI_Waitany(n, r, idx, st);
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	int rc = PMPI_Waitany(n, r, idx, st);
	if (*idx != MPI_UNDEFINED && *idx >= 0 && *idx < n && m.q[*idx] != NULL)
		ms_pb_done(m.q[*idx], st, rc, r[*idx] == MPI_REQUEST_NULL, m.te, fn, pc);
	ms_pb_many_end(&m);
	return rc;
}

int ms_pb_MPI_Testany(int n, MPI_Request r[], int *idx, int *flag, MPI_Status *st, unsigned fn, void *pc)
{
	ms_pb_many m;
	MPI_Status *one = st == MPI_STATUS_IGNORE ? MPI_STATUSES_IGNORE : st, mine;
	if (!ms_pb_many_begin(&m, r, n, &one))
		return PMPI_Testany(n, r, idx, flag, st);
	if (st == MPI_STATUS_IGNORE)
		st = &mine;
	int rc = PMPI_Testany(n, r, idx, flag, st);
	if (*flag && *idx != MPI_UNDEFINED && *idx >= 0 && *idx < n && m.q[*idx] != NULL)
		ms_pb_done(m.q[*idx], st, rc, r[*idx] == MPI_REQUEST_NULL, m.te, fn, pc);
	ms_pb_many_end(&m);
	return rc;
}

static int ms_pb_some(int wait, int n, MPI_Request r[], int *outn, int idx[], MPI_Status sts[], unsigned fn, void *pc)
{
	ms_pb_many m;
	if (!ms_pb_many_begin(&m, r, n, &sts))
		return wait ? PMPI_Waitsome(n, r, outn, idx, sts) : PMPI_Testsome(n, r, outn, idx, sts);
	int rc = wait ? PMPI_Waitsome(n, r, outn, idx, sts) : PMPI_Testsome(n, r, outn, idx, sts);
	if (*outn != MPI_UNDEFINED)
		for (int k = 0; k < *outn; k++) {
			int i = idx[k];
			if (i >= 0 && i < n && m.q[i] != NULL)
				ms_pb_done_in(&m, i, r, sts, k, rc, fn, pc);
		}
	ms_pb_many_end(&m);
	return rc;
}

int ms_pb_MPI_Waitsome(int n, MPI_Request r[], int *outn, int idx[], MPI_Status sts[], unsigned fn, void *pc)
{
	return ms_pb_some(1, n, r, outn, idx, sts, fn, pc);
}

int ms_pb_MPI_Testsome(int n, MPI_Request r[], int *outn, int idx[], MPI_Status sts[], unsigned fn, void *pc)
{
	return ms_pb_some(0, n, r, outn, idx, sts, fn, pc);
}

/* ---- buffered mode ---- */

/* A buffered message takes MPI_BSEND_OVERHEAD bytes of the attached
 * buffer besides its data, so a buffer of size bytes holds at most
 * size / MPI_BSEND_OVERHEAD messages at once: ours is larger by a header
 * for each, so that a buffer sized for the user's messages holds them
 * with their headers too. MPI_Buffer_detach gives the user's back. */
static void *ms_pb_ubuf, *ms_pb_obuf;
static MPI_Count ms_pb_usize;

/* ms_pb_attach attaches our larger buffer in place of the user's (big:
 * with MPI_Buffer_attach_c); -1: the user's is attached unchanged. */
static int ms_pb_attach(void *buf, MPI_Count size, int big)
{
	if (size < 0 || ms_pb_obuf != NULL)
		return -1;
	MPI_Count lim = big ? (MPI_Count)(SIZE_MAX / 2) : INT_MAX;
	MPI_Count more = (size / MPI_BSEND_OVERHEAD + 1) * MS_PB_HDR;
	MPI_Count n = size > lim - more ? lim : size + more;
	void *o = malloc((size_t)n);
	if (o == NULL)
		return -1;
	int rc;
#if MPI_VERSION >= 4
	rc = big ? PMPI_Buffer_attach_c(o, n) : PMPI_Buffer_attach(o, (int)n);
#else
	rc = PMPI_Buffer_attach(o, (int)n);
#endif
	if (rc != MPI_SUCCESS) {
		free(o);
		return rc;
	}
	ms_pb_obuf = o;
	ms_pb_ubuf = buf;
	ms_pb_usize = size;
	return rc;
}

/* ms_pb_detached gives the user's buffer back after a detach that
 * returned ours; its size in *size. */
static int ms_pb_detached(void *addr, MPI_Count *size)
{
	if (ms_pb_obuf == NULL || *(void **)addr != ms_pb_obuf)
		return 0;
	free(ms_pb_obuf);
	*(void **)addr = ms_pb_ubuf;
	*size = ms_pb_usize;
	ms_pb_obuf = NULL;
	return 1;
}

int ms_pb_MPI_Buffer_attach(void *buf, int size, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_attach(buf, size, 0);
	return rc == -1 ? PMPI_Buffer_attach(buf, size) : rc;
}

int ms_pb_MPI_Buffer_detach(void *addr, int *size, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Buffer_detach(addr, size);
	MPI_Count n;
	if (rc == MPI_SUCCESS && ms_pb_detached(addr, &n))
		*size = n > INT_MAX ? INT_MAX : (int)n;
	return rc;
}

#if MPI_VERSION >= 4
int ms_pb_MPI_Buffer_attach_c(void *buf, MPI_Count size, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = ms_pb_attach(buf, size, 1);
	return rc == -1 ? PMPI_Buffer_attach_c(buf, size) : rc;
}

int ms_pb_MPI_Buffer_detach_c(void *addr, MPI_Count *size, unsigned fn, void *pc)
{
	(void)fn;
	(void)pc;
	int rc = PMPI_Buffer_detach_c(addr, size);
	if (rc == MPI_SUCCESS)
		ms_pb_detached(addr, size);
	return rc;
}
#endif

/* ---- start ---- */

extern MPI_Comm ms_priv; /* priv.c */

/* ms_pb_fini frees the cached datatypes that no request holds (at
 * MPI_Finalize, before PMPI_Finalize; MPICH reports datatypes left). */
void ms_pb_fini(void)
{
	pthread_mutex_lock(&ms_pb_wlock);
	for (ms_pb_cnode *n = ms_pb_caches; n != NULL; n = n->next)
		for (unsigned i = 0; i < 1u << MS_PB_CBITS; i++)
			for (int k = 0; k < MS_PB_SLOTS; k++) {
				ms_pb_slot *s = &n->c[i].s[k];
				if (n->c[i].used && s->type != MPI_DATATYPE_NULL && __atomic_load_n(&s->busy, __ATOMIC_ACQUIRE) == 0) {
					ms_pb_tfree(&s->type);
					s->type = MPI_DATATYPE_NULL;
				}
			}
	pthread_mutex_unlock(&ms_pb_wlock);
	if (getenv("MPISCOPE_DEBUG_PIGGYBACK"))
		fprintf(stderr,
			"mpiscope: piggyback: rank %d: datatypes %d requests %d hits %llu misses %llu uncached %llu "
			"records %llu staged %llu\n",
			ms_world_rank, ms_pb_ntypes, ms_pb_pending, (unsigned long long)ms_pb_stats[0],
			(unsigned long long)ms_pb_stats[1], (unsigned long long)ms_pb_stats[2], (unsigned long long)ms_pb_stats[3],
			(unsigned long long)ms_pb_stats[4]);
}
