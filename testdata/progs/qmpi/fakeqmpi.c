/*
 * fakeqmpi.c: a stand-in for an MPICH built with --enable-qmpi, for the
 * QMPI tests (internal/mpitest/qmpi_test.go) on an MPICH whose QMPI
 * functions are stubs (Debian 12's 4.0.2). Preloaded first, it defines
 * what such a library does, after MPICH's QMPI interface: the tool list
 * is MPIR_CVAR_QMPI_TOOL_LIST (names separated by ':', tool ids 1, 2, ...
 * in that order, the library itself tool 0); QMPI_Register_tool_name
 * matches a name in it (an error for a name not in a non-empty list);
 * PMPI_Init and PMPI_Init_thread call each registered tool's
 * initialization with its id; QMPI_Register_function and
 * QMPI_Get_function keep and find, per MPI function (enum
 * QMPI_Functions_enum), the next tool's function after a given tool id,
 * else the library's own. PMPI_X, for the functions below, calls the
 * first tool's function with a QMPI_Context and that tool's id; the
 * library's own function calls the real PMPI_X (dlsym RTLD_NEXT); MPI_X
 * is a weak alias of PMPI_X, as in MPICH. Preload it after mpiscope
 * (LD_PRELOAD=libmpiscope.so:libfakeqmpi.so), whose MPI_X then come first
 * while its PMPI_ calls reach these.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOOLS 8

typedef void (*fn_t)(void);

static int ntools = -1;
static char names[MAXTOOLS + 1][QMPI_MAX_TOOL_NAME_LENGTH];
static void (*inits[MAXTOOLS + 1])(int);
static fn_t fns[MAXTOOLS + 1][MPI_LAST_FUNC_T];

static void *real(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	if (p == NULL)
		abort();
	return p;
}

static void parse(void)
{
	if (ntools >= 0)
		return;
	ntools = 0;
	const char *l = getenv("MPIR_CVAR_QMPI_TOOL_LIST");
	while (l != NULL && *l && ntools < MAXTOOLS) {
		const char *e = strchr(l, ':');
		size_t n = e != NULL ? (size_t)(e - l) : strlen(l);
		if (n >= QMPI_MAX_TOOL_NAME_LENGTH)
			n = QMPI_MAX_TOOL_NAME_LENGTH - 1;
		ntools++;
		memcpy(names[ntools], l, n);
		names[ntools][n] = 0;
		l = e != NULL ? e + 1 : NULL;
	}
}

int QMPI_Register_tool_name(const char *tool_name, void (*init)(int tool_id))
{
	parse();
	for (int i = 1; i <= ntools; i++) {
		if (strcmp(names[i], tool_name) == 0 && inits[i] == NULL) {
			inits[i] = init;
			return MPI_SUCCESS;
		}
	}
	return ntools > 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int QMPI_Register_function(int tool_id, enum QMPI_Functions_enum f, void (*fn)(void))
{
	if (tool_id < 1 || tool_id > ntools || (int)f < 0 || f >= MPI_LAST_FUNC_T)
		return MPI_ERR_ARG;
	fns[tool_id][f] = fn;
	return MPI_SUCCESS;
}

int QMPI_Get_function(int tool_id, enum QMPI_Functions_enum f, void (**fn)(void), int *next)
{
	parse();
	for (int i = tool_id + 1; i <= ntools; i++) {
		if (fns[i][f] != NULL) {
			*fn = fns[i][f];
			*next = i;
			return MPI_SUCCESS;
		}
	}
	*fn = fns[0][f];
	*next = 0;
	return MPI_SUCCESS;
}

static void start_tools(void)
{
	parse();
	for (int i = 1; i <= ntools; i++)
		if (inits[i] != NULL)
			inits[i](i);
}

int PMPI_Init(int *argc, char ***argv)
{
	int (*f)(int *, char ***) = real("PMPI_Init");
	int rc = f(argc, argv);
	start_tools();
	return rc;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int (*f)(int *, char ***, int, int *) = real("PMPI_Init_thread");
	int rc = f(argc, argv, required, provided);
	start_tools();
	return rc;
}

/* The dispatched functions: for each, the library's own QMPI function
 * (tool 0), which calls the real PMPI_X, and PMPI_X, which calls the first
 * tool's. */
static fn_t first(int f, int *id)
{
	fn_t fn;
	QMPI_Get_function(0, f, &fn, id);
	return fn;
}

static int lib_Send(QMPI_Context c, int id, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	static int (*f)(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Send");
	return f(buf, count, dt, dest, tag, comm);
}

int PMPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_SEND_T] = (fn_t)lib_Send;
	QMPI_Send_t *fn = (QMPI_Send_t *)first(MPI_SEND_T, &id);
	return fn(c, id, buf, count, dt, dest, tag, comm);
}

static int lib_Recv(QMPI_Context c, int id, void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	static int (*f)(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Recv");
	return f(buf, count, dt, src, tag, comm, st);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_RECV_T] = (fn_t)lib_Recv;
	QMPI_Recv_t *fn = (QMPI_Recv_t *)first(MPI_RECV_T, &id);
	return fn(c, id, buf, count, dt, src, tag, comm, st);
}

static int lib_Barrier(QMPI_Context c, int id, MPI_Comm comm)
{
	static int (*f)(MPI_Comm comm);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Barrier");
	return f(comm);
}

int PMPI_Barrier(MPI_Comm comm)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_BARRIER_T] = (fn_t)lib_Barrier;
	QMPI_Barrier_t *fn = (QMPI_Barrier_t *)first(MPI_BARRIER_T, &id);
	return fn(c, id, comm);
}

static int lib_Allreduce(QMPI_Context c, int id, const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	static int (*f)(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Allreduce");
	return f(s, r, count, dt, op, comm);
}

int PMPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_ALLREDUCE_T] = (fn_t)lib_Allreduce;
	QMPI_Allreduce_t *fn = (QMPI_Allreduce_t *)first(MPI_ALLREDUCE_T, &id);
	return fn(c, id, s, r, count, dt, op, comm);
}

static int lib_Comm_rank(QMPI_Context c, int id, MPI_Comm comm, int *rank)
{
	static int (*f)(MPI_Comm comm, int *rank);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Comm_rank");
	return f(comm, rank);
}

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_COMM_RANK_T] = (fn_t)lib_Comm_rank;
	QMPI_Comm_rank_t *fn = (QMPI_Comm_rank_t *)first(MPI_COMM_RANK_T, &id);
	return fn(c, id, comm, rank);
}

static int lib_Comm_size(QMPI_Context c, int id, MPI_Comm comm, int *size)
{
	static int (*f)(MPI_Comm comm, int *size);
	(void)c;
	(void)id;
	if (f == NULL)
		f = real("PMPI_Comm_size");
	return f(comm, size);
}

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
	QMPI_Context c = {NULL};
	int id;
	fns[0][MPI_COMM_SIZE_T] = (fn_t)lib_Comm_size;
	QMPI_Comm_size_t *fn = (QMPI_Comm_size_t *)first(MPI_COMM_SIZE_T, &id);
	return fn(c, id, comm, size);
}

/* MPI_X is PMPI_X, as in MPICH (weak: a PMPI tool preloaded before this
 * library, mpiscope, keeps its own MPI_X). */
int MPI_Init(int *argc, char ***argv) __attribute__((weak, alias("PMPI_Init")));
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) __attribute__((weak, alias("PMPI_Init_thread")));
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) __attribute__((weak, alias("PMPI_Send")));
int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st) __attribute__((weak, alias("PMPI_Recv")));
int MPI_Barrier(MPI_Comm comm) __attribute__((weak, alias("PMPI_Barrier")));
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) __attribute__((weak, alias("PMPI_Allreduce")));
int MPI_Comm_rank(MPI_Comm comm, int *rank) __attribute__((weak, alias("PMPI_Comm_rank")));
int MPI_Comm_size(MPI_Comm comm, int *size) __attribute__((weak, alias("PMPI_Comm_size")));
