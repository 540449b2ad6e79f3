/*
 * isend.c: nonblocking point-to-point on 2 ranks, completed by several
 * kinds of completion calls. Each rank, with the other rank, tag 7:
 *  - 10 times MPI_Irecv + MPI_Isend of 8 bytes, MPI_Wait on the send, then
 *    on the receive;
 *  - 10 times MPI_Isend + MPI_Irecv of 256 KiB (a rendezvous: the send is
 *    not complete when MPI_Isend returns), MPI_Waitall;
 *  - 10 times MPI_Isend + MPI_Irecv of 8 bytes, MPI_Testany until both
 *    are done.
 * Per rank: 30 sends and 30 receives posted and completed; 20 messages of
 * 8 bytes and 10 of 262,144 bytes received.
 */
#include <mpi.h>
#include <stdlib.h>

#define N 10
#define BIG (256 * 1024)

int main(int argc, char **argv)
{
	int rank;
	double out = 1, in = 0;
	MPI_Request r[2];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	char *bout = calloc(BIG, 1), *bin = calloc(BIG, 1);
	for (int i = 0; i < N; i++) {
		MPI_Irecv(&in, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[1]);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < N; i++) {
		MPI_Isend(bout, BIG, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(bin, BIG, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
	for (int i = 0; i < N; i++) {
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(&in, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &r[1]);
		for (int done = 0; done < 2;) {
			int idx, flag;
			MPI_Testany(2, r, &idx, &flag, MPI_STATUS_IGNORE);
			if (flag && idx != MPI_UNDEFINED)
				done++;
		}
	}
	free(bout);
	free(bin);
	MPI_Finalize();
	return 0;
}
