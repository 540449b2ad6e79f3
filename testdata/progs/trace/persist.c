/*
 * persist.c: persistent point-to-point requests on 2 ranks. Each rank
 * sets up one persistent send to the other rank and one persistent
 * receive from it (MPI_Send_init, MPI_Recv_init), then 10 times starts
 * both (MPI_Start) and completes each with MPI_Wait, the send first; then
 * 10 times starts both with MPI_Startall and completes them with
 * MPI_Waitall. Per rank: 20 sends started and completed, 20 receives
 * posted and completed, 8 bytes each.
 */
#include <mpi.h>

#define N 10

int main(int argc, char **argv)
{
	int rank;
	double out = 1, in = 0;
	MPI_Request r[2];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	MPI_Recv_init(&in, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[0]);
	MPI_Send_init(&out, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[1]);
	for (int i = 0; i < N; i++) {
		MPI_Start(&r[0]);
		MPI_Start(&r[1]);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < N; i++) {
		MPI_Startall(2, r);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
	MPI_Request_free(&r[0]);
	MPI_Request_free(&r[1]);
	MPI_Finalize();
	return 0;
}
