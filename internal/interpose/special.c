//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * special.c: the wrappers written by hand (the generator leaves them out,
 * see wrapgen.Special): start of the run, MPI_Finalize, MPI_Abort and
 * MPI_Pcontrol, with the regions and user events Pcontrol creates.
 */
#define _GNU_SOURCE
#include "ms.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "_cgo_export.h"
#include "safety.h"
#include "chain.h"

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

/* ---- the MPI this library was built for ----
 *
 * A library built for one MPI family and loaded into a program of the
 * other (the launcher's -family or -lib, LD_PRELOAD of the wrong build)
 * must not touch MPI: its handles (MPI_COMM_WORLD, datatypes) mean nothing
 * to that MPI, and its wrappers' types narrow the program's (MPICH's
 * handles are ints, Open MPI's pointers). At load, before the program's
 * first MPI call, ms_family_check finds the library that defines PMPI_Init
 * for the program (dlsym RTLD_DEFAULT, as ms_bind binds the wrappers) and
 * tells its family by a symbol only that family defines. On a mismatch
 * (ms_foreign) every wrapper is bound at once (their first-call stubs
 * would narrow handles kept across the binding) and recording stays off
 * for good: each wrapper passes its call on as under MPI_Pcontrol(0), the
 * hand-written ones too, nothing starts at MPI_Init and nothing is
 * written; rank 0 warns once. When the symbols tell nothing (a static MPI
 * library), the library version string decides at MPI_Init, before our
 * first call that takes a handle. */
#if defined(OPEN_MPI)
#define MS_FAMILY MS_FAM_OPENMPI
#elif defined(MPICH_VERSION) || defined(MPICH)
#define MS_FAMILY MS_FAM_MPICH
#else
#define MS_FAMILY MS_FAM_UNKNOWN
#endif
enum { MS_FAM_UNKNOWN, MS_FAM_OPENMPI, MS_FAM_MPICH };
static const char *const ms_fam_names[] = {"an unknown MPI", "Open MPI", "MPICH"};
static const char *const ms_fam_dirs[] = {"?", "openmpi", "mpich"};

MS_HIDDEN void ms_bind_all(void); /* zwrap_<family>.c: bind every wrapper's PMPI_ pointer */
int ms_foreign;               /* the program's MPI is not this build's: pass everything through */
static int ms_foreign_fam;    /* the program's family */
static char ms_foreign_lib[512]; /* the library that defines the program's PMPI_Init */

/* ms_family_of tells the family of a loaded MPI library by its symbols:
 * Open MPI's predefined objects (MPI_COMM_WORLD is &ompi_mpi_comm_world),
 * MPICH's MPIR_ functions that its mpi.h names (MPI_DUP_FN) or that ROMIO
 * calls. */
static int ms_family_of(void *h)
{
	if (dlsym(h, "ompi_mpi_comm_world") != NULL)
		return MS_FAM_OPENMPI;
	if (dlsym(h, "MPIR_Dup_fn") != NULL || dlsym(h, "MPIR_Err_create_code") != NULL)
		return MS_FAM_MPICH;
	return MS_FAM_UNKNOWN;
}

/* ms_family_of_version tells it from MPI_Get_library_version's string. */
static int ms_family_of_version(const char *v)
{
	if (strncmp(v, "Open MPI", 8) == 0)
		return MS_FAM_OPENMPI;
	if (strstr(v, "MPICH") != NULL || strstr(v, "Intel(R) MPI") != NULL)
		return MS_FAM_MPICH;
	return MS_FAM_UNKNOWN;
}

static void ms_go_foreign(int fam, const char *lib)
{
	ms_foreign_fam = fam;
	snprintf(ms_foreign_lib, sizeof ms_foreign_lib, "%s", lib ? lib : "");
	ms_disable(); /* gate off for good: Pcontrol(1) cannot turn it on */
	ms_bind_all();
	__atomic_store_n(&ms_foreign, 1, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void ms_family_check(void)
{
	if (MS_FAMILY == MS_FAM_UNKNOWN)
		return;
	void *init = dlsym(RTLD_DEFAULT, "PMPI_Init");
	Dl_info di;
	if (init == NULL || dladdr(init, &di) == 0 || di.dli_fname == NULL)
		return;
	void *h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return;
	int fam = ms_family_of(h);
	dlclose(h);
	if (fam != MS_FAM_UNKNOWN && fam != MS_FAMILY)
		ms_go_foreign(fam, di.dli_fname);
}

/* ms_version_check: the symbols told nothing; the library version string
 * (safe in both ABIs: a character buffer as large as either family's
 * MPI_MAX_LIBRARY_VERSION_STRING, and an int) decides, after PMPI_Init. */
static void ms_version_check(void)
{
	static char v[8192];
	int n = 0;
	if (ms_foreign || MS_FAMILY == MS_FAM_UNKNOWN)
		return;
	v[0] = 0;
	if (PMPI_Get_library_version(v, &n) != MPI_SUCCESS)
		return;
	v[sizeof v - 1] = 0;
	int fam = ms_family_of_version(v);
	if (fam != MS_FAM_UNKNOWN && fam != MS_FAMILY)
		ms_go_foreign(fam, "");
}

/* ms_env_rank: this process's rank as the launcher tells it (-1: none). */
static int ms_env_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v != NULL && *v)
			return atoi(v);
	}
	return -1;
}

/* ms_foreign_warn: one line on rank 0 (none under MPISCOPE_QUIET=1 or
 * MPISCOPE_ENABLE=never), at the first MPI_Init. */
static void ms_foreign_warn(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
		return;
	const char *q = getenv("MPISCOPE_QUIET"), *en = getenv("MPISCOPE_ENABLE");
	if ((q != NULL && strcmp(q, "1") == 0) || (en != NULL && strcmp(en, "never") == 0) || ms_env_rank() > 0)
		return;
	fprintf(stderr,
		"mpiscope: warning: this libmpiscope was built for %s but the program runs on %s%s%s%s: profiling off, "
		"every MPI call passed on untouched (use the build in lib/%s/, or the launcher: mpirun ... mpiscope ./app)\n",
		ms_fam_names[MS_FAMILY], ms_fam_names[ms_foreign_fam], ms_foreign_lib[0] ? " (" : "", ms_foreign_lib,
		ms_foreign_lib[0] ? ")" : "", ms_fam_dirs[ms_foreign_fam]);
}

static int ms_env_int(const char *a, const char *b, int def)
{
	const char *v = getenv(a);
	if (v == NULL)
		v = getenv(b);
	return v ? atoi(v) : def;
}

/* ms_others_switches: the context switches so far of every thread of the
 * process but the caller (/proc/self/task/<tid>/status), or 0 when they
 * cannot be read; *running tells whether one of them is running or
 * waiting for a CPU (state R in /proc/self/task/<tid>/stat). */
static uint64_t ms_others_switches(int *running)
{
	*running = 0;
	DIR *d = opendir("/proc/self/task");
	if (d == NULL)
		return 0;
	long self = syscall(SYS_gettid);
	uint64_t sum = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atol(e->d_name) == self)
			continue;
		char path[64], buf[2048];
		snprintf(path, sizeof path, "/proc/self/task/%.20s/status", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		for (const char *k = buf; (k = strstr(k, "ctxt_switches:")) != NULL; k += 14)
			sum += strtoull(k + 14, NULL, 10);
		snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		const char *st = strrchr(buf, ')');
		if (st != NULL && st[1] == ' ' && st[2] == 'R')
			*running = 1;
	}
	closedir(d);
	return sum;
}

/* ms_go_settle lets the Go runtime go to sleep before the application
 * has its core back, after a call into Go (cgo.go: coldLeave has left it
 * nothing to do). A C thread returning from Go leaves its P in a system
 * call; sysmon takes it back a tick or two later (20 us each), a thread
 * started to look for work finds none, and sysmon sleeps until a timer is
 * due (none while the application runs). Those few wake-ups happen during
 * this pause, inside the MPI call, not on the application's time: it
 * lasts until no other thread of the process has switched, nor waited for
 * a CPU, for two half-milliseconds in a row (at least 1 ms, at most 10; a
 * loaded node can keep a runtime thread waiting for a CPU longer than
 * 1 ms). */
static void ms_go_settle(void)
{
	int running;
	uint64_t prev = ms_others_switches(&running);
	int same = 0;
	for (int i = 0; i < 20 && same < 2; i++) {
		struct timespec ts = {0, 500000};
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
		uint64_t now = ms_others_switches(&running);
		same = now == prev && !running ? same + 1 : 0;
		prev = now;
	}
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
	ms_version_check();
	if (ms_foreign) {
		ms_foreign_warn();
		return;
	}
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
	ms_off_mark(!(flags & 1), ms_app_start); /* time off: hot.c */
	ms_tracing = (flags & 16) != 0; /* MPISCOPE_TRACE=1 (trace.c) */
	ms_safety_init(); /* signals, exit hook, snapshot timer (safety.c) */
	msgoIdle(); /* the Go runtime left with nothing to do (cgo.go) */
	ms_go_settle();
}

static void ms_start(int level) { ms_start_mode(level, 0); }

/* Entry points for the Fortran bindings (fortran.c): start, finalize and
 * abort logic shared with the C wrappers below. */
void ms_start_run(int level) { ms_start(level); }

int MPI_Init(int *argc, char ***argv)
{
	ms_safety_preinit();
	int rc = ms_chain_Init(argc, argv); /* chain.c: PMPI_Init, or the stacked tools */
	if (rc == MPI_SUCCESS)
		ms_start(MPI_THREAD_SINGLE);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	ms_safety_preinit();
	int rc = ms_chain_Init_thread(argc, argv, required, provided);
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
		ms_go_settle();
		if (ms_priv != MPI_COMM_NULL)
			PMPI_Comm_free(&ms_priv);
	}
}

int MPI_Finalize(void)
{
	ms_finalize_run();
	return ms_chain_Finalize();
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
	/* Another MPI's handle: passed on whole (a tail call), never kept in
	 * a variable of this build's narrower type. */
	if (__builtin_expect(ms_foreign, 0))
		return PMPI_Abort(comm, errorcode);
	ms_abort_run(errorcode);
	return ms_chain_Abort(comm, errorcode);
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
		ms_off_mark(1, ms_now());
		break;
	case 1:
		ms_gate_set(MS_G_OFF, ms_disabled); /* off for good after an internal error */
		ms_off_mark(ms_disabled, ms_now());
		break;
	case 2:
		msgoFlush();
		ms_go_settle();
		break;
	case 3:
		/* Each thread clears its own tables (events included) at its
		 * next recorded call; app time restarts now. */
		__atomic_add_fetch(&ms_gate, MS_G_EPOCH1, __ATOMIC_SEQ_CST);
		ms_app_start = ms_now();
		ms_off_reset(ms_app_start);
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
		if (msgoTraceStart()) {
			msgoKeepGC(); /* the writer runs Go while the application runs */
			ms_trace_set(1);
		}
		ms_go_settle();
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
	/* The next level sees the level, and in a stack the first argument
	 * after it (chain.c). */
	va_start(ap, level);
	int rc = ms_chain_Pcontrol(level, ap);
	va_end(ap);
	return rc;
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
