/*
 * cheap.c: a single rank calling cheap MPI functions in a loop, where the
 * interposition overhead is the largest share of the call:
 * MPI_Comm_rank, MPI_Iprobe (nothing pending) and MPI_Test on a request
 * that is already complete (an inactive persistent request); and
 * MPI_Wtime, which mpiscope passes on unrecorded.
 * Usage: cheap [iterations [only]], only = comm_rank, iprobe, allreduce_1,
 * test_done or wtime
 * runs that loop alone (for instruction counts under callgrind).
 */
#include <string.h>
#include "bench.h"

/* cheap_loops holds the measured loops: callgrind counts instructions
 * inside it only (runbench -only callgrind: --toggle-collect=cheap_loops). */
__attribute__((noinline)) static void cheap_loops(int argc, char **argv)
{
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = bench_iters(argc, argv, 2000000);
	const char *only = argc > 2 ? argv[2] : NULL;
#define RUN(name) (only == NULL || strcmp(only, name) == 0)
	if (only == NULL)
		bench_timers(rank, n);

	/* BEST(name, body): n iterations of body, best of BENCH_REPS. */
#define BEST(name, body)                                              \
	do {                                                          \
		double best_ = 1e30;                                  \
		for (int rep = 0; rep < BENCH_REPS; rep++) {          \
			double t0 = bench_now();                      \
			for (long i = 0; i < n; i++) {                \
				body;                                 \
			}                                             \
			double t = (bench_now() - t0) / n;            \
			if (t < best_)                                \
				best_ = t;                            \
		}                                                     \
		bench_report(rank, name, best_, 1);                   \
	} while (0)
	/* Each loop, and (not under callgrind) its PMPI_ call between two
	 * timestamp reads: <name>_timer - none's <name> is what two reads
	 * cost in that place. */
	int r = 0, flag;
	if (RUN("comm_rank"))
		BEST("comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, &r));
	if (only == NULL)
		BEST("comm_rank_timer", BENCH_TIMED(PMPI_Comm_rank(MPI_COMM_WORLD, &r)));
	if (RUN("iprobe"))
		BEST("iprobe", MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
	if (only == NULL)
		BEST("iprobe_timer", BENCH_TIMED(PMPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE)));

	/* An 8-byte allreduce on a one-rank MPI_COMM_WORLD: the path of a
	 * collective's wrapper (communicator, datatype size, bytes) with little
	 * work in the library. */
	double in = 1.0, out = 0;
	if (RUN("allreduce_1"))
		BEST("allreduce_1", MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
	if (only == NULL)
		BEST("allreduce_1_timer", BENCH_TIMED(PMPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)));

	/* A persistent request never started is inactive: MPI_Test returns
	 * flag = true at once and leaves the request allocated. */
	char buf[1];
	MPI_Request req;
	MPI_Send_init(buf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req);
	if (RUN("test_done"))
		BEST("test_done", MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
	if (only == NULL)
		BEST("test_done_timer", BENCH_TIMED(PMPI_Test(&req, &flag, MPI_STATUS_IGNORE)));
	MPI_Request_free(&req);

	/* MPI_Wtime, which mpiscope never records (internal/wrapgen,
	 * untimed): it should cost no more than a call with recording off. */
	double tw = 0;
	if (RUN("wtime"))
		BEST("wtime", tw += MPI_Wtime());
	bench_sink += (uint64_t)tw;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	cheap_loops(argc, argv);
	MPI_Finalize();
	return 0;
}
