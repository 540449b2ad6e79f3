/*
 * allreduce.c: every rank sums one double with MPI_Allreduce in a loop.
 * One iteration is one call per rank, the ranks' calls run in parallel.
 */
/* Many short repetitions: on a shared machine some of them run with both
 * ranks on a CPU of their own. */
#define BENCH_REPS 15
#include "bench.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = bench_iters(argc, argv, 200000);
	bench_timers(rank, 300000);
	double in = 1.0, out = 0;
	double best = 1e30;
	for (int rep = 0; rep < BENCH_REPS; rep++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = bench_now();
		for (long i = 0; i < n; i++)
			MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		double t = (bench_now() - t0) / n;
		/* Every rank must agree on the best repetition's time: use the
		 * slowest rank's time of this repetition. */
		double tmax;
		MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		if (tmax < best)
			best = tmax;
	}
	bench_report(rank, "allreduce_8", best, 1);
	MPI_Finalize();
	return 0;
}
