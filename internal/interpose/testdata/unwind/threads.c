/* threads.c: concurrent walks in 4 threads with different call chains and
 * different stacks (one on a stack of the program's own making), all
 * starting at once so that first-sight decoding races: every walk must give
 * exactly the thread's frames, equal to backtrace() taken in the same
 * frame. unwind_test.go runs it under ThreadSanitizer too. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind.h"

#define NTHREADS 4
#define WALKS 20000

static pthread_barrier_t start;
static int failures[NTHREADS], depth[NTHREADS];
static long walks[NTHREADS];
static __thread volatile int sink;

__attribute__((noinline)) static int leaf(int t)
{
	uintptr_t ref[64], f[64];
	void *bt[65];
	int n = MS_UNWIND_CALLER(ref, 64);
	int m = backtrace(bt, 65);
	/* bt[0] is in leaf, or, under ThreadSanitizer, in its interceptor of
	 * backtrace() with bt[1] in leaf. */
	int k = 1;
	while (k < 3 && k < m && (uintptr_t)bt[k] != ref[0])
		k++;
	if (m - k != n)
		failures[t]++;
	for (int i = 0; i < n && i + k < m; i++)
		if ((uintptr_t)bt[i + k] != ref[i])
			failures[t]++;
	pthread_barrier_wait(&start);
	for (int w = 0; w < WALKS; w++) {
		int k = MS_UNWIND_CALLER(f, 64);
		if (k != n || memcmp(f, ref, (size_t)n * sizeof f[0]) != 0)
			failures[t]++;
		walks[t]++;
	}
	depth[t] = n;
	return n;
}

/* Chains of 1 to 4 distinct functions above leaf, by thread. */
#define KEEP(x) (sink += (x), sink)
__attribute__((noinline)) static int c1(int t) { return KEEP(leaf(t)); }
__attribute__((noinline)) static int c2(int t) { return KEEP(t == 1 ? leaf(t) : c1(t)); }
__attribute__((noinline)) static int c3(int t) { return KEEP(t == 2 ? leaf(t) : c2(t)); }
__attribute__((noinline)) static int c4(int t) { return KEEP(t == 3 ? leaf(t) : c3(t)); }

static void *run(void *arg)
{
	int t = (int)(intptr_t)arg;
	c4(t);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];
	pthread_barrier_init(&start, NULL, NTHREADS);
	void *own = NULL;
	for (int t = 0; t < NTHREADS; t++) {
		pthread_attr_t a;
		pthread_attr_init(&a);
		if (t == 3) { /* a stack of the program's own */
			size_t sz = 1 << 20;
			if (posix_memalign(&own, 4096, sz) != 0)
				return 2;
			pthread_attr_setstack(&a, own, sz);
		} else {
			pthread_attr_setstacksize(&a, (size_t)(256 + 128 * t) << 10);
		}
		if (pthread_create(&th[t], &a, run, (void *)(intptr_t)t) != 0)
			return 2;
		pthread_attr_destroy(&a);
	}
	int bad = 0;
	long total = 0;
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(th[t], NULL);
		bad += failures[t];
		total += walks[t];
		printf("thread %d: %d frames\n", t, depth[t]);
	}
	free(own);
	/* leaf's caller c1..c4 chain, run, start_thread, clone: the chains
	 * differ by one function from thread to thread. */
	for (int t = 1; t < NTHREADS; t++)
		if (depth[t] != depth[0] - t)
			bad++;
	if (bad) {
		printf("FAIL threads=%d walks=%ld failures=%d\n", NTHREADS, total, bad);
		return 1;
	}
	printf("PASS threads=%d walks=%ld\n", NTHREADS, total);
	return 0;
}
