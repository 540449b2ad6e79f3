//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * safety.c: never lose a run, never break the application.
 *
 * What it does (docs/safety.md):
 *   - SIGTERM, SIGINT (time limits, Ctrl-C, mpirun and Slurm stopping a
 *     job): the handler only records the signal, stops recording and wakes
 *     the watcher thread with one byte on a pipe. The watcher has this
 *     rank's file written by a helper thread (which calls Go), waits for it
 *     at most MS_BOUND_MS, then puts the previous disposition back and
 *     re-sends the signal with its original siginfo, so the signal takes its
 *     normal course (death by that signal, same exit status). A signal the
 *     application handles itself (a handler installed before MPI_Init) is
 *     passed to that handler at once; the rank file is written on the side.
 *     A signal the application ignores is left alone.
 *   - The snapshot signal (MPISCOPE_SNAPSHOT_SIGNAL, default SIGUSR1): the
 *     handler wakes the watcher, which has a snapshot written by a helper
 *     thread; the run goes on, even while the rank is blocked in MPI. Left
 *     alone when the application had its own disposition before MPI_Init.
 *   - exit() without MPI_Finalize: an atexit hook writes this rank's file.
 *   - MPI_Abort: the aborting rank writes its file before PMPI_Abort.
 * All Go work runs on helper threads; the thread that waits for it waits at
 * most MS_BOUND_MS, so a stuck writer never hangs the application. A rank
 * file (abort, signal, exit) is written once per process.
 *
 * Signal handlers here do async-signal-safe work only: atomic flags, a
 * copy of the siginfo, write(2) on a non-blocking pipe, and chaining.
 */
#define _GNU_SOURCE
#include "api.h"
#include "lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MS_NSIG 65
#define MS_BOUND_MS 2000

enum { MS_NONE, MS_FATAL, MS_SNAP };

volatile int ms_disabled;

static struct sigaction ms_old[MS_NSIG]; /* disposition before ours */
static volatile int ms_ours[MS_NSIG];    /* MS_FATAL or MS_SNAP while installed */
static char ms_pre_dfl[MS_NSIG];         /* SIG_DFL before PMPI_Init */
static int ms_preinit_done;
static siginfo_t ms_info[MS_NSIG];       /* first occurrence of each fatal signal */
static volatile uint64_t ms_pending;     /* fatal signals to re-send after the write */
static volatile uint64_t ms_chained;     /* handled-by-the-app signals to note */
static volatile int ms_snap_req;
static int ms_pipe[2] = {-1, -1};
static pid_t ms_pid;
static volatile int ms_ready;
static volatile int ms_claimed;    /* this rank's file is being or was written */
static volatile int ms_final_done; /* MPI_Finalize wrote the final profile */

/* ---- helper threads running Go work ---- */

enum { MS_JOB_RANK, MS_JOB_SNAP, MS_JOB_CHAINED, MS_NJOBS };

typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int busy;
	int what, arg;
} ms_job_t;

static ms_job_t ms_job[MS_NJOBS];

static void ms_block_all(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void *ms_job_main(void *p)
{
	ms_job_t *j = p;
	switch ((int)(j - ms_job)) {
	case MS_JOB_RANK:
	case MS_JOB_CHAINED:
		msgoRankFile(j->what, j->arg);
		break;
	case MS_JOB_SNAP:
		msgoSnapshot();
		break;
	}
	pthread_mutex_lock(&j->mu);
	j->busy = 0;
	pthread_cond_broadcast(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* ms_job_start runs job k on a new detached thread (all signals blocked, so
 * that process signals go to the application's threads). It returns 0 when
 * the job is already running: requests coalesce. */
static int ms_job_start(int k, int what, int arg)
{
	ms_job_t *j = &ms_job[k];
	pthread_mutex_lock(&j->mu);
	if (j->busy) {
		pthread_mutex_unlock(&j->mu);
		return 0;
	}
	j->busy = 1;
	j->what = what;
	j->arg = arg;
	pthread_mutex_unlock(&j->mu);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	pthread_t tid;
	int rc = pthread_create(&tid, &a, ms_job_main, j);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_lock(&j->mu);
		j->busy = 0;
		pthread_cond_broadcast(&j->cv);
		pthread_mutex_unlock(&j->mu);
		return 0;
	}
	return 1;
}

/* ms_job_wait waits until job k is idle, at most ms milliseconds. */
static void ms_job_wait(int k, int ms)
{
	ms_job_t *j = &ms_job[k];
	struct timespec dl;
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&j->mu);
	while (j->busy)
		if (pthread_cond_timedwait(&j->cv, &j->mu, &dl) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&j->mu);
}

static void ms_jobs_init(void)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	for (int k = 0; k < MS_NJOBS; k++) {
		pthread_mutex_init(&ms_job[k].mu, NULL);
		pthread_cond_init(&ms_job[k].cv, &ca);
	}
	pthread_condattr_destroy(&ca);
}

/* ---- stopping, claiming, re-sending ---- */

static void ms_stop_recording(void)
{
	uint64_t zero = 0;
	__atomic_compare_exchange_n(&ms_app_end, &zero, ms_now(), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	ms_gate_set(MS_G_OFF, 1);
}

/* ms_write_rank has this rank's file written once (what, arg) and waits for
 * it, bounded. A later caller waits for the first one's write. */
static void ms_write_rank(int what, int arg)
{
	if (__atomic_exchange_n(&ms_claimed, 1, __ATOMIC_SEQ_CST) == 0)
		ms_job_start(MS_JOB_RANK, what, arg);
	ms_job_wait(MS_JOB_RANK, MS_BOUND_MS);
}

/* ms_resend puts back the previous disposition of every pending fatal
 * signal and sends it again to the process with its original siginfo. With
 * the default action this ends the process as the signal would have. */
static void ms_resend(void)
{
	uint64_t p = __atomic_load_n(&ms_pending, __ATOMIC_SEQ_CST);
	for (int sig = 1; sig < MS_NSIG; sig++) {
		if (!(p & (1ull << sig)))
			continue;
		ms_ours[sig] = MS_NONE;
		sigaction(sig, &ms_old[sig], NULL);
		siginfo_t si = ms_info[sig];
		if (syscall(SYS_rt_sigqueueinfo, ms_pid, sig, &si) != 0)
			kill(ms_pid, sig);
	}
}

/* ---- the handler ---- */

static void ms_call_old(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *o = &ms_old[sig];
	if (o->sa_flags & SA_SIGINFO) {
		if (o->sa_sigaction)
			o->sa_sigaction(sig, si, uc);
		return;
	}
	if (o->sa_handler == SIG_IGN)
		return;
	if (o->sa_handler == SIG_DFL) {
		/* Default action: restore it; the signal, blocked while we run,
		 * is delivered again when the handler returns. */
		sigaction(sig, o, NULL);
		ms_ours[sig] = MS_NONE;
		raise(sig);
		return;
	}
	o->sa_handler(sig);
}

static void ms_wake(void)
{
	char b = 1;
	ssize_t n = write(ms_pipe[1], &b, 1); /* EAGAIN: a wake-up is queued */
	(void)n;
}

static int ms_old_is_handler(int sig)
{
	struct sigaction *o = &ms_old[sig];
	if (o->sa_flags & SA_SIGINFO)
		return o->sa_sigaction != NULL;
	return o->sa_handler != SIG_DFL && o->sa_handler != SIG_IGN;
}

static void ms_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	if (sig <= 0 || sig >= MS_NSIG)
		goto out;
	int kind = ms_ours[sig];
	if (kind == MS_NONE || !ms_ready || getpid() != ms_pid) {
		/* Uninstalled meanwhile, or a forked child: be the old one. */
		ms_call_old(sig, si, uc);
		goto out;
	}
	if (kind == MS_SNAP) {
		__atomic_store_n(&ms_snap_req, 1, __ATOMIC_SEQ_CST);
		ms_wake();
		if (ms_old_is_handler(sig))
			ms_call_old(sig, si, uc); /* e.g. MPICH's own SIGUSR1 handler */
		goto out;
	}
	if (ms_old_is_handler(sig)) {
		/* The application handles it: its handler decides, now. */
		__atomic_fetch_or(&ms_chained, 1ull << sig, __ATOMIC_SEQ_CST);
		ms_wake();
		ms_call_old(sig, si, uc);
		goto out;
	}
	/* Default action: write first, then let it take its course. */
	uint64_t bit = 1ull << sig;
	if (!(__atomic_load_n(&ms_pending, __ATOMIC_SEQ_CST) & bit)) {
		ms_info[sig] = *si;
		uint64_t prev = __atomic_fetch_or(&ms_pending, bit, __ATOMIC_SEQ_CST);
		if (prev == 0) {
			ms_stop_recording();
			ms_wake();
		}
	}
out:
	errno = saved;
}

/* ---- the watcher ---- */

static void *ms_watch(void *arg)
{
	(void)arg;
	for (;;) {
		char b[64];
		ssize_t n = read(ms_pipe[0], b, sizeof b);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return NULL;
		uint64_t ch = __atomic_exchange_n(&ms_chained, 0, __ATOMIC_SEQ_CST);
		for (int sig = 1; sig < MS_NSIG; sig++)
			if (ch & (1ull << sig))
				ms_job_start(MS_JOB_CHAINED, MS_END_CHAINED, sig);
		uint64_t p = __atomic_load_n(&ms_pending, __ATOMIC_SEQ_CST);
		if (p) {
			int first = 0;
			while (!(p & (1ull << first)))
				first++;
			int from = ms_info[first].si_code == SI_USER && ms_info[first].si_pid == getppid() ? MS_FROM_PARENT : 0;
			if (!__atomic_load_n(&ms_final_done, __ATOMIC_SEQ_CST))
				ms_write_rank(MS_END_SIGNAL, first | from);
			ms_resend();
			continue; /* normally not reached: the signal ended the process */
		}
		if (__atomic_exchange_n(&ms_snap_req, 0, __ATOMIC_SEQ_CST) && !ms_finished)
			ms_job_start(MS_JOB_SNAP, 0, 0);
	}
}

/* ---- installation ---- */

void ms_safety_preinit(void)
{
	for (int sig = 1; sig < MS_NSIG && sig < NSIG; sig++) {
		struct sigaction o;
		if (sigaction(sig, NULL, &o) == 0)
			ms_pre_dfl[sig] = !(o.sa_flags & SA_SIGINFO) && o.sa_handler == SIG_DFL;
	}
	ms_preinit_done = 1;
}

static int ms_install(int sig, int kind)
{
	struct sigaction o, sa;
	if (sig <= 0 || sig >= MS_NSIG || sigaction(sig, NULL, &o) != 0)
		return 0;
	if (!(o.sa_flags & SA_SIGINFO) && o.sa_handler == SIG_IGN)
		return 0; /* ignored by the application: leave it so */
	ms_old[sig] = o;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = ms_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	ms_ours[sig] = kind;
	if (sigaction(sig, &sa, NULL) != 0) {
		ms_ours[sig] = MS_NONE;
		return 0;
	}
	return 1;
}

static void ms_at_exit(void)
{
	if (!ms_ready || getpid() != ms_pid || ms_final_done)
		return;
	ms_safety_end(MS_END_EXIT, 0);
	if (__atomic_load_n(&ms_pending, __ATOMIC_SEQ_CST))
		ms_resend();
}

void ms_safety_init(void)
{
	if (ms_ready)
		return;
	ms_pid = getpid();
	ms_jobs_init();
	int snap = msgoSafetyStart();
	if (pipe2(ms_pipe, O_CLOEXEC) != 0)
		return;
	fcntl(ms_pipe[1], F_SETFL, fcntl(ms_pipe[1], F_GETFL) | O_NONBLOCK);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t tid;
	int rc = pthread_create(&tid, NULL, ms_watch, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(ms_pipe[0]);
		close(ms_pipe[1]);
		return;
	}
	pthread_setname_np(tid, "mpiscope-watch"); /* ours, for tools and TestQuietGuest */
	pthread_detach(tid);
	ms_ready = 1;
	ms_install(SIGTERM, MS_FATAL);
	ms_install(SIGINT, MS_FATAL);
	if (snap > 0 && snap < MS_NSIG && snap != SIGTERM && snap != SIGINT) {
		struct sigaction o;
		int dfl = ms_pre_dfl[snap];
		if (!ms_preinit_done && sigaction(snap, NULL, &o) == 0)
			dfl = !(o.sa_flags & SA_SIGINFO) && o.sa_handler == SIG_DFL;
		if (!dfl || !ms_install(snap, MS_SNAP))
			msgoSafetyNote(snap);
	}
	atexit(ms_at_exit);
}

void ms_safety_fini(void)
{
	__atomic_store_n(&ms_final_done, 1, __ATOMIC_SEQ_CST);
	for (int sig = 1; sig < MS_NSIG; sig++) {
		if (ms_ours[sig] == MS_NONE)
			continue;
		struct sigaction cur;
		if (sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == ms_on_signal &&
		    !(__atomic_load_n(&ms_pending, __ATOMIC_SEQ_CST) & (1ull << sig))) {
			sigaction(sig, &ms_old[sig], NULL);
			ms_ours[sig] = MS_NONE;
		}
	}
}

void ms_safety_end(int what, int arg)
{
	if (!ms_started)
		return;
	ms_stop_recording();
	if (!ms_ready || getpid() != ms_pid) {
		/* No helper threads: write inline. */
		if (__atomic_exchange_n(&ms_claimed, 1, __ATOMIC_SEQ_CST) == 0)
			msgoRankFile(what, arg);
		return;
	}
	ms_write_rank(what, arg);
}

void ms_snapshot_request(void)
{
	if (!ms_ready)
		return;
	__atomic_store_n(&ms_snap_req, 1, __ATOMIC_SEQ_CST);
	ms_wake();
}

void ms_disable(void)
{
	ms_disabled = 1;
	ms_gate_set(MS_G_OFF, 1);
}

int ms_finished_get(void) { return __atomic_load_n(&ms_finished, __ATOMIC_SEQ_CST); }

