/*
 * offtime.c: recording turned off for a known time (internal/mpitest/
 * busy_test.go, TestOffTime). Rank r makes one MPI_Barrier, turns
 * recording off with MPI_Pcontrol(0), sleeps 300 x (r + 1) ms, turns it
 * back on with MPI_Pcontrol(1), makes one more MPI_Barrier (where the
 * ranks that slept less wait for the last) and sleeps 100 ms.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(0);
	sleep_ms(300 * (rank + 1));
	MPI_Pcontrol(1);
	MPI_Barrier(MPI_COMM_WORLD);
	sleep_ms(100);
	MPI_Finalize();
	return 0;
}
