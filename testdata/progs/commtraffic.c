/* Point-to-point traffic known per communicator (4 ranks or more, even):
 * on MPI_COMM_WORLD each rank r sends 10 messages of 100 bytes to
 * (r + 1) % size; MPI_Comm_split by parity makes two communicators
 * ("Comm_split:<size/2>@0" of the even ranks, "...@1" of the odd ones) on
 * which local rank 0 sends 5 messages of 1000 bytes to local rank 1 (world
 * rank 0 to 2, 1 to 3). Each rank also calls MPI_Allreduce 3 times on
 * MPI_COMM_WORLD and MPI_Barrier (r % 2 + 1) times on its half. */
#include <mpi.h>

int main(int argc, char **argv)
{
	char buf[1000] = {0};
	int rank, size, sub;
	double x = 1, y;
	MPI_Comm half;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < 10; i++) {
		MPI_Request rq;
		MPI_Irecv(buf, 100, MPI_BYTE, (rank + size - 1) % size, 1, MPI_COMM_WORLD, &rq);
		MPI_Send(buf, 100, MPI_BYTE, (rank + 1) % size, 1, MPI_COMM_WORLD);
		MPI_Wait(&rq, MPI_STATUS_IGNORE);
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	MPI_Comm_rank(half, &sub);
	for (int i = 0; i < 5; i++) {
		if (sub == 0)
			MPI_Send(buf, 1000, MPI_BYTE, 1, 2, half);
		else if (sub == 1)
			MPI_Recv(buf, 1000, MPI_BYTE, 0, 2, half, MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < 3; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i <= rank % 2; i++)
		MPI_Barrier(half);
	MPI_Comm_free(&half);
	MPI_Finalize();
	return 0;
}
