/*
 * tracecost.c: where trace mode's cost per call goes, counted in
 * instructions (runbench -only tracecost: valgrind --tool=callgrind on both
 * ranks, bench/cmd/runbench/tracecost.go). Instruction counts do not drift
 * with the machine's load as two-rank timings do.
 *
 * Two loops of ab.c, each in profile mode (MPI_Pcontrol(1)) and in trace
 * mode (and MPI_Pcontrol(6)), after a warm-up repetition of each:
 *
 *   bw_8        n windows: 64 MPI_Isend (rank 0) or MPI_Irecv (rank 1) of
 *               8 bytes, MPI_Waitall, an acknowledgement (MPI_Recv on rank
 *               0, MPI_Send on rank 1): 66 calls per window and rank
 *   pingpong_8  n round trips of 8 bytes: 2 calls per iteration and rank
 *   pingpong_0  the same with empty messages
 *   local_test_done  10 n MPI_Test of a persistent request never started
 *               (done at once, no message: ab.c's local_test_done), each
 *               rank on its own: 1 call per iteration
 *
 * The counts are zeroed before each measured loop (CALLGRIND_ZERO_STATS)
 * and dumped after it under its name (CALLGRIND_DUMP_STATS_AT("<loop>
 * <mode>")): each dump holds one repetition (and what the process's other
 * threads did meanwhile). Each rank prints
 *
 *   CALLS <loop> <calls per rank>
 *
 * Usage: tracecost [n]   (default 2000)
 */
#include <string.h>
#include <valgrind/callgrind.h>
#include "bench.h"

#define BW_WINDOW 64
static char bwbuf[BW_WINDOW][8];
static MPI_Request bwreq[BW_WINDOW];
static char buf[8];
static int pplen = 8; /* the ping-pong's message size */
static MPI_Request local_req; /* persistent, never started */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static __attribute__((noinline)) void bw(int rank, long n)
{
	for (long i = 0; i < n; i++) {
		int ack = 0;
		if (rank == 0) {
			for (int w = 0; w < BW_WINDOW; w++)
				MPI_Isend(bwbuf[w], 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &bwreq[w]);
			MPI_Waitall(BW_WINDOW, bwreq, MPI_STATUSES_IGNORE);
			MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			for (int w = 0; w < BW_WINDOW; w++)
				MPI_Irecv(bwbuf[w], 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &bwreq[w]);
			MPI_Waitall(BW_WINDOW, bwreq, MPI_STATUSES_IGNORE);
			MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
		}
	}
}

static __attribute__((noinline)) void pingpong(int rank, long n)
{
	for (long i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Send(buf, pplen, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, pplen, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, pplen, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, pplen, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
}

static __attribute__((noinline)) void testdone(int rank, long n)
{
	(void)rank;
	int flag;
	for (long i = 0; i < 10 * n; i++)
		MPI_Test(&local_req, &flag, MPI_STATUS_IGNORE);
}

static void measure(int rank, const char *loop, int trace, long n)
{
	void (*fn)(int, long) = strcmp(loop, "bw_8") == 0 ? bw : strcmp(loop, "local_test_done") == 0 ? testdone : pingpong;
	pplen = strcmp(loop, "pingpong_0") == 0 ? 0 : 8;
	MPI_Pcontrol(1);
	if (trace)
		MPI_Pcontrol(6);
	fn(rank, n); /* warm-up: bindings, tables, the trace's dictionary */
	PMPI_Barrier(MPI_COMM_WORLD);
	char name[64];
	snprintf(name, sizeof name, "%s %s", loop, trace ? "trace" : "profile");
	CALLGRIND_ZERO_STATS;
	fn(rank, n);
	CALLGRIND_DUMP_STATS_AT(name);
	if (trace)
		MPI_Pcontrol(-6);
	PMPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	long n = bench_iters(argc, argv, 2000);
	char pbuf[1];
	MPI_Pcontrol(1); /* mpiscope knows the request as persistent (as in ab.c) */
	MPI_Send_init(pbuf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &local_req);
	for (int trace = 0; trace < 2; trace++) {
		measure(rank, "bw_8", trace, n / 8 > 0 ? n / 8 : 1);
		measure(rank, "pingpong_8", trace, n);
		measure(rank, "pingpong_0", trace, n);
		measure(rank, "local_test_done", trace, n);
	}
	MPI_Request_free(&local_req);
	printf("CALLS bw_8 %ld\nCALLS pingpong_8 %ld\nCALLS pingpong_0 %ld\nCALLS local_test_done %ld\n",
	       (n / 8 > 0 ? n / 8 : 1) * (BW_WINDOW + 2), 2 * n, 2 * n, 10 * n);
	MPI_Finalize();
	return 0;
}
