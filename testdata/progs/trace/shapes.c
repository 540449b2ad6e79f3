/*
 * shapes.c: more distinct event shapes from one call site than a trace
 * buffer's dictionary has slots (1024), so that shapes differing only in
 * their message fields meet in a slot. Run with 3 ranks:
 *   rank 0: MPI_Send of i bytes with tag i to rank 1 + i % 2, i = 0..N-1,
 *           from one call site;
 *   ranks 1, 2: MPI_Recv from rank 0, any tag, from one call site (N/2
 *           each: tags and sizes 2k + rank - 1);
 *   all: MPI_Bcast of i bytes from root i % 3, i = 0..NB-1, one call site.
 */
#include <mpi.h>
#include <stdio.h>

#define N 2200
#define NB 1100

int main(int argc, char **argv)
{
	static char buf[N];
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < N; i++) {
		if (rank == 0)
			MPI_Send(buf, i, MPI_BYTE, 1 + i % 2, i, MPI_COMM_WORLD);
		else if (rank == 1 + i % 2)
			MPI_Recv(buf, N, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < NB; i++)
		MPI_Bcast(buf, i, MPI_BYTE, i % 3, MPI_COMM_WORLD);
	if (rank == 0)
		printf("shapes done\n");
	MPI_Finalize();
	return 0;
}
