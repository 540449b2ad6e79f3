/* threads.c: call paths per thread under MPI_THREAD_MULTIPLE
 * (internal/mpitest/callpath_test.go). Per rank, two threads each call
 * exch() on a communicator of their own: thread A 15 times from
 * worker_a(), thread B 25 times from worker_b(); exch() calls
 * MPI_Allreduce. Built with -O1 -fno-omit-frame-pointer. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

volatile int th_sink;
static MPI_Comm comm_a, comm_b;

__attribute__((noinline)) void exch(MPI_Comm c)
{
	int v = 1;
	MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, c);
	th_sink++;
}

__attribute__((noinline)) void *worker_a(void *arg)
{
	(void)arg;
	for (int i = 0; i < 15; i++)
		exch(comm_a);
	th_sink++;
	return NULL;
}

__attribute__((noinline)) void *worker_b(void *arg)
{
	(void)arg;
	for (int i = 0; i < 25; i++)
		exch(comm_b);
	th_sink++;
	return NULL;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		printf("no MPI_THREAD_MULTIPLE\n");
		MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &comm_a);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm_b);
	pthread_t a, b;
	pthread_create(&a, NULL, worker_a, NULL);
	pthread_create(&b, NULL, worker_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	MPI_Comm_free(&comm_a);
	MPI_Comm_free(&comm_b);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("threads done\n");
	MPI_Finalize();
	return 0;
}
