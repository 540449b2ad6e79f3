/*
 * loop.c: N (argv[1], default 10,000,000) MPI_Comm_rank calls on one rank,
 * timed; prints the mean ns per call (docs/stacking.md, "Cost").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	int r = 0;
	long s = 0;
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
		s += r;
	}
	double t1 = MPI_Wtime();
	printf("%.2f ns per MPI_Comm_rank (%ld)\n", (t1 - t0) * 1e9 / (double)n, s);
	MPI_Finalize();
	return 0;
}
