/*
 * lifecycle.h: the run's state and the entry points of its start and end
 * (lifecycle.c), and the regions and user events of MPI_Pcontrol
 * (regions.c), as the other rooms of the runtime see them: the Fortran
 * entry points (fortran.c) and safety (safety.c). What Go reads of the
 * run's state is declared in api.h.
 */
#ifndef MS_LIFECYCLE_H
#define MS_LIFECYCLE_H

#include <stdarg.h>

#include "ms.h"

extern int ms_started, ms_finished; /* MPI_Init (or MPI_Session_init) has started the run; it has ended */
extern int ms_quiet;                /* MPISCOPE_QUIET=1 */
extern uint64_t ms_app_end;         /* ticks at the start of finalize, 0 while running */
extern MPI_Comm ms_priv;            /* priv.c: our own duplicate of MPI_COMM_WORLD, made and freed here */

/* The run's logic shared by the C wrappers (lifecycle.c) and the Fortran
 * entry points (fortran.c). */
void ms_start_run(int level);
void ms_finalize_run(void);
void ms_abort_run(int errorcode);
int ms_pcontrol(int level, va_list ap);

/* regions.c: MPI_Pcontrol's regions (levels 4 and -4, or IPM's 1 and -1)
 * and user events (level 5). */
MS_HIDDEN void ms_region_enter(const char *name);
MS_HIDDEN void ms_region_leave(void);
MS_HIDDEN void ms_event(const char *text);

#endif
