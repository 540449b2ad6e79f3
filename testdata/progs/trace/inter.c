/*
 * inter.c: an intercommunicator between the even and the odd ranks of 4.
 * Each rank Isends 3 messages to the rank of the same index on the other
 * side and receives 3 with MPI_Irecv (any source on odd ranks), then all
 * wait; a barrier on each side's communicator.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, lrank;
	MPI_Comm half, inter;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Comm_rank(half, &lrank);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 99, &inter);
	int out[3], in[3];
	MPI_Request req[6];
	for (int i = 0; i < 3; i++) {
		out[i] = rank * 10 + i;
		MPI_Irecv(&in[i], 1, MPI_INT, rank % 2 ? MPI_ANY_SOURCE : lrank, i, inter, &req[i]);
	}
	for (int i = 0; i < 3; i++)
		MPI_Isend(&out[i], 1, MPI_INT, lrank, i, inter, &req[3 + i]);
	MPI_Waitall(6, req, MPI_STATUSES_IGNORE);
	MPI_Barrier(half);
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
