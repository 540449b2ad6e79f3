//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * special.c: the wrappers written by hand (the generator leaves them out,
 * see wrapgen.Special): start of the run, MPI_Finalize, MPI_Abort and
 * MPI_Pcontrol, with the regions and user events Pcontrol creates.
 */
#define _GNU_SOURCE
#include "ms.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "_cgo_export.h"
#include "safety.h"

MS_HIDDEN int ms_tsc_invariant(void);
MS_HIDDEN void ms_comm_init(void);

/* Run state read by Go. */
uint64_t ms_app_start;     /* ticks at the end of init, or at the last reset */
uint64_t ms_app_end;       /* ticks at the start of finalize, 0 while running */
uint64_t ms_cal_tsc0, ms_cal_ns0; /* calibration: ticks and CLOCK_MONOTONIC at init */
int64_t ms_real0;          /* CLOCK_REALTIME (ns) at init */
int ms_started, ms_finished;
int ms_thread_level;
int ms_pcontrol_ipm;       /* MPISCOPE_PCONTROL=ipm */
int ms_quiet;
MPI_Comm ms_priv = MPI_COMM_NULL; /* our own duplicate of MPI_COMM_WORLD */

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
static unsigned char ms_warned[64];

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

int ms_session_mode; /* started by MPI_Session_init, not MPI_Init */

static int ms_env_int(const char *a, const char *b, int def)
{
	const char *v = getenv(a);
	if (v == NULL)
		v = getenv(b);
	return v ? atoi(v) : def;
}

static void ms_start_mode(int level, int session)
{
	/* MPISCOPE_ENABLE=never: nothing starts, so MPI_Pcontrol and the end
	 * of the run do nothing either, and every wrapper passes its calls on
	 * as under MPI_Pcontrol(0). (The launcher does not even load the
	 * library then: cli.) */
	const char *en = getenv("MPISCOPE_ENABLE");
	if (ms_started || (en != NULL && strcmp(en, "never") == 0))
		return;
	ms_started = 1;
	ms_session_mode = session;
	ms_thread_level = level;
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	ms_real0 = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
	if (session) {
		/* No MPI_COMM_WORLD in the sessions model: the launcher tells
		 * rank and size; there is no private communicator, so each rank
		 * writes its own file at MPI_Session_finalize. */
		ms_world_rank = ms_env_int("PMI_RANK", "OMPI_COMM_WORLD_RANK", 0);
		ms_world_size = ms_env_int("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", 1);
		if (ms_world_size < 1 || ms_world_rank < 0 || ms_world_rank >= ms_world_size) {
			ms_world_rank = 0;
			ms_world_size = 1;
		}
	} else {
		ms_comm_init();
		ms_types_probe();
		PMPI_Comm_dup(MPI_COMM_WORLD, &ms_priv);
	}
	int flags = msgoStart(session);
	/* flags: 1 = record from the start, 2 = TSC allowed, 4 = IPM Pcontrol,
	 * 8 = quiet */
	ms_use_tsc = (flags & 2) && ms_tsc_invariant();
#if defined(__x86_64__) || defined(__i386__)
	ms_gate_set(MS_G_NOTSC, !ms_use_tsc); /* the wrappers' fast path reads the TSC */
#endif
	ms_pcontrol_ipm = (flags & 4) != 0;
	ms_quiet = (flags & 8) != 0;
	ms_clock_pair(&ms_cal_tsc0, &ms_cal_ns0);
	ms_app_start = ms_cal_tsc0;
	ms_gate_set(MS_G_OFF, !(flags & 1));
	ms_tracing = (flags & 16) != 0; /* MPISCOPE_TRACE=1 (trace.c) */
	ms_safety_init(); /* signals, exit hook, snapshot timer (safety.c) */
}

static void ms_start(int level) { ms_start_mode(level, 0); }

/* Entry points for the Fortran bindings (fortran.c): start, finalize and
 * abort logic shared with the C wrappers below. */
void ms_start_run(int level) { ms_start(level); }

int MPI_Init(int *argc, char ***argv)
{
	ms_safety_preinit();
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		ms_start(MPI_THREAD_SINGLE);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	ms_safety_preinit();
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		ms_start(*provided);
	return rc;
}

/* ms_stop ends recording on this rank; Go then reads the tables. */
static void ms_stop(void)
{
	ms_app_end = ms_now();
	ms_gate_set(MS_G_OFF, 1);
}

void ms_finalize_run(void)
{
	if (ms_started && !ms_finished) {
		ms_stop();
		ms_finished = 1;
		msgoFinalize();
		ms_safety_fini();
		if (ms_priv != MPI_COMM_NULL)
			PMPI_Comm_free(&ms_priv);
	}
}

int MPI_Finalize(void)
{
	ms_finalize_run();
	return PMPI_Finalize();
}

void ms_abort_run(int errorcode)
{
	if (ms_started && !ms_finished) {
		ms_stop();
		ms_finished = 1;
		ms_safety_end(MS_END_ABORT, errorcode); /* bounded in time */
	}
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
	ms_abort_run(errorcode);
	return PMPI_Abort(comm, errorcode);
}

#if defined(MPI_SESSION_NULL)
static int ms_sessions; /* sessions open */

int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
	if (!ms_started)
		ms_safety_preinit(); /* as MPI_Init: the snapshot signal's disposition before the MPI library's */
	int rc = PMPI_Session_init(info, errhandler, session);
	if (rc == MPI_SUCCESS) {
		__atomic_add_fetch(&ms_sessions, 1, __ATOMIC_RELAXED);
		ms_start_mode(MPI_THREAD_SINGLE, 1);
	}
	return rc;
}

int MPI_Session_finalize(MPI_Session *session)
{
	if (ms_session_mode && !ms_finished && __atomic_sub_fetch(&ms_sessions, 1, __ATOMIC_RELAXED) == 0) {
		ms_stop();
		ms_finished = 1;
		msgoSessionEnd();
		ms_safety_fini();
	}
	return PMPI_Session_finalize(session);
}
#endif

/* ---- regions and events ---- */

static void ms_warn_level(int level)
{
	unsigned idx = (unsigned)(level + 32) & 63;
	if (ms_warned[idx])
		return;
	ms_warned[idx] = 1;
	if (ms_world_rank == 0 && !ms_quiet)
		fprintf(stderr, "mpiscope: MPI_Pcontrol(%d) has no meaning here and is ignored (see the README)\n", level);
}

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

static void ms_region_enter(const char *name)
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

static void ms_region_leave(void)
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

static void ms_event(const char *text)
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

/*
 * MPI_Pcontrol levels (README "Pcontrol"):
 *   0 off, 1 on, 2 flush a snapshot (and the trace buffers), 3 reset,
 *   6 / -6 start / stop event tracing, 4 name / -4 [name] region
 *   enter / leave, 5 text user event. With MPISCOPE_PCONTROL=ipm:
 *   (1, name) enters and (-1) leaves a region.
 */
int ms_pcontrol(int level, va_list ap)
{
	if (!ms_started || ms_finished)
		return MPI_SUCCESS;
	if (ms_pcontrol_ipm && (level == 1 || level == -1)) {
		if (level == 1)
			ms_region_enter(va_arg(ap, const char *));
		else
			ms_region_leave();
		return MPI_SUCCESS;
	}
	switch (level) {
	case 0:
		ms_gate_set(MS_G_OFF, 1);
		break;
	case 1:
		ms_gate_set(MS_G_OFF, ms_disabled); /* off for good after an internal error */
		break;
	case 2:
		msgoFlush();
		break;
	case 3:
		/* Each thread clears its own tables (events included) at its
		 * next recorded call; app time restarts now. */
		__atomic_add_fetch(&ms_gate, MS_G_EPOCH1, __ATOMIC_SEQ_CST);
		ms_app_start = ms_now();
		break;
	case 4:
		ms_region_enter(va_arg(ap, const char *));
		break;
	case -4:
		ms_region_leave();
		break;
	case 5:
		ms_event(va_arg(ap, const char *));
		break;
	case 6:
		/* Start tracing (the writer opens the rank's file the first time). */
		if (msgoTraceStart())
			ms_trace_set(1);
		break;
	case -6:
		ms_trace_set(0);
		break;
	default:
		ms_warn_level(level);
		break;
	}
	return MPI_SUCCESS;
}

int MPI_Pcontrol(const int level, ...)
{
	va_list ap;
	va_start(ap, level);
	ms_pcontrol(level, ap);
	va_end(ap);
	/* The next tool in a chain sees the level (varargs cannot be forwarded). */
	return PMPI_Pcontrol(level);
}

/* ---- helpers for Go: our own collectives on ms_priv ---- */

int ms_priv_bcast(void *buf, int len, int root)
{
	return PMPI_Bcast(buf, len, MPI_BYTE, root, ms_priv);
}

#define MS_CHUNK (1 << 30)

int ms_priv_send(const void *buf, int64_t len, int dest)
{
	int rc = PMPI_Send(&len, 1, MPI_INT64_T, dest, 1, ms_priv);
	for (int64_t off = 0; rc == MPI_SUCCESS && off < len; off += MS_CHUNK) {
		int n = (int)(len - off < MS_CHUNK ? len - off : MS_CHUNK);
		rc = PMPI_Send((const char *)buf + off, n, MPI_BYTE, dest, 2, ms_priv);
	}
	return rc;
}

/* ms_priv_recv returns a malloc'd buffer (freed by the caller) and its length. */
void *ms_priv_recv(int src, int64_t *len)
{
	*len = 0;
	if (PMPI_Recv(len, 1, MPI_INT64_T, src, 1, ms_priv, MPI_STATUS_IGNORE) != MPI_SUCCESS || *len < 0)
		return NULL;
	char *buf = malloc(*len > 0 ? (size_t)*len : 1);
	if (buf == NULL) {
		/* Still take the messages off the wire, chunk by chunk. */
		char scratch[4096];
		for (int64_t off = 0; off < *len; off += MS_CHUNK) {
			MPI_Status st;
			PMPI_Probe(src, 2, ms_priv, &st);
			int n = 0;
			PMPI_Get_count(&st, MPI_BYTE, &n);
			char *tmp = malloc((size_t)n);
			PMPI_Recv(tmp ? tmp : scratch, tmp ? n : 0, MPI_BYTE, src, 2, ms_priv, MPI_STATUS_IGNORE);
			free(tmp);
		}
		return NULL;
	}
	for (int64_t off = 0; off < *len; off += MS_CHUNK) {
		int n = (int)(*len - off < MS_CHUNK ? *len - off : MS_CHUNK);
		PMPI_Recv(buf + off, n, MPI_BYTE, src, 2, ms_priv, MPI_STATUS_IGNORE);
	}
	return buf;
}

int ms_priv_barrier(void) { return PMPI_Barrier(ms_priv); }

void ms_mpi_version(char *lib, int liblen, int *major, int *minor)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	v[0] = 0;
	PMPI_Get_library_version(v, &n);
	snprintf(lib, (size_t)liblen, "%s", v);
	PMPI_Get_version(major, minor);
}

int ms_region_count(void) { return __atomic_load_n(&ms_nregions, __ATOMIC_ACQUIRE); }
const char *ms_region_path(int i) { return i > 0 && i < ms_nregions ? ms_regions[i].path : ""; }
int ms_region_parent(int i) { return i > 0 && i < ms_nregions ? (int)ms_regions[i].parent : 0; }
int ms_event_count(void) { return __atomic_load_n(&ms_nevents, __ATOMIC_ACQUIRE); }
const char *ms_event_text(int i) { return ms_events_text[i]; }
