/*
 * depth.c: what a call path costs per MPI call through the real wrappers
 * (MPISCOPE_DEPTH, docs/callpaths.md). runbench's depth section
 * (bench/cmd/runbench/depth.go) builds it with and without frame pointers
 * and runs it at depths 1, 4, 8 and 16, one mpirun per depth and build, the
 * runs interleaved round by round.
 *
 * main calls a chain of CHAIN functions (c0 .. c{CHAIN-1}, never inlined,
 * never tail calls), whose last calls the loops: every MPI call of the
 * loops has CHAIN + 1 frames of the program above it (the loop's function,
 * the chain, main), more than the deepest depth measured.
 *
 * In each run the modes alternate repetition by repetition, as in
 * bench/progs/ab.c, so that they share the machine's state:
 *
 *   none     the loop calls PMPI_ directly: no wrapper runs at all
 *   timer    PMPI_ calls, each between two rdtsc reads whose difference is
 *            summed (the least a timing profiler can add, in place)
 *   profile  MPI_ under MPI_Pcontrol(1): the wrapper, at the run's depth
 *
 * Benchmarks: local_comm_rank (MPI_Comm_rank), local_iprobe (MPI_Iprobe
 * finding nothing), each rank on its own and timed in its thread's CPU
 * time, and pingpong_0 (a 0-byte ping-pong between ranks 0 and 1, in
 * wall-clock time). A cycle runs each mode once, in an
 * order rotated from one cycle to the next; the first cycle warms up (and
 * enters the paths: the rules of their frames are decoded then) and is not
 * counted. Rank 0 prints, per benchmark and mode, the median over cycles:
 *
 *   DEPTH <benchmark> <mode> <ns per iteration> <(mode - none) ns per iteration> <calls per iteration>
 *
 * and, for the harness to check from the profile that the wrappers did the
 * work:
 *
 *   EXPECT <MPI function> <calls recorded over the job>
 *
 * With "cg N" as arguments it runs N iterations of MPI_Comm_rank in profile
 * mode in cg_loop and nothing else (one rank, for callgrind
 * --toggle-collect=cg_loop).
 *
 * Usage: depth [iterations per repetition [cycles]] | depth cg N
 */
#include <string.h>
#include "../progs/bench.h"

#define CHAIN 20

enum { NONE, TIMER, PROFILE, NMODES };
static const char *mode_name[NMODES] = {"none", "timer", "profile"};

static int rank, size, cycles = 21;
static long iters = 10000;
static long cg_n; /* > 0: callgrind's run */

static void set_mode(int m)
{
	MPI_Pcontrol(m == PROFILE ? 1 : 0);
	PMPI_Barrier(MPI_COMM_WORLD);
}

#define T(call) BENCH_TIMED(call)
#define N(call) call

enum { L_COMM_RANK, L_IPROBE, L_PINGPONG };

/* cpu_now: the calling thread's CPU time, ns. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* rep runs one repetition of benchmark which in mode m: n iterations. Its
 * MPI calls are made here, CHAIN + 1 frames below main. */
static __attribute__((noinline)) double rep(int which, int m, long n)
{
	int r, flag;
	char buf[1];
#define LOOPS(P, W)                                                                                                     \
	switch (which) {                                                                                                \
	case L_COMM_RANK:                                                                                               \
		for (long i = 0; i < n; i++)                                                                            \
			W(P##MPI_Comm_rank(MPI_COMM_WORLD, &r));                                                        \
		break;                                                                                                  \
	case L_IPROBE:                                                                                                  \
		for (long i = 0; i < n; i++)                                                                            \
			W(P##MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));              \
		break;                                                                                                  \
	case L_PINGPONG:                                                                                                \
		for (long i = 0; i < n; i++) {                                                                          \
			if (rank == 0) {                                                                                \
				W(P##MPI_Send(buf, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD));                                 \
				W(P##MPI_Recv(buf, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));              \
			} else {                                                                                        \
				W(P##MPI_Recv(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));              \
				W(P##MPI_Send(buf, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD));                                 \
			}                                                                                               \
		}                                                                                                       \
		break;                                                                                                  \
	}
	/* The local loops are timed in the thread's CPU time: on a shared
	 * machine a rank is descheduled for whole time slices, and a
	 * repetition longer than the slice it got would count the wait (a
	 * cliff in wall-clock time at some cost per call, not a cost). The
	 * ping-pong waits for its peer: wall-clock time. */
	const int cpu = which != L_PINGPONG;
	double t0 = cpu ? cpu_now() : bench_now();
	if (m == NONE)
		LOOPS(P, N)
	else if (m == TIMER)
		LOOPS(P, T)
	else
		LOOPS(, N)
	double t = ((cpu ? cpu_now() : bench_now()) - t0) / n, tmax;
	PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return tmax;
}

/* cg_loop: callgrind's loop (its instructions are the ones counted). */
static __attribute__((noinline)) void cg_loop(long n)
{
	int r;
	for (long i = 0; i < n; i++)
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
	__asm__ volatile("" ::: "memory");
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

/* run measures one benchmark. */
static void run(const char *name, int which, long n, int calls)
{
	double t[NMODES][cycles], d[NMODES][cycles];
	for (int c = -1; c < cycles; c++) {
		double tc[NMODES];
		for (int k = 0; k < NMODES; k++) {
			int m = (k + (c < 0 ? 0 : c)) % NMODES;
			set_mode(m);
			tc[m] = rep(which, m, n);
		}
		if (c < 0)
			continue;
		for (int m = 0; m < NMODES; m++) {
			t[m][c] = tc[m];
			d[m][c] = tc[m] - tc[NONE];
		}
	}
	for (int m = 0; m < NMODES && rank == 0; m++)
		printf("DEPTH %s %s %.3f %.3f %d\n", name, mode_name[m], median(t[m], cycles), median(d[m], cycles), calls);
	fflush(stdout);
}

/* leaf: the end of the chain. */
static __attribute__((noinline)) int leaf(void)
{
	if (cg_n > 0) {
		set_mode(PROFILE);
		cg_loop(1); /* the path entered and its rules decoded outside the count */
		cg_loop(cg_n);
		return 1;
	}
	run("local_comm_rank", L_COMM_RANK, 10 * iters, 1);
	run("local_iprobe", L_IPROBE, 10 * iters, 1);
	run("pingpong_0", L_PINGPONG, iters, 2);
	return 1;
}

/* The chain: c0 calls c1 ... c19 calls leaf. Each adds to its callee's
 * result, so that no call is a tail call (which would leave no frame). */
static volatile int chain_sink;
#define LINK(name, next)                                           \
	static __attribute__((noinline)) int name(void)            \
	{                                                          \
		int r = next();                                    \
		chain_sink += r;                                   \
		return r + 1;                                      \
	}
LINK(c19, leaf)
LINK(c18, c19)
LINK(c17, c18)
LINK(c16, c17)
LINK(c15, c16)
LINK(c14, c15)
LINK(c13, c14)
LINK(c12, c13)
LINK(c11, c12)
LINK(c10, c11)
LINK(c9, c10)
LINK(c8, c9)
LINK(c7, c8)
LINK(c6, c7)
LINK(c5, c6)
LINK(c4, c5)
LINK(c3, c4)
LINK(c2, c3)
LINK(c1, c2)
LINK(c0, c1)

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 2 && strcmp(argv[1], "cg") == 0) {
		cg_n = atol(argv[2]);
		c0();
		MPI_Finalize();
		return 0;
	}
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "depth: needs exactly 2 ranks\n");
		PMPI_Abort(MPI_COMM_WORLD, 2);
	}
	iters = bench_iters(argc, argv, 10000);
	if (argc > 2 && atoi(argv[2]) > 0)
		cycles = atoi(argv[2]);
	bench_timers(rank, 300000);
	c0();
	/* Recorded: profile mode, in every cycle and the warm-up, per rank. */
	long long rec = (long long)(cycles + 1) * iters * size;
	if (rank == 0) {
		printf("EXPECT MPI_Comm_rank %lld\nEXPECT MPI_Iprobe %lld\n", 10 * rec, 10 * rec);
		printf("EXPECT MPI_Send %lld\nEXPECT MPI_Recv %lld\n", rec, rec);
		fflush(stdout);
	}
	MPI_Finalize();
	return 0;
}
