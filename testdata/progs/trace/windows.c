/*
 * windows.c: bw_8's windows (bench/progs/ab.c), which trace mode folds
 * into posts records. 2 ranks, W windows (argument 1, default 50) of:
 *   rank 0: 64 MPI_Isend of 8 bytes, tag 9, to rank 1 (one call site),
 *           MPI_Waitall, MPI_Recv of the acknowledgement (4 bytes, tag 2);
 *   rank 1: 64 MPI_Irecv of 8 bytes, tag 9, from rank 0 (one call site),
 *           MPI_Waitall, MPI_Send of the acknowledgement.
 * Per rank 64W posts and their completions, W acknowledgements.
 */
#include <mpi.h>
#include <stdlib.h>

#define K 64

int main(int argc, char **argv)
{
	static char buf[K][8];
	MPI_Request r[K];
	int rank, ack = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int w = argc > 1 ? atoi(argv[1]) : 50;
	for (int i = 0; i < w; i++) {
		if (rank == 0) {
			for (int k = 0; k < K; k++)
				MPI_Isend(buf[k], 8, MPI_BYTE, 1, 9, MPI_COMM_WORLD, &r[k]);
			MPI_Waitall(K, r, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (int k = 0; k < K; k++)
				MPI_Irecv(buf[k], 8, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &r[k]);
			MPI_Waitall(K, r, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
