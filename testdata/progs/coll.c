/*
 * coll.c: collectives and communicators with counts known by construction
 * (4 ranks). Bytes follow docs/format.md "Byte accounting".
 */
#include <mpi.h>
#include <stdio.h>

/* A user reduction that calls MPI inside MPI_Allreduce: these nested calls
 * must not be counted. */
static void sum_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	int r;
	MPI_Comm_rank(MPI_COMM_WORLD, &r);
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
	(void)dt;
}

int main(int argc, char **argv)
{
	int rank, size, i;
	int ibuf[64] = {0}, obuf[64] = {0};
	double d[4] = {0}, r[4];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	for (i = 0; i < 100; i++)
		MPI_Bcast(ibuf, 10, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; i < 200; i++)
		MPI_Allreduce(d, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (i = 0; i < 50; i++)
		MPI_Reduce(d, r, 3, MPI_DOUBLE, MPI_SUM, 1, MPI_COMM_WORLD);
	for (i = 0; i < 10; i++) {
		if (rank == 0)
			MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, obuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
		else
			MPI_Gather(ibuf, 2, MPI_INT, obuf, 2, MPI_INT, 0, MPI_COMM_WORLD);
	}
	for (i = 0; i < 10; i++)
		MPI_Alltoall(ibuf, 2, MPI_INT, obuf, 2, MPI_INT, MPI_COMM_WORLD);
	int counts[4], displs[4], ones[4], zero[4];
	for (i = 0; i < 4; i++) {
		counts[i] = i + 1;
		displs[i] = i * 8;
		ones[i] = 1;
		zero[i] = i;
	}
	for (i = 0; i < 10; i++)
		MPI_Allgatherv(ibuf, rank + 1, MPI_INT, obuf, counts, displs, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < 10; i++)
		MPI_Alltoallv(ibuf, ones, zero, MPI_INT, obuf, ones, zero, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < 5; i++)
		MPI_Barrier(MPI_COMM_WORLD);

	MPI_Comm half, dup;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	for (i = 0; i < 30; i++)
		MPI_Allreduce(&rank, &obuf[0], 1, MPI_INT, MPI_SUM, half);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (i = 0; i < 10; i++)
		MPI_Barrier(dup);
	MPI_Op op;
	MPI_Op_create(sum_op, 1, &op);
	for (i = 0; i < 3; i++)
		MPI_Allreduce(&rank, &obuf[0], 1, MPI_INT, op, MPI_COMM_WORLD);
	MPI_Op_free(&op);
	MPI_Comm_free(&half);
	MPI_Comm_free(&dup);
	if (rank == 0)
		printf("coll done on %d ranks\n", size);
	MPI_Finalize();
	return 0;
}
