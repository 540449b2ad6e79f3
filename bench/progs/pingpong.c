/*
 * pingpong.c: two ranks bounce a message of 0, 8, 64 and 1024 bytes.
 * One iteration is a round trip of four MPI calls, of which two calls'
 * worth of wrapper work is on the critical path: rank 0's send entry and
 * receive exit, rank 1's receive exit and send entry (rank 0's send exit
 * and receive entry overlap the message's flight, as do rank 1's). The
 * program reports 2 calls per iteration.
 */
/* Many short repetitions: on a shared machine some of them run with both
 * ranks on a CPU of their own. */
#define BENCH_REPS 15
#include "bench.h"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "pingpong: needs exactly 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long n = bench_iters(argc, argv, 200000);
	bench_timers(rank, 300000);
	static char buf[1024];
	const int sizes[] = {0, 8, 64, 1024};
	for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int len = sizes[k];
		double best = 1e30;
		for (int rep = 0; rep < BENCH_REPS; rep++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = bench_now();
			for (long i = 0; i < n; i++) {
				if (rank == 0) {
					MPI_Send(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
					MPI_Recv(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
				}
			}
			double t = (bench_now() - t0) / n;
			if (t < best)
				best = t;
		}
		char name[32];
		snprintf(name, sizeof name, "pingpong_%d", len);
		bench_report(rank, name, best, 2);
	}
	MPI_Finalize();
	return 0;
}
