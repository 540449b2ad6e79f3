//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * qmpi.c: mpiscope as a QMPI tool (qmpi.h; docs/stacking.md, "QMPI").
 *
 * MPISCOPE_QMPI=1, or "mpiscope" named in MPIR_CVAR_QMPI_TOOL_LIST, asks
 * for it. At load (a constructor: QMPI tools register before MPI_Init)
 * mpiscope registers the name "mpiscope", putting it first in
 * MPIR_CVAR_QMPI_TOOL_LIST when the list does not name it. At MPI_Init the
 * library calls ms_qmpi_init with mpiscope's tool id, which registers one
 * QMPI wrapper per recorded function (generated, zqmpi_<family>.c). After
 * PMPI_Init, ms_qmpi_start checks that it all happened and probes the
 * dispatch: one PMPI_Comm_rank must reach mpiscope's QMPI wrapper. Then
 * QMPI mode starts: MS_G_OFF stays set in ms_gate (MPI_X is a tail call
 * through its PMPI_ pointer) and the pointers go to the trampolines
 * (ms_chain_bind), which tell the QMPI wrapper which call is the
 * program's. Otherwise rank 0 warns once, and mpiscope profiles by PMPI
 * interception as without the setting: nothing is lost.
 */
#define _GNU_SOURCE
#include "ms.h"
#include "chain.h"
#include "qmpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

MS_HIDDEN void ms_chain_bind(void *const *next); /* zwrap_<family>.c */
MS_HIDDEN extern int ms_comp_on;

int ms_qmpi_mode;
volatile uint32_t ms_qoff = 1;
__thread uint32_t ms_qfn __attribute__((tls_model("initial-exec")));
__thread void *ms_qpc __attribute__((tls_model("initial-exec")));

#define MS_QMPI_NAME "mpiscope"
#define MS_QMPI_NOFUNC (-1000) /* ms_q_rc: the library has no QMPI functions */

static int ms_q_wanted;                     /* the setting asks for QMPI mode */
static int ms_q_rc = MS_QMPI_NOFUNC;        /* QMPI_Register_tool_name's answer */
static int ms_q_id;                         /* our tool id (0: the library never called ms_qmpi_init) */
static int ms_q_regfail, ms_q_regrc;        /* QMPI_Register_function failures, the last code */
static int ms_q_active;                     /* QMPI mode on */
static char ms_q_list[1024];                /* the tool list as we left it */
static char ms_q_warn[2560];
static ms_qmpi_register_function_t *ms_q_register_function;
static ms_qmpi_get_function_t *ms_q_get_function;

int ms_qmpi_tool_id(void) { return ms_q_active ? ms_q_id : 0; }
int ms_qmpi_wanted(void) { return ms_q_wanted; }
const char *ms_qmpi_tool_list(void) { return ms_q_list; }
const char *ms_qmpi_warning(void) { return ms_q_warn[0] ? ms_q_warn : NULL; }

/* ms_q_listed: the ':'-separated tool list names mpiscope. */
static int ms_q_listed(const char *list)
{
	size_t n = strlen(MS_QMPI_NAME);
	for (const char *p = list; p != NULL && *p;) {
		const char *e = strchr(p, ':');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
		if (len == n && strncmp(p, MS_QMPI_NAME, n) == 0)
			return 1;
		p = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

/* ms_qmpi_init: the library's call at MPI_Init, with our tool id. */
static void ms_qmpi_init(int tool_id)
{
	ms_q_id = tool_id;
	ms_qmpi_register(tool_id);
}

void ms_qmpi_reg(int tool_id, int function, void (*fn)(void))
{
	int rc = ms_q_register_function(tool_id, function, fn);
	if (rc != MPI_SUCCESS) {
		ms_q_regfail++;
		ms_q_regrc = rc;
	}
}

/* ms_qmpi_next looks up, once per function (racing first calls store the
 * same values), the next tool's function after ours and its tool id. The
 * library's own function (tool 0) ends every chain, so it never fails in
 * a library that dispatched the probe. */
void *ms_qmpi_next(int tool_id, int function, void (**slot)(void), int *next_id)
{
	void (*fn)(void) = NULL;
	int id = 0;
	ms_q_get_function(tool_id, function, &fn, &id);
	__atomic_store_n(next_id, id, __ATOMIC_RELAXED);
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return (void *)fn;
}

/* The setting, read at load: MPISCOPE_QMPI=1, or the tool list naming
 * mpiscope unless MPISCOPE_QMPI=0. MPICH reads the list as the control
 * variable MPIR_CVAR_QMPI_TOOL_LIST (also spelt MPICH_QMPI_TOOL_LIST). */
static const char *ms_q_listvar(void)
{
	if (getenv("MPIR_CVAR_QMPI_TOOL_LIST") != NULL)
		return "MPIR_CVAR_QMPI_TOOL_LIST";
	if (getenv("MPICH_QMPI_TOOL_LIST") != NULL)
		return "MPICH_QMPI_TOOL_LIST";
	return "MPIR_CVAR_QMPI_TOOL_LIST";
}

__attribute__((constructor)) static void ms_qmpi_load(void)
{
	const char *q = getenv("MPISCOPE_QMPI"), *en = getenv("MPISCOPE_ENABLE");
	const char *var = ms_q_listvar(), *list = getenv(var);
	if (en != NULL && strcmp(en, "never") == 0)
		return;
	if (!((q != NULL && strcmp(q, "1") == 0) || ((q == NULL || strcmp(q, "0") != 0) && list != NULL && ms_q_listed(list))))
		return;
	ms_q_wanted = 1;
	snprintf(ms_q_list, sizeof ms_q_list, "%s", list != NULL ? list : "");
	ms_qmpi_register_tool_name_t *reg = (ms_qmpi_register_tool_name_t *)dlsym(RTLD_DEFAULT, "QMPI_Register_tool_name");
	ms_q_register_function = (ms_qmpi_register_function_t *)dlsym(RTLD_DEFAULT, "QMPI_Register_function");
	ms_q_get_function = (ms_qmpi_get_function_t *)dlsym(RTLD_DEFAULT, "QMPI_Get_function");
	if (reg == NULL || ms_q_register_function == NULL || ms_q_get_function == NULL)
		return; /* ms_q_rc stays MS_QMPI_NOFUNC */
	if (list == NULL || !ms_q_listed(list)) {
		/* First in the list: where mpiscope's PMPI wrappers would be. */
		if (list != NULL && *list)
			snprintf(ms_q_list, sizeof ms_q_list, "%s:%s", MS_QMPI_NAME, list);
		else
			snprintf(ms_q_list, sizeof ms_q_list, "%s", MS_QMPI_NAME);
		setenv(var, ms_q_list, 1);
	}
	ms_q_rc = reg(MS_QMPI_NAME, ms_qmpi_init);
}

/* ms_q_probe: a PMPI_Comm_rank reaches our QMPI wrapper, which takes the
 * announcement (ms_qfn) and passes the call on, unrecorded (ms_qoff is
 * still 1). */
static int ms_q_probe(void)
{
	int id = ms_fn_lookup("MPI_Comm_rank"), r = -1;
	if (id < 0 || ms_qmpi_tramps[id] == NULL)
		return 0;
	ms_qfn = (uint32_t)id + 1;
	PMPI_Comm_rank(MPI_COMM_WORLD, &r);
	int hit = ms_qfn == 0;
	ms_qfn = 0;
	return hit;
}

void ms_qmpi_start(int session)
{
	if (!ms_q_wanted)
		return;
	char why[2048] = "";
	if (ms_q_rc == MS_QMPI_NOFUNC)
		snprintf(why, sizeof why, "the MPI library has no QMPI (no QMPI_Register_tool_name, QMPI_Register_function or QMPI_Get_function)");
	else if (ms_q_rc == MPI_ERR_UNSUPPORTED_OPERATION)
		snprintf(why, sizeof why, "QMPI_Register_tool_name(\"%s\") returned %d (MPI_ERR_UNSUPPORTED_OPERATION: an MPICH built without --enable-qmpi)",
			 MS_QMPI_NAME, ms_q_rc);
	else if (ms_q_rc != MPI_SUCCESS)
		/* MPICH reads its tool list once, at the first registration: a
		 * QMPI tool loaded before mpiscope came first. */
		snprintf(why, sizeof why, "QMPI_Register_tool_name(\"%s\") returned %d; name mpiscope in %s (now \"%s\") when other QMPI tools are loaded",
			 MS_QMPI_NAME, ms_q_rc, ms_q_listvar(), ms_q_list);
	else if (ms_q_id <= 0)
		snprintf(why, sizeof why, "MPI_Init never called mpiscope's QMPI initialization; name mpiscope in %s (now \"%s\") when other QMPI tools are loaded",
			 ms_q_listvar(), ms_q_list);
	else if (ms_q_regfail)
		snprintf(why, sizeof why, "QMPI_Register_function returned %d for %d functions", ms_q_regrc, ms_q_regfail);
	else if (ms_qmpi_nwrappers == 0)
		snprintf(why, sizeof why, "this libmpiscope was built from an mpi.h without QMPI");
	else if (session)
		snprintf(why, sizeof why, "the sessions model (MPI_Session_init) is profiled by PMPI only");
	else if (ms_chain_levels() > 0)
		snprintf(why, sizeof why, "MPISCOPE_STACK is set: tools stacked below mpiscope need its PMPI wrappers");
	else if (MS_LOAD(ms_gate) & (MS_G_PB | MS_G_PATH))
		snprintf(why, sizeof why, "the piggyback channel and call paths (MPISCOPE_DEPTH > 1) work in the PMPI wrappers only");
	else if (ms_comp_on)
		snprintf(why, sizeof why, "overhead compensation (MPISCOPE_COMPENSATE) works in the PMPI wrappers only");
	else if (!ms_q_probe())
		snprintf(why, sizeof why, "a PMPI_Comm_rank did not reach mpiscope's QMPI wrapper: the library does not dispatch through QMPI");
	if (why[0]) {
		snprintf(ms_q_warn, sizeof ms_q_warn, "QMPI mode: %s; profiling by PMPI interception instead", why);
		int rank = 0;
		if (!session)
			PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
		const char *quiet = getenv("MPISCOPE_QUIET");
		if (rank == 0 && !(quiet != NULL && strcmp(quiet, "1") == 0))
			fprintf(stderr, "mpiscope: warning: %s\n", ms_q_warn);
		return;
	}
	ms_chain_bind(ms_qmpi_tramps);
	ms_q_active = 1;
	MS_STORE(ms_qmpi_mode, 1);
}
