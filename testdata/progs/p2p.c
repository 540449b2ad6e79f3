/*
 * p2p.c: point-to-point traffic whose counts are known by construction.
 * Run with an even number of ranks (the tests use 4). Per rank:
 *   MPI_Send      1000 x 8 bytes to the right (+10 to MPI_PROC_NULL: 0 bytes)
 *   MPI_Recv      1000 x 8 bytes from the left, 5 x 4 bytes from MPI_ANY_SOURCE
 *   MPI_Sendrecv   100 x 16 bytes sent right, 16 received from the left
 *   MPI_Isend       50 + 5 x 4 bytes; MPI_Irecv 50 x 4 bytes (MPI_ANY_SOURCE)
 *   persistent     Send_init/Recv_init of 8 bytes, 20 x MPI_Startall(2)
 *   MPI_Ssend        6 x from one call site, alternating 8 bytes on
 *                  MPI_COMM_WORLD and 16 bytes on a duplicate of it, to the
 *                  right; 6 MPI_Recv of 16 bytes from the left to match
 * The markers @name let the tests find the line of a call.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, i;
	double d[2] = {1, 2}, e[2];
	int x = 0, y = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;

	for (i = 0; i < 1000; i++) {
		if (rank % 2 == 0) {
			MPI_Send(d, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD); /* @send-even */
			MPI_Recv(e, 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(e, 1, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(d, 1, MPI_DOUBLE, right, 7, MPI_COMM_WORLD); /* @send-odd */
		}
	}
	for (i = 0; i < 10; i++)
		MPI_Send(d, 1, MPI_DOUBLE, MPI_PROC_NULL, 7, MPI_COMM_WORLD);
	for (i = 0; i < 100; i++)
		MPI_Sendrecv(d, 2, MPI_DOUBLE, right, 3, e, 2, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (i = 0; i < 50; i++) {
		MPI_Request r[2];
		MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&x, 1, MPI_INT, right, 5, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
	for (i = 0; i < 5; i++) {
		MPI_Request r;
		MPI_Isend(&x, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &r);
		MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	}
	MPI_Request p[2];
	MPI_Send_init(d, 1, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &p[0]);
	MPI_Recv_init(e, 1, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &p[1]);
	for (i = 0; i < 20; i++) {
		MPI_Startall(2, p);
		MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
	}
	MPI_Request_free(&p[0]);
	MPI_Request_free(&p[1]);
	/* One call site, two sizes and two communicators: one site record
	 * per (size bin, communicator) in the profile's tables. */
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (i = 0; i < 6; i++) {
		MPI_Comm c = i % 2 ? dup : MPI_COMM_WORLD;
		if (rank % 2 == 0) {
			MPI_Ssend(d, 1 + i % 2, MPI_DOUBLE, right, 13, c); /* @ssend-even */
			MPI_Recv(e, 2, MPI_DOUBLE, left, 13, c, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(e, 2, MPI_DOUBLE, left, 13, c, MPI_STATUS_IGNORE);
			MPI_Ssend(d, 1 + i % 2, MPI_DOUBLE, right, 13, c); /* @ssend-odd */
		}
	}
	MPI_Comm_free(&dup);
	if (rank == 0)
		printf("p2p done on %d ranks\n", size);
	MPI_Finalize();
	return 0;
}
