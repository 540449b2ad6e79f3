/*
 * poll.c: calls that fill a trace (internal/trace/e2e_end_test.go). Usage:
 * poll NRANK NLOCAL. Each rank makes NRANK MPI_Comm_rank calls, NLOCAL
 * MPI_Query_thread calls (a call the trace leaves out by default; MPI_Wtime
 * is never recorded at all) and one MPI_Barrier. With no
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
	long nrank = atol(argv[1]), nlocal = atol(argv[2]);
	int rank = 0;
	int level = -1;
	for (long i = 0; i < nrank; i++)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < nlocal; i++)
		MPI_Query_thread(&level);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("poll done %d\n", level >= 0);
	MPI_Finalize();
	return 0;
}
