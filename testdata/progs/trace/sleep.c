/*
 * sleep.c: two MPI_Barrier 200 ms apart on every rank, for the trace timer
 * test (internal/trace/e2e_timer_test.go): the converted trace must show
 * the time between the first barrier's end and the second's start. Each
 * rank prints "rank R slept NS", NS the CLOCK_MONOTONIC time from just
 * after the first barrier to just before the second (200 ms or more on a
 * loaded machine).
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	long long t0 = now_ns();
	struct timespec ts = {0, 200000000};
	while (nanosleep(&ts, &ts) != 0)
		;
	long long t1 = now_ns();
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	printf("rank %d slept %lld\n", rank, t1 - t0);
	return 0;
}
