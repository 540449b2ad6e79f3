/*
 * qcount.c: a QMPI tool of the QMPI tests (internal/mpitest/qmpi_test.go),
 * named "qcount" in MPIR_CVAR_QMPI_TOOL_LIST. It counts the calls of
 * MPI_Send, MPI_Recv, MPI_Barrier and MPI_Allreduce on MPI_COMM_WORLD
 * (mpiscope's own traffic is on a communicator of its own) and the bytes
 * sent, passing each call to the next tool. At exit it writes
 * $QMPI_OUT/qcount.<rank>.txt: "reg R" (what QMPI_Register_tool_name
 * returned), "init N" (1 if the library called its initialization), then
 * one "name calls" line per function and "bytes N". Built with an MPICH
 * mpicc (mpi.h declares QMPI): mpicc -shared -fPIC.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int reg_rc = -1, init_called, my_id;
static long n_send, n_recv, n_barrier, n_allreduce, bytes;

static void *next(int fn, int *id)
{
	void (*f)(void) = NULL;
	QMPI_Get_function(my_id, fn, &f, id);
	return (void *)f;
}

static int q_send(QMPI_Context c, int tid, const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	int id, size;
	QMPI_Send_t *f = (QMPI_Send_t *)next(MPI_SEND_T, &id);
	if (comm == MPI_COMM_WORLD) {
		n_send++;
		PMPI_Type_size(dt, &size);
		bytes += (long)count * size;
	}
	return f(c, id, buf, count, dt, dest, tag, comm);
}

static int q_recv(QMPI_Context c, int tid, void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st)
{
	int id;
	QMPI_Recv_t *f = (QMPI_Recv_t *)next(MPI_RECV_T, &id);
	if (comm == MPI_COMM_WORLD)
		n_recv++;
	return f(c, id, buf, count, dt, src, tag, comm, st);
}

static int q_barrier(QMPI_Context c, int tid, MPI_Comm comm)
{
	int id;
	QMPI_Barrier_t *f = (QMPI_Barrier_t *)next(MPI_BARRIER_T, &id);
	if (comm == MPI_COMM_WORLD)
		n_barrier++;
	return f(c, id, comm);
}

static int q_allreduce(QMPI_Context c, int tid, const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	int id;
	QMPI_Allreduce_t *f = (QMPI_Allreduce_t *)next(MPI_ALLREDUCE_T, &id);
	if (comm == MPI_COMM_WORLD)
		n_allreduce++;
	return f(c, id, s, r, count, dt, op, comm);
}

static void qcount_init(int tool_id)
{
	init_called = 1;
	my_id = tool_id;
	QMPI_Register_function(tool_id, MPI_SEND_T, (void (*)(void))q_send);
	QMPI_Register_function(tool_id, MPI_RECV_T, (void (*)(void))q_recv);
	QMPI_Register_function(tool_id, MPI_BARRIER_T, (void (*)(void))q_barrier);
	QMPI_Register_function(tool_id, MPI_ALLREDUCE_T, (void (*)(void))q_allreduce);
}

__attribute__((constructor)) static void qcount_load(void)
{
	reg_rc = QMPI_Register_tool_name("qcount", qcount_init);
}

__attribute__((destructor)) static void qcount_write(void)
{
	const char *dir = getenv("QMPI_OUT"), *rank = getenv("PMI_RANK");
	if (dir == NULL)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/qcount.%s.txt", dir, rank != NULL ? rank : "0");
	FILE *fh = fopen(path, "w");
	if (fh == NULL)
		return;
	fprintf(fh, "reg %d\ninit %d\nMPI_Send %ld\nMPI_Recv %ld\nMPI_Barrier %ld\nMPI_Allreduce %ld\nbytes %ld\n",
		reg_rc, init_called, n_send, n_recv, n_barrier, n_allreduce, bytes);
	fclose(fh);
}
