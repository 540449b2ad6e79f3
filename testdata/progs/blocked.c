/*
 * blocked.c DIR MS: ranks blocked in MPI, for snapshots and signals taken
 * during a hang (internal/mpitest/busy_test.go).
 *
 * Every rank first makes one MPI_Barrier on MPI_COMM_WORLD and writes
 * DIR/pid.<rank>. Then rank 0 sleeps MS milliseconds outside MPI and sends
 * one int (tag 7) to rank 1; rank 1 waits for it in MPI_Recv; ranks 2 and
 * up wait in MPI_Barrier on a duplicate of MPI_COMM_WORLD, which every
 * rank joins at the end. Markers (@name) give the test the callsites'
 * lines.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void pidfile(const char *dir, int rank)
{
	/* Written under a temporary name and renamed: the test never reads a
	 * pid file that is still empty. */
	char path[4096], tmp[4096];
	snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
	snprintf(tmp, sizeof tmp, "%s/.pid.%d", dir, rank);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%ld\n", (long)getpid());
		fclose(f);
		rename(tmp, path);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: blocked DIR MS\n");
		return 2;
	}
	long ms = atol(argv[2]);
	int rank, size, x = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Barrier(MPI_COMM_WORLD);
	pidfile(argv[1], rank);
	if (rank == 0) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0)
			;
		x = 42;
		MPI_Send(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @recv */
	}
	MPI_Barrier(dup); /* @barrier */
	if (rank == 0)
		printf("blocked: %d ranks, got %d\n", size, x);
	MPI_Comm_free(&dup);
	MPI_Finalize();
	return 0;
}
