/*
 * blockedio.c DIR MS: ranks blocked in collective MPI-IO, for snapshots
 * taken during a hang (internal/mpitest/busy_test.go, TestBusyFileIO).
 *
 * All ranks open DIR/blockedio.dat together, make one MPI_Barrier and
 * write DIR/pid.<rank>. Then rank 0 sleeps MS milliseconds outside MPI
 * before it joins the collective write MPI_File_write_at_all (one int per
 * rank, at offset rank * 4), in which the other ranks wait for it. The
 * file is closed; rank 0 prints what it reads back. The marker @write
 * gives the test the callsite's line.
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
		fprintf(stderr, "usage: blockedio DIR MS\n");
		return 2;
	}
	long ms = atol(argv[2]);
	int rank, size;
	char path[4096];
	MPI_File fh;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	snprintf(path, sizeof path, "%s/blockedio.dat", argv[1]);
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
		fprintf(stderr, "blockedio: cannot open %s\n", path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	pidfile(argv[1], rank);
	if (rank == 0) {
		struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	int x = 40 + rank;
	MPI_File_write_at_all(fh, (MPI_Offset)rank * (MPI_Offset)sizeof x, &x, 1, MPI_INT, MPI_STATUS_IGNORE); /* @write */
	MPI_File_close(&fh);
	if (rank == 0) {
		int sum = 0, y;
		FILE *f = fopen(path, "rb");
		for (int i = 0; f && i < size && fread(&y, sizeof y, 1, f) == 1; i++)
			sum += y;
		if (f)
			fclose(f);
		printf("blockedio: %d ranks, sum %d\n", size, sum);
	}
	MPI_Finalize();
	return 0;
}
