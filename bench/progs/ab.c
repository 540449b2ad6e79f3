/*
 * ab.c: the two-rank benchmarks (ping-pong of 0, 8, 64 and 1024 bytes, and
 * an 8-byte allreduce) with every mode of mpiscope inside one process; and
 * local loops, each rank on its own core with no message (MPI_Comm_rank,
 * MPI_Iprobe finding nothing, an 8-byte MPI_Allreduce on MPI_COMM_SELF,
 * MPI_Test of a request that is done), like cheap.c's but with the modes
 * alternating in the process too.
 *
 * On a shared or virtual machine two-rank timings drift by 10-300 % over
 * seconds to minutes, whatever runs; separate runs per configuration then
 * compare different states of the machine. Here the modes alternate
 * repetition by repetition in one job, so they share the machine's state:
 *
 *   none     the loop calls PMPI_ directly: no wrapper runs at all
 *   timer    PMPI_ calls, each between two rdtsc reads whose difference is
 *            summed: the least a timing profiler can do, in the same place
 *            (on the critical path, sharing the cores with the other rank)
 *   clock2   PMPI_ calls, each between two clock_gettime reads, their
 *            difference and a call added to a counter record: what the
 *            reference wrapper (refwrap.c) does, in the same place
 *   off      MPI_ under MPI_Pcontrol(0) (recording off)
 *   profile  MPI_ under MPI_Pcontrol(1) (callsites on: the state after MPI_Init)
 *   trace    MPI_ under MPI_Pcontrol(1) and MPI_Pcontrol(6) (profile and trace)
 *
 * A cycle runs each mode once (n iterations), in an order rotated from one
 * cycle to the next; the first cycle warms up and is not counted. For each
 * mode the program reports, on rank 0, the median over cycles of its time
 * per iteration and of its difference to the same cycle's none:
 *
 *   AB <benchmark> <mode> <median ns per iteration> <median (mode - none) ns per iteration> <calls>
 *
 * calls = the MPI calls per iteration on the critical path (2 for the
 * ping-pong, see pingpong.c; 1 for the allreduce and the local loops;
 * BW_WINDOW + 2 for the bandwidth windows, see bandwidth.c). And, so that a harness
 * can check that the modes did what they say from the profile:
 *
 *   EXPECT <MPI function> <calls recorded over the job>
 *
 * (profile and trace record, none and off do not; the warm-up cycle counts).
 * Without mpiscope, or with its pass-through build, MPI_Pcontrol does
 * nothing and every mode but none is the same: the differences then show
 * the method's noise and the floor of interposition.
 *
 * Usage: ab [iterations per repetition [cycles [benchmarks]]]
 * benchmarks: the names to run, comma-separated (default all; e.g.
 * "bw_8,pingpong_8" for trace mode's cost, bench/cmd/runbench -only tracecost).
 */
#include <string.h>
#include "bench.h"

enum { NONE, TIMER, OFF, PROFILE, TRACE, CLOCK2, NMODES };
static const char *mode_name[NMODES] = {"none", "timer", "off", "profile", "trace", "clock2"};

/* set_mode switches this rank to mode m (cold: outside the timed loops). */
static void set_mode(int m)
{
	switch (m) {
	case NONE:
	case TIMER:
	case CLOCK2:
	case OFF:
		MPI_Pcontrol(0);
		break;
	case PROFILE:
		MPI_Pcontrol(1);
		break;
	case TRACE:
		MPI_Pcontrol(1);
		MPI_Pcontrol(6);
		break;
	}
	PMPI_Barrier(MPI_COMM_WORLD);
}

static void unset_mode(int m)
{
	if (m == TRACE)
		MPI_Pcontrol(-6);
}

static char buf[1024];
#define T(call) BENCH_TIMED(call)
#define N(call) call

/* C(call): the reference wrapper's work in place (refwrap.c's REF). */
static struct { uint64_t calls, ns; } clock2_count;
static inline uint64_t clock2_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define C(call)                                              \
	do {                                                 \
		uint64_t c2_t0_ = clock2_now();              \
		call;                                        \
		clock2_count.ns += clock2_now() - c2_t0_;    \
		clock2_count.calls++;                        \
	} while (0)

/* The bandwidth benchmark (bandwidth.c): a window of BW_WINDOW messages. */
#define BW_WINDOW 64
static char bwbuf[BW_WINDOW][1024];
static MPI_Request bwreq[BW_WINDOW];
/* MPICH's mpi.h declares MPI_Waitall's statuses an array, which
 * MPI_STATUSES_IGNORE is not. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

/* The loops are written out for each kind of call (MPI_, PMPI_, timed
 * PMPI_), so that every call is a direct call. */
#define PINGPONG(P, W)                                                                          \
	for (long i = 0; i < n; i++) {                                                          \
		if (rank == 0) {                                                                \
			W(P##MPI_Send(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD));               \
			W(P##MPI_Recv(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); \
		} else {                                                                        \
			W(P##MPI_Recv(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); \
			W(P##MPI_Send(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD));               \
		}                                                                               \
	}

#define ALLREDUCE(P, W)                                                                         \
	for (long i = 0; i < n; i++)                                                            \
		W(P##MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));

/* slowest returns the repetition's time per iteration since t0 on the
 * slowest rank: both ranks must agree on it. */
static double slowest(double t0, long n)
{
	double t = (bench_now() - t0) / n, tmax;
	PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return tmax;
}

static double rep_pingpong(int rank, int mode, int len, long n)
{
	double t0 = bench_now();
	if (mode == NONE)
		PINGPONG(P, N)
	else if (mode == TIMER)
		PINGPONG(P, T)
	else if (mode == CLOCK2)
		PINGPONG(P, C)
	else
		PINGPONG(, N)
	return (bench_now() - t0) / n;
}

#define BANDWIDTH(P, W)                                                                                  \
	for (long i = 0; i < n; i++) {                                                                   \
		int ack = 0;                                                                             \
		if (rank == 0) {                                                                         \
			for (int w = 0; w < BW_WINDOW; w++)                                              \
				W(P##MPI_Isend(bwbuf[w], len, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &bwreq[w])); \
			W(P##MPI_Waitall(BW_WINDOW, bwreq, MPI_STATUSES_IGNORE));                        \
			W(P##MPI_Recv(&ack, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));       \
		} else {                                                                                 \
			for (int w = 0; w < BW_WINDOW; w++)                                              \
				W(P##MPI_Irecv(bwbuf[w], len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &bwreq[w])); \
			W(P##MPI_Waitall(BW_WINDOW, bwreq, MPI_STATUSES_IGNORE));                        \
			W(P##MPI_Send(&ack, 1, MPI_INT, 0, 2, MPI_COMM_WORLD));                          \
		}                                                                                        \
	}

/* rep_bandwidth runs n windows of len-byte messages. */
static double rep_bandwidth(int rank, int mode, int len, long n)
{
	double t0 = bench_now();
	if (mode == NONE)
		BANDWIDTH(P, N)
	else if (mode == TIMER)
		BANDWIDTH(P, T)
	else if (mode == CLOCK2)
		BANDWIDTH(P, C)
	else
		BANDWIDTH(, N)
	return slowest(t0, n);
}

static double rep_allreduce(int mode, long n)
{
	double in = 1.0, out = 0;
	double t0 = bench_now();
	if (mode == NONE)
		ALLREDUCE(P, N)
	else if (mode == TIMER)
		ALLREDUCE(P, T)
	else if (mode == CLOCK2)
		ALLREDUCE(P, C)
	else
		ALLREDUCE(, N)
	return slowest(t0, n);
}

/* Local loops: each rank on its own (no message), as in cheap.c but with
 * the modes alternating in this process. The allreduce is on
 * MPI_COMM_SELF: a communicator other than MPI_COMM_WORLD (the hot path
 * looks it up). */
enum { L_COMM_RANK = -2, L_IPROBE = -3, L_ALLREDUCE_SELF = -4, L_TEST_DONE = -5 };
static MPI_Request local_req; /* persistent, never started: MPI_Test finds it done at once */

#define LOCAL(P, W)                                                                                     \
	switch (which) {                                                                                \
	case L_COMM_RANK:                                                                               \
		for (long i = 0; i < n; i++)                                                            \
			W(P##MPI_Comm_rank(MPI_COMM_WORLD, &r));                                        \
		break;                                                                                  \
	case L_IPROBE:                                                                                  \
		for (long i = 0; i < n; i++)                                                            \
			W(P##MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE)); \
		break;                                                                                  \
	case L_ALLREDUCE_SELF:                                                                          \
		for (long i = 0; i < n; i++)                                                            \
			W(P##MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF));          \
		break;                                                                                  \
	case L_TEST_DONE:                                                                               \
		for (long i = 0; i < n; i++)                                                            \
			W(P##MPI_Test(&local_req, &flag, MPI_STATUS_IGNORE));                          \
		break;                                                                                  \
	}

static double rep_local(int mode, int which, long n)
{
	int r, flag;
	double in = 1.0, out = 0;
	double t0 = bench_now();
	if (mode == NONE)
		LOCAL(P, N)
	else if (mode == TIMER)
		LOCAL(P, T)
	else if (mode == CLOCK2)
		LOCAL(P, C)
	else
		LOCAL(, N)
	return slowest(t0, n);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof *v, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* run measures one benchmark: len >= 0 is a ping-pong of len bytes (a
 * bandwidth window of len bytes when bw), -1 the allreduce, < -1 a local
 * loop (L_*). */
static const char *only; /* the benchmarks to run (NULL: all) */

static int selected(const char *name)
{
	if (only == NULL)
		return 1;
	size_t k = strlen(name);
	for (const char *p = only; (p = strstr(p, name)) != NULL; p += k)
		if ((p == only || p[-1] == ',') && (p[k] == 0 || p[k] == ','))
			return 1;
	return 0;
}

static void run(int rank, const char *name, int len, int bw, long n, int cycles)
{
	if (!selected(name))
		return;
	double t[NMODES][cycles], d[NMODES][cycles];
	for (int c = -1; c < cycles; c++) {
		double tc[NMODES];
		for (int k = 0; k < NMODES; k++) {
			int m = (k + (c < 0 ? 0 : c)) % NMODES;
			set_mode(m);
			tc[m] = bw ? rep_bandwidth(rank, m, len, n) : len >= 0 ? rep_pingpong(rank, m, len, n) : len == -1 ? rep_allreduce(m, n) : rep_local(m, len, n);
			unset_mode(m);
		}
		if (c < 0)
			continue;
		for (int m = 0; m < NMODES; m++) {
			t[m][c] = tc[m];
			d[m][c] = tc[m] - tc[NONE];
		}
	}
	for (int m = 0; m < NMODES && rank == 0; m++)
		printf("AB %s %s %.3f %.3f %d\n", name, mode_name[m], median(t[m], cycles), median(d[m], cycles), bw ? BW_WINDOW + 2 : len >= 0 ? 2 : 1);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "ab: needs exactly 2 ranks\n");
		PMPI_Abort(MPI_COMM_WORLD, 2);
	}
	long n = bench_iters(argc, argv, 10000);
	int cycles = argc > 2 && atoi(argv[2]) > 0 ? atoi(argv[2]) : 21;
	only = argc > 3 ? argv[3] : NULL;
	bench_timers(rank, 300000);
	const int sizes[] = {0, 8, 64, 1024};
	const int nsizes = sizeof sizes / sizeof sizes[0];
	for (int k = 0; k < nsizes; k++) {
		char name[32];
		snprintf(name, sizeof name, "pingpong_%d", sizes[k]);
		run(rank, name, sizes[k], 0, n, cycles);
	}
	run(rank, "allreduce_8", -1, 0, n, cycles);
	/* Bandwidth: n / 8 windows of 66 calls per rank. */
	const long nw = n / 8 > 0 ? n / 8 : 1;
	run(rank, "bw_8", 8, 1, nw, cycles);
	/* The local loops: 10 x the iterations (their calls are short). */
	char pbuf[1];
	set_mode(PROFILE); /* mpiscope knows the request as persistent (as in cheap.c) */
	MPI_Send_init(pbuf, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &local_req);
	run(rank, "local_comm_rank", L_COMM_RANK, 0, 10 * n, cycles);
	run(rank, "local_iprobe", L_IPROBE, 0, 10 * n, cycles);
	run(rank, "local_allreduce_self", L_ALLREDUCE_SELF, 0, 10 * n, cycles);
	run(rank, "local_test_done", L_TEST_DONE, 0, 10 * n, cycles);
	set_mode(PROFILE);
	MPI_Request_free(&local_req);
	/* Recorded: profile and trace, in every cycle and the warm-up. */
	long long rec = 2LL * (cycles + 1) * n * size;
	long long wins = 2LL * (cycles + 1) * nw; /* bandwidth windows recorded, per rank */
	if (rank == 0 && only == NULL) { /* a subset records fewer */
		printf("EXPECT MPI_Send %lld\nEXPECT MPI_Recv %lld\nEXPECT MPI_Allreduce %lld\n", rec * nsizes + wins, rec * nsizes + wins, rec + 10 * rec);
		printf("EXPECT MPI_Isend %lld\nEXPECT MPI_Irecv %lld\nEXPECT MPI_Waitall %lld\n", wins * BW_WINDOW, wins * BW_WINDOW, 2 * wins);
		if (clock2_count.calls == 0 || clock2_count.ns == 0)
			fprintf(stderr, "ab: mode clock2 counted nothing\n");
		printf("EXPECT MPI_Comm_rank %lld\nEXPECT MPI_Iprobe %lld\nEXPECT MPI_Test %lld\n", 10 * rec, 10 * rec, 10 * rec);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
