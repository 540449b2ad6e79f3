/*
 * bench.h: timing helpers shared by mpiscope's benchmark programs.
 *
 * Every program times its loops itself with clock_gettime around the whole
 * loop (many iterations, best of a few repetitions) and prints one line per
 * result on rank 0:
 *
 *   BENCH <name> <ns per iteration> <MPI calls per iteration>
 *
 * and, measured in the same run, the cost of one timestamp read:
 *
 *   TIMER tsc <ns per __rdtsc()>
 *   TIMER clock <ns per clock_gettime(CLOCK_MONOTONIC)>
 */
#ifndef BENCH_H
#define BENCH_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#ifndef BENCH_REPS
#define BENCH_REPS 5 /* repetitions; the best is reported */
#endif

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile uint64_t bench_sink;

/* bench_timers measures one timestamp read of each kind: a loop of n reads,
 * best of BENCH_REPS. */
static void bench_timers(int rank, long n)
{
	double best_tsc = 1e30, best_clk = 1e30;
	for (int r = 0; r < BENCH_REPS; r++) {
		uint64_t s = 0;
		double t0 = bench_now();
#if defined(__x86_64__) || defined(__i386__)
		for (long i = 0; i < n; i++)
			s += __rdtsc();
#endif
		double t1 = bench_now();
		struct timespec ts;
		for (long i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			s += (uint64_t)ts.tv_nsec;
		}
		double t2 = bench_now();
		bench_sink += s;
		if ((t1 - t0) / n < best_tsc)
			best_tsc = (t1 - t0) / n;
		if ((t2 - t1) / n < best_clk)
			best_clk = (t2 - t1) / n;
	}
	if (rank == 0) {
		printf("TIMER tsc %.3f\nTIMER clock %.3f\n", best_tsc, best_clk);
		fflush(stdout);
	}
}

static __attribute__((unused)) void bench_report(int rank, const char *name, double ns, int calls)
{
	if (rank == 0) {
		printf("BENCH %s %.3f %d\n", name, ns, calls);
		fflush(stdout);
	}
}

/* BENCH_TIMED(call) is call between two timestamp reads whose difference
 * is summed: the least a timing profiler adds to a call, measured in place
 * (a read after a call waits for more than a read in a loop of reads). */
static volatile uint64_t bench_timer_sum;
#if defined(__x86_64__) || defined(__i386__)
#define BENCH_TSC() __rdtsc()
#else
#define BENCH_TSC() ((uint64_t)bench_now())
#endif
#define BENCH_TIMED(call)                                 \
	do {                                              \
		uint64_t bench_t0_ = BENCH_TSC();         \
		call;                                     \
		bench_timer_sum += BENCH_TSC() - bench_t0_; \
	} while (0)

/* bench_iters reads the iteration count from argv[1] (default def). */
static long bench_iters(int argc, char **argv, long def)
{
	if (argc > 1) {
		long n = atol(argv[1]);
		if (n > 0)
			return n;
	}
	return def;
}

#endif
