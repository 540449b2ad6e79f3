//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * lifecycle.c: the run's start and end, and the hand-written wrappers
 * (the generator leaves them out, see wrapgen.Special): the check that
 * the program's MPI is the one this library was built for, MPI_Init and
 * MPI_Init_thread (start: the communicator cache, the private
 * communicator, Go's settings, the clock, safety), MPI_Finalize,
 * MPI_Abort, the sessions model (MPI_Session_init, _finalize) and the
 * dispatch of MPI_Pcontrol's levels (regions and events: regions.c). It
 * owns the run's state flags (lifecycle.h).
 */
#define _GNU_SOURCE
#include "api.h"
#include "lifecycle.h"
#include "qmpi.h"
#include "chain.h" /* the next level: PMPI_ or the stacked tools */

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Run state read by Go. */
uint64_t ms_app_start;     /* ticks at the end of init, or at the last reset */
uint64_t ms_app_end;       /* ticks at the start of finalize, 0 while running */
uint64_t ms_cal_tsc0, ms_cal_ns0; /* calibration: ticks and CLOCK_MONOTONIC at init */
int64_t ms_real0;          /* CLOCK_REALTIME (ns) at init */
int ms_started, ms_finished;
int ms_thread_level;
int ms_pcontrol_ipm;       /* MPISCOPE_PCONTROL=ipm */
int ms_quiet;
int ms_session_mode; /* started by MPI_Session_init, not MPI_Init */
static unsigned char ms_warned[64];

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

static int ms_env_rank(void);

/* ms_fortran_check: a Fortran program reaches its MPI through its
 * Fortran library (libmpi_mpifh, libmpichfort: the first to define
 * pmpi_init_), whose own calls into the C library the loader binds to the
 * first C MPI library in the global scope. Under a build for the other
 * family that is the one this library brought in (an Open MPI program
 * under the MPICH build: libmpi_mpifh's PMPI_Init binds to libmpich.so.12),
 * and our Fortran wrappers convert handles for our family: no call can be
 * passed on untouched, and the first one would crash. The rank exits at
 * load, before any MPI call, with one line on rank 0 (the launcher refuses
 * the mismatch before running anything). */
static void ms_fortran_check(void)
{
	void *f = dlsym(RTLD_DEFAULT, "pmpi_init_");
	Dl_info di;
	if (f == NULL || dladdr(f, &di) == 0 || di.dli_fname == NULL)
		return;
	void *h = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return;
	int fam = ms_family_of(h); /* searches its dependencies: the C library */
	dlclose(h);
	if (fam == MS_FAM_UNKNOWN || fam == MS_FAMILY)
		return;
	if (ms_env_rank() <= 0)
		fprintf(stderr,
			"mpiscope: error: this libmpiscope was built for %s but the program is a Fortran program on %s (%s): "
			"its MPI calls cannot be passed on; exiting before the first one (use the build in lib/%s/, or the "
			"launcher: mpirun ... mpiscope ./app)\n",
			ms_fam_names[MS_FAMILY], ms_fam_names[fam], di.dli_fname, ms_fam_dirs[fam]);
	_exit(1);
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
	ms_fortran_check();
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
	ms_comp_start(); /* compensation's calibration, the test delay (compensate.c) */
	ms_pcontrol_ipm = (flags & 4) != 0;
	ms_quiet = (flags & 8) != 0;
	ms_clock_pair(&ms_cal_tsc0, &ms_cal_ns0);
	ms_app_start = ms_cal_tsc0;
	ms_qmpi_start(session); /* MPISCOPE_QMPI: QMPI mode, or a warning (qmpi.c) */
	ms_gate_set(MS_G_OFF, !(flags & 1));
	ms_off_mark(!(flags & 1), ms_app_start); /* time off: profile.c */
	ms_tracing = (flags & 16) != 0; /* MPISCOPE_TRACE=1 (trace.c) */
	ms_safety_init(); /* signals, watcher thread, exit hook, snapshot timer (safety.c, safety.go) */
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

/* ---- MPI_Pcontrol ---- */

static void ms_warn_level(int level)
{
	unsigned idx = (unsigned)(level + 32) & 63;
	if (ms_warned[idx])
		return;
	ms_warned[idx] = 1;
	if (ms_world_rank == 0 && !ms_quiet)
		fprintf(stderr, "mpiscope: MPI_Pcontrol(%d) has no meaning here and is ignored (see the README)\n", level);
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

/* ---- for Go (api.h) ---- */

/* ms_mpi_version: the MPI library's version string and the standard's. */
void ms_mpi_version(char *lib, int liblen, int *major, int *minor)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING];
	int n = 0;
	v[0] = 0;
	PMPI_Get_library_version(v, &n);
	snprintf(lib, (size_t)liblen, "%s", v);
	PMPI_Get_version(major, minor);
}
