/*
 * poll.c: calls that fill a trace (internal/trace/e2e_end_test.go). Usage:
 * poll NRANK NWTIME. Each rank makes NRANK MPI_Comm_rank calls, NWTIME
 * MPI_Wtime calls and one MPI_Barrier. With no
 * argument it only initializes and finalizes (the clock-sync tests).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	if (argc < 3) {
		MPI_Finalize();
		return 0;
	}
	long nrank = atol(argv[1]), nwtime = atol(argv[2]);
	int rank = 0;
	double t = 0;
	for (long i = 0; i < nrank; i++)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < nwtime; i++)
		t += MPI_Wtime();
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("poll done %d\n", t > 0);
	MPI_Finalize();
	return 0;
}
