/*
 * memo.c: nonblocking posts repeated from one call site with the same
 * arguments (which a trace takes from its post memo) while other events
 * take over dictionary slots. 2 ranks, R rounds of:
 *   - 3 MPI_Isend of 8 bytes, tag 77, to the other rank (one call site),
 *     3 MPI_Irecv of 8 bytes, tag 77, from any source (one call site; a
 *     memo entry apart from the sends'), MPI_Waitall;
 *   - 4,000 MPI_Send of i bytes, tag i, to MPI_PROC_NULL (i = 0..3999; one
 *     call site): as many shapes, enough to take almost every one of a
 *     buffer's 1,024 slots, those of the posts' shapes among them.
 * Per rank: 3R sends and 3R receives of 8 bytes with tag 77, 4,000R calls
 * to MPI_PROC_NULL.
 */
#include <mpi.h>

#define R 4
#define N 4000

int main(int argc, char **argv)
{
	static char buf[N];
	char out[3][8] = {{0}}, in[3][8];
	int rank;
	MPI_Request r[6];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	for (int k = 0; k < R; k++) {
		for (int i = 0; i < 3; i++)
			MPI_Isend(out[i], 8, MPI_BYTE, peer, 77, MPI_COMM_WORLD, &r[i]);
		for (int i = 0; i < 3; i++)
			MPI_Irecv(in[i], 8, MPI_BYTE, MPI_ANY_SOURCE, 77, MPI_COMM_WORLD, &r[3 + i]);
		MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
		for (int i = 0; i < N; i++)
			MPI_Send(buf, i, MPI_BYTE, MPI_PROC_NULL, i, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
