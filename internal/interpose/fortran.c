//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * fortran.c: the run-control part of the Fortran entry points
 * (zfwrap_<family>.c): MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Abort and
 * MPI_Pcontrol reach lifecycle.c's logic from here. Nothing in this file refers
 * to a Fortran symbol, so C programs linking the static archive do not need
 * the Fortran libraries.
 */
#include "fortran.h"
#include "lifecycle.h"

#include <stdarg.h>

__thread void *ms_fpc __attribute__((tls_model("initial-exec")));

/* ms_f_started: the implementation's Fortran MPI_Init returned. */
void ms_f_started(void)
{
	int flag = 0, level = MPI_THREAD_SINGLE;
	if (PMPI_Initialized(&flag) != MPI_SUCCESS || !flag)
		return;
	PMPI_Query_thread(&level);
	ms_start_run(level);
}

void ms_f_finalize(void) { ms_finalize_run(); }

void ms_f_abort(int code) { ms_abort_run(code); }

static void ms_pcontrol_l(int level, ...)
{
	va_list ap;
	va_start(ap, level);
	ms_pcontrol(level, ap);
	va_end(ap);
}

/* ms_f_pcontrol: Fortran passes only the level (no region or event name). */
void ms_f_pcontrol(int level) { ms_pcontrol_l(level, (const char *)NULL); }

/* ms_f_record records a relayed call that reached no C wrapper. */
void ms_f_record(unsigned fn, void *pc, uint64_t t0)
{
	uint64_t t1 = ms_now();
	ms_thread *t = ms_enter();
	if (t)
		ms_leave(t, fn, pc, t1 - t0, -1, NULL);
}
