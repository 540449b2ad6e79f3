/*
 * pin-cpls.c: the program whose rank-0 trace in format version 4 is
 * committed beside it (pin-cpls-r0-raw.mst, pin-cpls-r0.mst; README.md has
 * the recipe, pin_test.go the expected events). 2 ranks. Completion calls
 * of several requests write their completions as one completions record:
 *  - MPI_Waitall of 3 receives (16 bytes posted, tag 3 from rank 1) and 3
 *    sends (8 bytes, tag 4): one record, the receives' source, tag and
 *    size (8 bytes) once;
 *  - MPI_Waitsome of a send and a receive (tag 5), until both are done;
 *  - MPI_Waitall of a receive from MPI_PROC_NULL and an MPI_Ibarrier: the
 *    receive's fields are the defaults a record starts with.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, in[3][4], out[2] = {1, 2}, x = 0, y = 0;
	MPI_Request r[6];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	for (int i = 0; i < 3; i++)
		MPI_Irecv(in[i], 4, MPI_INT, peer, 3 + rank, MPI_COMM_WORLD, &r[i]);
	for (int i = 0; i < 3; i++)
		MPI_Isend(out, 2, MPI_INT, peer, 4 - rank, MPI_COMM_WORLD, &r[3 + i]);
	MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
	MPI_Isend(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[0]);
	MPI_Irecv(&y, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[1]);
	for (int done = 0; done < 2;) {
		int k, idx[2];
		MPI_Waitsome(2, r, &k, idx, MPI_STATUSES_IGNORE);
		done += k;
	}
	MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &r[0]);
	MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	MPI_Finalize();
	return 0;
}
