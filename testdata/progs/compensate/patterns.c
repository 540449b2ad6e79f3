/* patterns.c: four communication patterns for the compensation test
 * (TestCompensate), on 4 ranks:
 *   patterns pipeline|master|ring|allreduce ITERS WORK_US
 *   - pipeline: rank 0 -> 1 -> 2 -> 3, each rank works then passes an
 *     8-byte token on;
 *   - master: rank 0 hands ITERS tasks to the others (MPI_ANY_SOURCE),
 *     each worker works on its task and sends back the result;
 *   - ring: each rank works, then MPI_Sendrecv to the right from the left;
 *   - allreduce: each rank works, then MPI_Allreduce of one double.
 * Work is a sleep (clock_nanosleep), so that ranks sharing cores do not
 * slow each other's work down. Each rank prints one checksum line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void work(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc != 4 || size < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: patterns pipeline|master|ring|allreduce ITERS WORK_US (at least 2 ranks)\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	const char *pat = argv[1];
	const int iters = atoi(argv[2]);
	const long us = atol(argv[3]);
	long sum = 0;
	if (strcmp(pat, "pipeline") == 0) {
		for (int i = 0; i < iters; i++) {
			long tok = i;
			if (rank > 0)
				MPI_Recv(&tok, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			work(us);
			if (rank < size - 1)
				MPI_Send(&tok, 1, MPI_LONG, rank + 1, 0, MPI_COMM_WORLD);
			sum += tok;
		}
	} else if (strcmp(pat, "master") == 0) {
		if (rank == 0) {
			int sent = 0, done = 0;
			long task;
			MPI_Status st;
			for (int w = 1; w < size; w++) {
				task = sent < iters ? sent++ : -1;
				MPI_Send(&task, 1, MPI_LONG, w, 0, MPI_COMM_WORLD);
			}
			while (done < iters) {
				long res;
				MPI_Recv(&res, 1, MPI_LONG, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
				sum += res;
				done++;
				task = sent < iters ? sent++ : -1;
				MPI_Send(&task, 1, MPI_LONG, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
			}
		} else {
			for (;;) {
				long task;
				MPI_Recv(&task, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				if (task < 0)
					break;
				work(us);
				task *= 2;
				MPI_Send(&task, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
			}
		}
	} else if (strcmp(pat, "ring") == 0) {
		long out = rank, in = -1;
		for (int i = 0; i < iters; i++) {
			work(us);
			MPI_Sendrecv(&out, 1, MPI_LONG, (rank + 1) % size, 0, &in, 1, MPI_LONG, (rank + size - 1) % size, 0,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			sum += in;
		}
	} else if (strcmp(pat, "allreduce") == 0) {
		for (int i = 0; i < iters; i++) {
			double x = rank + i, y = 0;
			work(us);
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			sum += (long)y;
		}
	} else {
		if (rank == 0)
			fprintf(stderr, "patterns: unknown pattern %s\n", pat);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	printf("rank %d %s sum %ld\n", rank, pat, sum);
	MPI_Finalize();
	return 0;
}
