/*
 * clock.c: MPI_Wtime and MPI_Wtick in a timing loop around MPI_Comm_rank
 * (internal/mpitest/clock_test.go). Usage: clock N. Each rank makes N
 * MPI_Comm_rank calls, each between two MPI_Wtime calls, then N
 * MPI_Wtick calls. The clock's readings must never go back.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int rank = 0, back = 0;
	double sum = 0, tick = 0, last = MPI_Wtime(); /* 1 MPI_Wtime */
	for (long i = 0; i < n; i++) {
		double t0 = MPI_Wtime();
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		double t1 = MPI_Wtime();
		back += t0 < last || t1 < t0;
		sum += t1 - t0;
		last = t1;
	}
	for (long i = 0; i < n; i++)
		tick += MPI_Wtick();
	if (rank == 0)
		printf("clock done: back %d, tick %s, sum %s\n", back, tick > 0 ? "ok" : "zero", sum >= 0 ? "ok" : "negative");
	MPI_Finalize();
	return 0;
}
