/*
 * qmpi.h: mpiscope as a QMPI tool (qmpi.c, the generated zqmpi_<family>.c;
 * docs/stacking.md, "QMPI").
 *
 * QMPI is MPICH 4's interface for tools inside the library: a tool
 * registers its name (QMPI_Register_tool_name, before MPI_Init), the
 * library calls the tool's initialization with its tool id at MPI_Init if
 * the name is in MPIR_CVAR_QMPI_TOOL_LIST, and the tool registers one
 * function per MPI function it intercepts (QMPI_Register_function, with
 * the constant MPI_X_T). The library's MPI_X (and PMPI_X) then calls the
 * first tool's function, with a QMPI_Context and the tool's id before the
 * arguments of MPI_X; each tool calls the next through QMPI_Get_function.
 *
 * The functions are looked up with dlsym, with the types declared here
 * (an enum constant passed as int), so that the library loads where mpi.h
 * or the MPI library has no QMPI (Open MPI): the setting then warns once
 * and mpiscope intercepts by PMPI as always.
 */
#ifndef MS_QMPI_H
#define MS_QMPI_H

#include "ms.h"

typedef int ms_qmpi_register_tool_name_t(const char *tool_name, void (*init)(int tool_id));
typedef int ms_qmpi_register_function_t(int tool_id, int function, void (*fn)(void));
typedef int ms_qmpi_get_function_t(int tool_id, int function, void (**fn)(void), int *next_tool_id);

/* The call mpiscope's MPI_X passed on in QMPI mode, for the QMPI wrapper
 * it reaches: function id + 1 (0: none) and the callsite. Set by the
 * trampoline (ms_qt_X), taken by the wrapper (ms_q_X); any other call a
 * wrapper sees (mpiscope's own PMPI_ traffic, the tools' calls) is passed
 * on unrecorded. */
extern __thread uint32_t ms_qfn __attribute__((tls_model("initial-exec")));
extern __thread void *ms_qpc __attribute__((tls_model("initial-exec")));

/* Generated (zqmpi_<family>.c). */
extern const int ms_qmpi_nwrappers;
extern void *const ms_qmpi_tramps[];
MS_HIDDEN void ms_qmpi_register(int tool_id);

/* qmpi.c */
MS_HIDDEN void ms_qmpi_reg(int tool_id, int function, void (*fn)(void));
MS_HIDDEN void *ms_qmpi_next(int tool_id, int function, void (**slot)(void), int *next_id);
MS_HIDDEN int ms_qmpi_wanted(void); /* a setting asks for QMPI mode (known from load on) */
MS_HIDDEN void ms_qmpi_start(int session); /* at MPI_Init (lifecycle.c): the probe, then QMPI mode or the warning */

/* ms_qenter is ms_enter for a QMPI wrapper: recording is on while ms_qoff
 * is 0 (QMPI mode keeps MS_G_OFF set in ms_gate, so that MPI_X only
 * passes calls on; ms_gate_set moves MS_G_OFF's writes here). */
MS_INLINE ms_thread *ms_qenter(void)
{
	if (__builtin_expect(MS_LOAD(ms_qoff), 0))
		return NULL;
	ms_thread *t = ms_tls;
	if (__builtin_expect(t == NULL, 0)) {
		t = ms_thread_new();
		if (t == NULL)
			return NULL;
	}
	if (t->depth > 0)
		return NULL;
	MS_STORE(t->depth, 1);
	return t;
}

/* For Go (qmpi.go): QMPI mode's tool id (0: PMPI interception), the tool
 * list, the fallback's warning (NULL: none). */
int ms_qmpi_tool_id(void);
const char *ms_qmpi_tool_list(void);
const char *ms_qmpi_warning(void);

#endif
