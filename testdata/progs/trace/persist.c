/*
 * persist.c: persistent point-to-point requests on 2 ranks. Each rank
 * sets up one persistent send to the other rank and one persistent
 * receive from it (MPI_Send_init, MPI_Recv_init), then 10 times starts
 * both (MPI_Start) and completes each with MPI_Wait, the send first; then
 * 10 times starts both with MPI_Startall and completes them with
 * MPI_Waitall. Per rank: 20 sends started and completed, 20 receives
 * posted and completed, 8 bytes each. Between them the requests are
 * inactive, and each round also completes them while they are
 * (MPI_Test, MPI_Wait, MPI_Waitall, MPI_Testall: done at once, nothing
 * completed, so no completion event; the first finds them inactive in
 * the persistent table, the others by their role note, MS_TR_IDLE).
 * After MPI_Request_free, one MPI_Isend and one MPI_Irecv of 8 bytes
 * (tag 7), completed with MPI_Wait: per rank 21 send and 21 receive
 * completions.
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
		int flag = 0;
		for (int k = 0; k < 3; k++) {
			MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
			MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE);
			MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		}
	}
	for (int i = 0; i < N; i++) {
		MPI_Startall(2, r);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		int flag = 0;
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
		MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE);
	}
	MPI_Request_free(&r[0]);
	MPI_Request_free(&r[1]);
	MPI_Request q[2];
	MPI_Irecv(&in, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &q[0]);
	MPI_Isend(&out, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &q[1]);
	MPI_Wait(&q[1], MPI_STATUS_IGNORE);
	MPI_Wait(&q[0], MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
