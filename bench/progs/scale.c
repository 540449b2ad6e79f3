/*
 * scale.c: a short run of every rank (ring exchange, allreduce, cheap calls
 * from a few dozen call sites) ending in MPI_Finalize, where mpiscope
 * merges all ranks' profiles in a binomial tree. With
 * MPISCOPE_DEBUG_TIMING=1 rank 0 prints the finalize phases to stderr.
 * The program prints the wall time of MPI_Finalize on rank 0:
 *   FINALIZE <ranks> <ms>
 */
#include "bench.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = bench_iters(argc, argv, 200);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	double x = rank, y;
	char sbuf[256], rbuf[256];
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	for (long i = 0; i < n; i++) {
		MPI_Sendrecv(sbuf, (int)(i % 256), MPI_BYTE, right, 0, rbuf, 256, MPI_BYTE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, half);
		int v;
		MPI_Comm_rank(MPI_COMM_WORLD, &v);
		MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &v, MPI_STATUS_IGNORE);
	}
	MPI_Comm_free(&half);
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = bench_now();
	MPI_Finalize();
	double t1 = bench_now();
	if (rank == 0) {
		printf("FINALIZE %d %.3f\n", size, (t1 - t0) / 1e6);
		fflush(stdout);
	}
	return 0;
}
