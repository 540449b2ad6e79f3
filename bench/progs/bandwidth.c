/*
 * bandwidth.c: OSU-style bandwidth between two ranks. One iteration is a
 * window of BW_WINDOW messages: rank 0 posts BW_WINDOW MPI_Isend, rank 1
 * BW_WINDOW MPI_Irecv, each completes them with one MPI_Waitall, and rank
 * 1 acknowledges the window with a 4-byte MPI_Send that rank 0 receives
 * (MPI_Recv). Each rank makes BW_WINDOW + 2 calls per iteration, the two
 * ranks' calls in parallel, so the program reports BW_WINDOW + 2 calls
 * per iteration. Sizes: 8 and 1024 bytes (bw_8, bw_1024).
 */
#define BENCH_REPS 15
#include "bench.h"

#define BW_WINDOW 64

/* MPICH's mpi.h declares MPI_Waitall's statuses an array, which
 * MPI_STATUSES_IGNORE is not. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "bandwidth: needs exactly 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	/* argv[1]: messages per repetition, as the other programs' calls. */
	long n = bench_iters(argc, argv, 200000) / BW_WINDOW;
	if (n < 1)
		n = 1;
	bench_timers(rank, 300000);
	static char buf[BW_WINDOW][1024];
	MPI_Request req[BW_WINDOW];
	int ack = 0;
	const int sizes[] = {8, 1024};
	for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int len = sizes[k];
		double best = 1e30;
		for (int rep = 0; rep < BENCH_REPS; rep++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = bench_now();
			for (long i = 0; i < n; i++) {
				if (rank == 0) {
					for (int w = 0; w < BW_WINDOW; w++)
						MPI_Isend(buf[w], len, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req[w]);
					MPI_Waitall(BW_WINDOW, req, MPI_STATUSES_IGNORE);
					MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					for (int w = 0; w < BW_WINDOW; w++)
						MPI_Irecv(buf[w], len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req[w]);
					MPI_Waitall(BW_WINDOW, req, MPI_STATUSES_IGNORE);
					MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
				}
			}
			double t = (bench_now() - t0) / n;
			if (t < best)
				best = t;
		}
		char name[32];
		snprintf(name, sizeof name, "bw_%d", len);
		bench_report(rank, name, best, BW_WINDOW + 2);
	}
	MPI_Finalize();
	return 0;
}
