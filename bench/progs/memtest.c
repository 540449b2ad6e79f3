/*
 * memtest.c: memory growth of a rank over many MPI calls spread over many
 * distinct call sites and peers.
 *
 * Rank 0 makes N calls (argv[1], default 10^7) cycling through 1,000 cases
 * of a switch, each holding its own MPI call instructions (macro-expanded,
 * compiled without optimization so that no two cases share a call), hence
 * 1,000+ distinct return addresses. Cases 0..63 post a receive from world
 * rank 1+k, cancel it and complete it (three call sites each): the receive
 * is recorded against that peer in mpiscope's per-peer table, without any
 * message being sent. The other cases call MPI_Comm_rank, MPI_Iprobe,
 * MPI_Comm_size or MPI_Test with arguments that depend on the case. So with
 * a world of 65 ranks, rank 0 talks to 64 peers through 64*3 + 936 = 1,128
 * call sites. The other ranks sleep in a polled MPI_Ibarrier so that rank 0
 * has a core.
 *
 * Rank 0 prints VmHWM (peak RSS) read from /proc/self/status after MPI_Init
 * and after the calls:  MEM <calls> <sites> <peers> <hwm before kB> <hwm after kB>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long vmhwm_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static int npeers;
static MPI_Request done_req; /* an inactive persistent request */

#define PEERCASE(k)                                                                       \
	{                                                                                 \
		MPI_Request r;                                                            \
		MPI_Irecv(buf, 8, MPI_BYTE, 1 + (k) % npeers, (k), MPI_COMM_WORLD, &r);   \
		MPI_Cancel(&r);                                                           \
		MPI_Wait(&r, MPI_STATUS_IGNORE);                                          \
	}
#define OTHERCASE(k)                                                                      \
	switch ((k) % 4) {                                                                \
	case 0: MPI_Comm_rank(MPI_COMM_WORLD, &v); break;                                 \
	case 1: MPI_Iprobe(MPI_ANY_SOURCE, (k), MPI_COMM_WORLD, &v, MPI_STATUS_IGNORE); break; \
	case 2: MPI_Comm_size(MPI_COMM_WORLD, &v); break;                                 \
	default: MPI_Test(&done_req, &v, MPI_STATUS_IGNORE); break;                       \
	}
/* Case n (1000..1999) is site n-1000. */
#define S0(n) case n: if ((n) - 1000 < 64) PEERCASE((n) - 1000) else OTHERCASE((n) - 1000) break;
#define S1(p) S0(p##0) S0(p##1) S0(p##2) S0(p##3) S0(p##4) S0(p##5) S0(p##6) S0(p##7) S0(p##8) S0(p##9)
#define S2(p) S1(p##0) S1(p##1) S1(p##2) S1(p##3) S1(p##4) S1(p##5) S1(p##6) S1(p##7) S1(p##8) S1(p##9)
#define S3(p) S2(p##0) S2(p##1) S2(p##2) S2(p##3) S2(p##4) S2(p##5) S2(p##6) S2(p##7) S2(p##8) S2(p##9)

static long site_calls[1000];

static long run(long n)
{
	char buf[8];
	int v;
	long calls = 0;
	for (long i = 0; calls < n; i++) {
		int k = (int)(i % 1000);
		switch (k + 1000) {
			S3(1)
		}
		calls += k < 64 ? 3 : 1;
		site_calls[k]++;
	}
	return calls;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	npeers = size > 1 ? (size - 1 < 64 ? size - 1 : 64) : 1;
	if (size == 1)
		npeers = 0;
	MPI_Send_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &done_req);
	if (rank == 0) {
		if (npeers == 0) {
			fprintf(stderr, "memtest: needs at least 2 ranks\n");
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
		long before = vmhwm_kb();
		long calls = run(n);
		long after = vmhwm_kb();
		int sites = 0;
		for (int k = 0; k < 1000; k++)
			if (site_calls[k])
				sites += k < 64 ? 3 : 1;
		printf("MEM %ld %d %d %ld %ld\n", calls, sites, npeers, before, after);
		fflush(stdout);
	}
	MPI_Request b;
	MPI_Ibarrier(MPI_COMM_WORLD, &b);
	int flag = 0;
	struct timespec ms = {0, 1000000};
	while (!flag) {
		MPI_Test(&b, &flag, MPI_STATUS_IGNORE);
		if (!flag && rank != 0)
			nanosleep(&ms, NULL);
	}
	MPI_Request_free(&done_req);
	MPI_Finalize();
	return 0;
}
