/*
 * safety.h: the crash-safety runtime (safety.c) as lifecycle.c sees it:
 * signals (SIGTERM, SIGINT, the snapshot signal), process exit without
 * MPI_Finalize, MPI_Abort, and turning recording off after an internal
 * error. See docs/safety.md.
 */
#ifndef MS_SAFETY_H
#define MS_SAFETY_H

/* How a rank's own file came to be written (msgoRankFile's first argument). */
#define MS_END_ABORT 1   /* MPI_Abort: arg is the error code */
#define MS_END_SIGNAL 2  /* SIGTERM/SIGINT with the default action: arg is the signal */
#define MS_END_EXIT 3    /* exit() without MPI_Finalize */
#define MS_END_CHAINED 4 /* SIGTERM/SIGINT handled by the application: arg is the signal */
#define MS_FROM_PARENT 0x100 /* or'ed into arg: the signal came from the launcher */

extern volatile int ms_disabled; /* an internal error turned recording off for good */

/* Before PMPI_Init: remember which signals still had their default action. */
void ms_safety_preinit(void);
/* End of ms_start (Go initialized, job directory known): install the
 * handlers, the watcher thread and the exit hook. */
void ms_safety_init(void);
/* End of MPI_Finalize: the final profile is written; put the previous
 * signal dispositions back. */
void ms_safety_fini(void);
/* MPI_Abort (and the exit hook): write this rank's file, bounded in time. */
void ms_safety_end(int what, int arg);
/* Ask the watcher for a snapshot (snapshot timer). */
void ms_snapshot_request(void);
/* Turn recording off after an internal error. */
void ms_disable(void);

#endif
