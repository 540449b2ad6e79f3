/*
 * api.h: the runtime's boundary with Go, declared here once: every C
 * function and variable Go uses (the cgo preambles of cgo.go, busy_cgo.go,
 * safety.go and trace_cgo.go include this file and declare nothing
 * themselves), and every Go function C calls (exported by those files;
 * cgo's generated _cgo_export.h says the same from the Go side, and the C
 * files include this header, not that one). Grouped by the file that
 * defines them. It includes ms.h, and safety.h for what both sides call.
 */
#ifndef MS_API_H
#define MS_API_H
#include "ms.h"
#include "safety.h" /* MS_END_*, ms_disable, ms_snapshot_request */

/* ---- C functions and variables Go uses ---- */

/* core.c: threads, clock, the generated function tables */
ms_thread *ms_threads_head(void);
uint32_t ms_epoch_now(void);
uint64_t ms_ticks_now(void);
uint64_t ms_mono_ns(void);                     /* CLOCK_MONOTONIC, ns */
void ms_clock_pair(uint64_t *ticks, uint64_t *ns);
MS_HIDDEN int ms_tsc_invariant(void);          /* the CPU's TSC is a clock (lifecycle.c's start) */
int ms_use_tsc_get(void);
const char *ms_fn_name(int i);
const char *ms_fn_class(int i);
int ms_nfuncs_get(void);

/* lifecycle.c: the run's state, the MPI library */
extern uint64_t ms_app_start, ms_app_end, ms_cal_tsc0, ms_cal_ns0;
extern int64_t ms_real0;
extern int ms_thread_level, ms_quiet;
void ms_mpi_version(char *lib, int liblen, int *major, int *minor);

/* profile.c: site tables, communicators, datatypes, time off */
uint64_t ms_pending_key(const ms_thread *t);
int ms_comm_count(void);
ms_comm_meta_t *ms_comm_meta_at(int i);
int ms_world_rank_get(void);
int ms_world_size_get(void);
size_t ms_type_size_offset(void); /* 0 = datatype sizes from the per-thread cache */
uint64_t ms_off_total(uint64_t end); /* ticks with recording off up to end */

/* regions.c */
int ms_region_count(void);
const char *ms_region_path(int i);
int ms_region_parent(int i);
int ms_event_count(void);
const char *ms_event_text(int i);

/* priv.c: our own traffic on ms_priv */
int ms_priv_bcast(void *buf, int len, int root);
int ms_priv_send(const void *buf, int64_t len, int dest);
void *ms_priv_recv(int src, int64_t *len);
int ms_priv_barrier(void);
int ms_priv_agree(int n, const int *want, int *all, int *any);
int ms_trace_any(int mine);
int ms_trace_sync(int rounds, int maxr, uint64_t good_ns, uint64_t *local, int64_t *offset, uint64_t *rtt);
extern int ms_trace_sync_pings;

/* trace.c: the writer's side of the buffers (ms_trace_set: trace.h) */
extern size_t ms_trace_bufsize;
extern int64_t ms_trace_skew; /* testing: added to this rank's clock (priv.c's clock sync) */
int ms_trace_init(void);
void ms_trace_exclude(int fn);
ms_tbuf *ms_tbufs_head(void);
void ms_trace_release(ms_tbuf *tb, int i);
char *ms_trace_events(ms_tbuf *tb, int i);
void ms_trace_flushgen(void);
void ms_trace_flush_self(void);
int ms_trace_comm(int id, int **world, int *inter);
void ms_trace_wait(void);
void ms_trace_wake(void);
ms_thand *ms_trace_pop(void);
void ms_trace_hand_all(void);

/* compensate.c (compensate.h): overhead compensation, the test delay */
void ms_comp_setup(int comp, int64_t busy_ns); /* at MPI_Init (compensate.go) */
MS_HIDDEN void ms_comp_start(void);            /* after msgoStart: calibration (lifecycle.c) */
void ms_comp_read(double *v);                  /* the figures compensate.go reads (compensate.c) */
extern int64_t ms_comp_sub[MS_MAXFUNCS];       /* ns subtracted from each function's MPI time */

/* core.c: calls in progress (ms.h, MS_TIMED_BUSY) */
/* ms_busy_t is a call in progress as ms_busy_read reads it for Go. */
typedef struct {
	int fn;      /* function id */
	int comm;    /* communicator id (ms_comm_meta), -1 none or unknown */
	int peer;    /* MPI_COMM_WORLD rank of the peer or root; -1 none (or invalid), -2 MPI_ANY_SOURCE */
	int tag;     /* -1 MPI_ANY_TAG; meaningful only for functions with a tag (busyRoles, busy.go) */
	uint64_t t0; /* entry time, ticks */
	uint64_t pc; /* callsite */
	uint64_t kbits; /* the communicator's field of a site key */
} ms_busy_t;
int ms_busy_read(const ms_thread *t, ms_busy_t *b); /* the call in progress on t */

/* safety.c */
int ms_finished_get(void);

/* ---- Go functions C calls ---- */

/* cgo.go */
int msgoStart(int session); /* MPI_Init: settings, job directory; returns flags (lifecycle.c, ms_start_mode) */
void msgoIdle(void);        /* the start's cold point ends */
void msgoKeepGC(void);      /* Go runs while the application does (a trace writer) */
void msgoFinalize(void);
void msgoSessionEnd(void);
void msgoFlush(void);       /* MPI_Pcontrol(2) */
/* safety.go */
int msgoSafetyStart(void);  /* returns the snapshot signal (0: none) */
void msgoSafetyNote(int sig);
void msgoRankFile(int what, int arg);
void msgoSnapshot(void);
/* trace_cgo.go */
int msgoTraceStart(void);   /* MPI_Pcontrol(6) */

#endif
