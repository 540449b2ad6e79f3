/*
 * pboff.c: what profile mode costs per call with the piggyback channel off,
 * counted in instructions (runbench -only channel-off: valgrind
 * --tool=callgrind on both ranks, bench/cmd/runbench/channeloff.go), to
 * compare builds: the library as built, and the same with the channel's
 * code compiled out (-DMS_NO_PIGGYBACK, piggyback.h).
 *
 * Three loops on 2 ranks, each after a warm-up repetition:
 *
 *   pingpong_8   n round trips of 8 bytes (MPI_Send, MPI_Recv): 2 calls
 *                per iteration and rank
 *   isend_8      n/8 windows of 64 MPI_Isend (rank 0) or MPI_Irecv (rank
 *                1) of 8 bytes, MPI_Waitall, an acknowledgement (MPI_Recv
 *                on rank 0, MPI_Send on rank 1): 66 calls per window and
 *                rank
 *   allreduce_8  n MPI_Allreduce of one double: 1 call per iteration
 *
 * The counts are zeroed before each measured loop (CALLGRIND_ZERO_STATS)
 * and dumped after it under its name and the rank
 * (CALLGRIND_DUMP_STATS_AT("<loop> r<rank>")).
 * Rank 0 prints
 *
 *   CALLS <loop> <calls per rank>
 *
 * Usage: pboff [n]   (default 2000)
 */
#include <string.h>
#include <valgrind/callgrind.h>
#include "bench.h"

#define WINDOW 64
static char wbuf[WINDOW][8];
static MPI_Request wreq[WINDOW];
static char buf[8];

static __attribute__((noinline)) void pingpong(int rank, long n)
{
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
}

static __attribute__((noinline)) void isend(int rank, long n)
{
	for (long i = 0; i < n; i++) {
		int ack = 0;
		if (rank == 0) {
			for (int w = 0; w < WINDOW; w++)
				MPI_Isend(wbuf[w], 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &wreq[w]);
			MPI_Waitall(WINDOW, wreq, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			for (int w = 0; w < WINDOW; w++)
				MPI_Irecv(wbuf[w], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &wreq[w]);
			MPI_Waitall(WINDOW, wreq, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		}
	}
}

static __attribute__((noinline)) void allreduce(int rank, long n)
{
	double x = rank, y = 0;
	for (long i = 0; i < n; i++)
		MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void measure(int rank, const char *loop, void (*fn)(int, long), long n, long calls)
{
	fn(rank, n); /* warm-up: bindings, tables */
	PMPI_Barrier(MPI_COMM_WORLD);
	char name[64];
	snprintf(name, sizeof name, "%s r%d", loop, rank);
	CALLGRIND_ZERO_STATS;
	fn(rank, n);
	CALLGRIND_DUMP_STATS_AT(name);
	PMPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("CALLS %s %ld\n", loop, calls);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = bench_iters(argc, argv, 2000), w = n / 8 > 0 ? n / 8 : 1;
	measure(rank, "pingpong_8", pingpong, n, 2 * n);
	measure(rank, "isend_8", isend, w, w * (WINDOW + 2));
	measure(rank, "allreduce_8", allreduce, n, n);
	MPI_Finalize();
	return 0;
}
