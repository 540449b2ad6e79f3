/*
 * bytes.c: a small PMPI tool that counts the bytes this rank sends
 * (MPI_Send and MPI_Isend) and writes "sends N" and "bytes N" to
 * $STACK_OUT/bytes.<rank>.txt at MPI_Finalize. It calls only PMPI_.
 * With STACK_BYTES_FAIL_TAG=T set, an MPI_Send with tag T is not sent: it
 * returns MPI_ERR_TAG to its caller (a tool that returns an error). With
 * STACK_BYTES_MAX=1, MPI_Allreduce's MPI_SUM becomes MPI_MAX on the way
 * down (a tool that changes arguments).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long long sends, bytes;
static int fail_tag = -1, sum_to_max;

int MPI_Init(int *argc, char ***argv)
{
	const char *t = getenv("STACK_BYTES_FAIL_TAG");
	if (t != NULL && *t)
		fail_tag = atoi(t);
	const char *m = getenv("STACK_BYTES_MAX");
	sum_to_max = m != NULL && m[0] == '1';
	return PMPI_Init(argc, argv);
}

int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
	if (sum_to_max && op == MPI_SUM)
		op = MPI_MAX;
	return PMPI_Allreduce(s, r, n, t, op, c);
}

static void add(int n, MPI_Datatype t, int dest)
{
	int size = 0;
	if (dest == MPI_PROC_NULL)
		return;
	PMPI_Type_size(t, &size);
	sends++;
	bytes += (long long)n * size;
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
	if (tag == fail_tag)
		return MPI_ERR_TAG;
	add(n, t, d);
	return PMPI_Send(b, n, t, d, tag, c);
}

int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r)
{
	add(n, t, d);
	return PMPI_Isend(b, n, t, d, tag, c, r);
}

int MPI_Finalize(void)
{
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *dir = getenv("STACK_OUT");
	char path[4096];
	snprintf(path, sizeof path, "%s/bytes.%d.txt", dir ? dir : ".", rank);
	FILE *f = fopen(path, "w");
	if (f != NULL) {
		fprintf(f, "sends %lld\nbytes %lld\n", sends, bytes);
		fclose(f);
	}
	return PMPI_Finalize();
}
