/*
 * chain.h: stacking other PMPI tools below mpiscope (chain.c,
 * docs/stacking.md). The hand-written wrappers call the next level through
 * these; without a stack (MPISCOPE_STACK unset) each is the PMPI_ call it
 * replaces. The generated wrappers need nothing: their PMPI_ pointers
 * (ms.h, MS_PMPI) are pointed at the first tool once, by ms_chain_bind.
 */
#ifndef MS_CHAIN_H
#define MS_CHAIN_H

#include <mpi.h>
#include <stdarg.h>

/* MPI_Init and MPI_Init_thread load the stack first (once). */
int ms_chain_Init(int *argc, char ***argv);
int ms_chain_Init_thread(int *argc, char ***argv, int required, int *provided);
int ms_chain_Finalize(void);
int ms_chain_Abort(MPI_Comm comm, int errorcode);
/* ap: MPI_Pcontrol's arguments after the level, untouched; a level below
 * gets the level and the first of them (a region or event name). */
int ms_chain_Pcontrol(int level, va_list ap);

/* For Go (chain.go): the levels loaded, and the warnings of the set-up. */
int ms_chain_levels(void);
const char *ms_chain_level(int i);
int ms_chain_nwarnings(void);
const char *ms_chain_warning(int i);

#endif
