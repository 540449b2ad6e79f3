/* main.c: times ms_unwind (chain.c) at depths 1, 4, 8 and 16 once the
 * rules are cached, and two rdtsc reads, glibc's backtrace() at depth 8
 * for comparison. Prints one line per figure:
 *   rdtsc2 <ns>            two timestamp reads
 *   depth <d> <ns> <frames>  one walk of at most d frames (the frames it gave)
 *   backtrace8 <ns>        backtrace() of 8 frames
 *   first16 <ns> <n>       the first walk of 16 frames, which decodes n rules
 * Each figure is the best of the rounds' repetitions (argument 1: rounds,
 * default 300) of 10,000 calls (200 for backtrace(), every tenth round). */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#include "unwind.h"

int f1(int max, long n);
int walk_once(uintptr_t *out, int max);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double best = 0;
static int frames;

/* bench_walks: the chain's leaf: n walks of at most max frames. */
__attribute__((noinline)) int bench_walks(int max, long n)
{
	uintptr_t out[32];
	if (max == 0) { /* backtrace() of 8 frames */
		void *bt[8];
		double t0 = now();
		for (long i = 0; i < n; i++)
			frames = backtrace(bt, 8);
		best = (now() - t0) / (double)n;
		return frames;
	}
	if (max < 0) { /* one walk of -max frames, all seen for the first time */
		double t0 = now();
		frames = walk_once(out, -max);
		best = now() - t0;
		return frames;
	}
	walk_once(out, max); /* first sight: decoded and cached */
	double t0 = now();
	for (long i = 0; i < n; i++)
		frames = walk_once(out, max);
	best = (now() - t0) / (double)n;
	return frames;
}

static double rdtsc2(long n)
{
	uint64_t s = 0;
	double t0 = now();
	for (long i = 0; i < n; i++) {
		s += __rdtsc();
		s += __rdtsc();
	}
	double t = (now() - t0) / (double)n;
	if (s == 1)
		puts("");
	return t;
}

int main(int argc, char **argv)
{
	ms_unwind_init();
	/* Short repetitions, the kinds interleaved, the best of each kept:
	 * on a shared machine a repetition that lost its CPU is slower, never
	 * faster. */
	ms_unwind_stats st;
	f1(-16, 1);
	ms_unwind_stats_get(&st);
	printf("first16 %.0f %llu\n", best, (unsigned long long)st.decoded);
	const long n = 10000;
	int rounds = argc > 1 ? atoi(argv[1]) : 300;
	int depths[] = {1, 4, 8, 16};
	int got[4];
	double b[6];
	for (int k = 0; k < 6; k++)
		b[k] = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t = rdtsc2(n);
		b[0] = t < b[0] ? t : b[0];
		for (int d = 0; d < 4; d++) {
			f1(depths[d], n);
			b[1 + d] = best < b[1 + d] ? best : b[1 + d];
			got[d] = frames;
		}
		if (r % 10 == 0) {
			f1(0, 200);
			b[5] = best < b[5] ? best : b[5];
		}
	}
	printf("rdtsc2 %.2f\n", b[0]);
	for (int d = 0; d < 4; d++)
		printf("depth %d %.2f %d\n", depths[d], b[1 + d], got[d]);
	printf("backtrace8 %.2f\n", b[5]);
	return 0;
}
