/*
 * driver.c: ThreadSanitizer harness for the C hot path (TestHotPathTSan).
 *
 * It links the real hot path (core.c, profile.c) and the real generated wrappers
 * (zwrap_mpich.c) against a fake PMPI layer defined here, so no MPI runs:
 * 8 threads call MPI_Send through the wrappers while they also create and
 * free communicators, and a control thread keeps invalidating the datatype
 * cache and flipping ms_gate's clock bit (MS_G_NOTSC), which sends the
 * calls between their wrappers' fast and slow paths; both record, so the
 * counts do not change. The threads' first calls race to bind the
 * wrappers' PMPI_ pointers (ms_bind). The run must be
 * free of data races (TSan exits non-zero otherwise) and count exactly
 * THREADS x ITERS sends. The control thread also reads every thread's
 * call in progress, as a snapshot does (ms_busy_read), and checks it.
 * With an argument N > 1 it runs at call-path depth N (callpath.h): every
 * call then goes through ms_path_X and interns its path, and each send
 * must hold one (none in the "other paths" bucket, no walk cut short).
 */
#include "api.h"
#include "callpath.h"

#include <stdlib.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define THREADS 8
#define ITERS 100000

/* ---- stubs for the parts linked from Go in the real library ---- */
int ms_tracing;
volatile unsigned char ms_trace_fn[MS_MAXFUNCS];
__thread void *ms_fpc __attribute__((tls_model("initial-exec")));
volatile uint32_t ms_trace_fgen;
ms_comm *volatile ms_trace_cms[MS_MAXCOMMS];
ms_tbuf *ms_trace_slow(ms_thread *t) { return NULL; }
int64_t ms_trace_get_count(const MPI_Status *st) { return 0; }
int ms_trace_save(const MPI_Request *reqs, int n, MPI_Status **st) { return 0; }
int ms_trace_saveall(const MPI_Request *reqs, int n, MPI_Status **st) { return 0; }
void ms_trace_done(unsigned fn, uint64_t t1, int kind, int n, const int *idx, const int *indices, const int *flag, const MPI_Status *st) {}
void ms_trace_cpl1(unsigned fn, uint64_t t1, uintptr_t h, const MPI_Status *st) {}
void ms_trace_post(unsigned fn, uint64_t t0, const ms_comm *cm, unsigned kind, int peer, int tag, int64_t bytes, uintptr_t req) {}
void ms_trace_ev(ms_tbuf *tb, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int64_t bytes, const ms_comm *cm, int flags, int speer, int stag, int rpeer, int rtag, int64_t rbytes, const MPI_Status *st, const MPI_Request *req) {}
void ms_tdef_write(ms_tbuf *tb) {}
void ms_tdef_put(ms_tbuf *tb) {}
ms_tbuf ms_tnone;
void ms_tpost_open(ms_tbuf *tb, ms_tmemo *mm, uint64_t t0, uint64_t t1, uint64_t req) {}
uint64_t ms_trole[1u << MS_TROLE_BITS];
ms_twin *ms_twin_created(MPI_Win w, const ms_comm *cm) { return NULL; }
ms_twin *ms_twin_of(MPI_Win w) { return NULL; }
void ms_twin_freed(ms_twin *e) {}
ms_twin *ms_tfile_opened(MPI_File f, const ms_comm *cm, const char *name, int amode) { return NULL; }
ms_twin *ms_tfile_of(MPI_File f) { return NULL; }
void ms_tfile_closed(ms_twin *e) {}
void ms_trace_rma(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *w, int target, int64_t sbytes, int64_t rbytes, int info, MPI_Group grp, const MPI_Request *req) {}
void ms_trace_io(ms_thread *t, unsigned fn, void *pc, uint64_t t0, uint64_t t1, int ok, const ms_twin *f, int64_t sbytes, int64_t rbytes, int info, const MPI_Request *req) {}
void ms_tmsg_note(ms_thread *t, MPI_Message m, const ms_comm *cm) {}
const ms_comm *ms_tmsg_comm(ms_thread *t, MPI_Message m) { return NULL; }
int ms_qmpi_mode; /* qmpi.c: QMPI mode off */
volatile uint32_t ms_qoff = 1;
int ms_qmpi_wanted(void) { return 0; }

/* ---- a fake PMPI layer: just enough for the wrappers and the caches ---- */
static int next_comm = 0x44000010;
int PMPI_Send(const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m) { return MPI_SUCCESS; }
int PMPI_Barrier(MPI_Comm c) { return MPI_SUCCESS; }
int PMPI_Comm_size(MPI_Comm c, int *n) { *n = 4; return MPI_SUCCESS; }
int PMPI_Comm_rank(MPI_Comm c, int *r) { *r = 0; return MPI_SUCCESS; }
int PMPI_Comm_test_inter(MPI_Comm c, int *f) { *f = 0; return MPI_SUCCESS; }
int PMPI_Comm_group(MPI_Comm c, MPI_Group *g) { *g = (MPI_Group)0x48000001; return MPI_SUCCESS; }
int PMPI_Group_free(MPI_Group *g) { *g = MPI_GROUP_NULL; return MPI_SUCCESS; }
int PMPI_Group_translate_ranks(MPI_Group a, int n, const int *r, MPI_Group b, int *out)
{
	for (int i = 0; i < n; i++)
		out[i] = r[i];
	return MPI_SUCCESS;
}
int PMPI_Type_size(MPI_Datatype d, int *s) { *s = 8; return MPI_SUCCESS; }
int PMPI_Comm_dup(MPI_Comm c, MPI_Comm *n) { *n = (MPI_Comm)__atomic_add_fetch(&next_comm, 1, __ATOMIC_RELAXED); return MPI_SUCCESS; }
int PMPI_Comm_free(MPI_Comm *c) { *c = MPI_COMM_NULL; return MPI_SUCCESS; }

MS_HIDDEN void ms_comm_init(void);

static void *worker(void *arg)
{
	double x = 1;
	long id = (long)arg;
	for (int i = 0; i < ITERS; i++) {
		MPI_Send(&x, 1, MPI_DOUBLE, (int)((id + i) % 4), 0, MPI_COMM_WORLD);
		if (i % 5000 == 0) {
			MPI_Comm c;
			MPI_Comm_dup(MPI_COMM_WORLD, &c);
			MPI_Barrier(c);
			MPI_Comm_free(&c);
		}
	}
	return NULL;
}

static volatile int stop;
static int fn_send = -1;
static unsigned long busy_seen, busy_bad;

/* busy_check reads every thread's call in progress as a snapshot does
 * (ms_busy_read): MPI_Send's must be whole (peer 0-3, tag 0, world). */
static void busy_check(void)
{
	for (ms_thread *t = __atomic_load_n(&ms_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		ms_busy_t b;
		if (!ms_busy_read(t, &b))
			continue;
		busy_seen++;
		if (b.t0 == 0 || b.pc == 0 || (b.fn == fn_send && (b.peer < 0 || b.peer > 3 || b.tag != 0 || b.comm != ms_world_comm.id)))
			busy_bad++;
	}
}

static void *control(void *arg)
{
	for (unsigned i = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++) {
		ms_types_changed();
		ms_gate_set(MS_G_NOTSC, i & 1);
		busy_check();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 1;
	ms_comm_init();
	if (depth > 1)
		ms_path_setup(depth);
	for (int i = 0; i < ms_nfuncs; i++)
		if (strcmp(ms_fn_names[i], "MPI_Send") == 0)
			fn_send = i;
	ms_gate_set(MS_G_OFF, 0);
	pthread_t th[THREADS], ctl;
	pthread_create(&ctl, NULL, control, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(ctl, NULL);

	int send = -1, barrier = -1;
	for (int i = 0; i < ms_nfuncs; i++) {
		if (strcmp(ms_fn_names[i], "MPI_Send") == 0)
			send = i;
		if (strcmp(ms_fn_names[i], "MPI_Barrier") == 0)
			barrier = i;
	}
	unsigned long long sends = 0, bytes = 0, barriers = 0, peer0 = 0, tagged = 0;
	int threads = 0;
	for (ms_thread *t = ms_threads; t; t = t->next) {
		threads++;
		for (size_t i = 0; i < ((size_t)1 << MS_SITE_BITS); i++) {
			if ((t->sites[i].key & 0xffff) == (uint64_t)send && t->sites[i].calls) {
				sends += t->sites[i].calls;
				bytes += (unsigned long long)t->sites[i].bytes;
				if ((t->sites[i].pc & (MS_PATH_TAG | MS_PATH_OTHER)) == MS_PATH_TAG)
					tagged += t->sites[i].calls;
			}
			if ((t->sites[i].key & 0xffff) == (uint64_t)barrier)
				barriers += t->sites[i].calls;
		}
		peer0 += t->peers[0].smsgs;
	}
	printf("threads=%d sends=%llu bytes=%llu barriers=%llu peer0=%llu\n", threads, sends, bytes, barriers, peer0);
	printf("busybad=%lu (of %lu calls in progress read)\n", busy_bad, busy_seen);
	unsigned long long npaths = 0, other = 0, wshort = 0, deepest = 0;
	for (ms_paths *p = ms_paths_head(); p; p = p->next) {
		npaths += p->npaths;
		other += p->other;
		wshort += p->walks_short;
		for (uint32_t i = 0; i < (1u << MS_PATH_BITS); i++)
			if (p->slot[i].n > deepest)
				deepest = p->slot[i].n;
	}
	printf("depth=%d tagged=%llu paths=%llu deepest=%llu other=%llu short=%llu\n", depth, tagged, npaths, deepest, other, wshort);
	/* Bindings of PMPI_ pointers that dlsym found (MS_PMPI): none unless the
	 * executable exports this file's PMPI_ functions (-rdynamic). */
	printf("bound=%d\n", __atomic_load_n(&ms_bound, __ATOMIC_RELAXED));
	return 0;
}
