/*
 * threads.c: MPI_THREAD_MULTIPLE counting (internal/mpitest/safety_test.go).
 * Usage: threads [NTHREADS [CALLS]] (default 8 threads, 1000000 calls).
 *
 * On each rank, every thread makes CALLS calls of MPI_Comm_rank and, with
 * the rank's partner (rank ^ 1; a lone last rank talks to itself), 100
 * MPI_Sendrecv of 2 ints (8 bytes sent, 8 received) with tag = thread
 * index. The main thread then makes 1 MPI_Barrier. Rank 0 prints a line.
 * When the library gives less than MPI_THREAD_MULTIPLE, rank 0 prints
 * "no MPI_THREAD_MULTIPLE" and the program exits 0 without threads.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int nthreads = 8;
static long ncalls = 1000000;
static int rank, size, partner;

static void *work(void *arg)
{
	int tag = (int)(long)arg, r = 0;
	for (long i = 0; i < ncalls; i++)
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
	int out[2] = {rank, tag}, in[2];
	for (int i = 0; i < 100; i++)
		MPI_Sendrecv(out, 2, MPI_INT, partner, tag, in, 2, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided = 0;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		ncalls = atol(argv[2]);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	partner = rank ^ 1;
	if (partner >= size)
		partner = rank;
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("no MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 0;
	}
	pthread_t t[256];
	if (nthreads > 256)
		nthreads = 256;
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, work, (void *)(long)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("threads: %d ranks x %d threads x %ld calls\n", size, nthreads, ncalls);
	MPI_Finalize();
	return 0;
}
