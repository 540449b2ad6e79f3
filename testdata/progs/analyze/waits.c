/* waits.c: programs with known wait states, for `mpiscope analyze`
 * (internal/analyze's end-to-end tests). Run with MPISCOPE_TRACE=0: each
 * case aligns the ranks with an untraced barrier, then traces
 * (MPI_Pcontrol(6)) only the calls whose waiting is known by construction,
 * ITER times. "Computing" is sleeping until a deadline after the aligning
 * barrier (clock_nanosleep, absolute), so that the wait does not depend on
 * how long the barrier took to return.
 *
 *   late-sender S   2 ranks: rank S sleeps 20 ms, then sends to the other,
 *                   which is already in MPI_Recv (late sender on the
 *                   receiver: 20 ms per iteration)
 *   barrier         N ranks: rank k sleeps k x 10 ms, then MPI_Barrier
 *                   (wait at barrier on rank k: (N-1-k) x 10 ms)
 *   bcast           N ranks: the root, rank 1, sleeps 20 ms, then
 *                   MPI_Bcast (late broadcast on every other rank: 20 ms)
 *   ssend           2 ranks: rank 0 MPI_Ssend at once, rank 1 sleeps 20 ms
 *                   then MPI_Recv (late receiver on rank 0: 20 ms)
 *   nonblocking     2 ranks: rank 0 MPI_Irecv, MPI_Isend, MPI_Waitall at
 *                   once; rank 1 sleeps 20 ms, then the same (late sender
 *                   in rank 0's MPI_Waitall: 20 ms)
 *   pipeline        4 ranks, traced throughout: MPI_Barrier, then rank 0
 *                   computes 20 ms and sends to 1; rank k receives from
 *                   k-1, computes (k+1) x 20 ms and sends to k+1; a final
 *                   MPI_Barrier. The critical path runs 0 -> 1 -> 2 -> 3:
 *                   (k+1) x 20 ms per iteration on rank k.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITER 5

static struct timespec deadline;

/* start notes the time computing starts from. */
static void start(void) { clock_gettime(CLOCK_MONOTONIC, &deadline); }

/* compute sleeps until ms after start(). */
static void compute(int ms)
{
	struct timespec t = deadline;
	t.tv_nsec += (long)ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
		;
}

/* align lines the ranks up with tracing off, then turns it on. */
static void align(void)
{
	MPI_Pcontrol(-6);
	MPI_Barrier(MPI_COMM_WORLD);
	start();
	MPI_Pcontrol(6);
}

int main(int argc, char **argv)
{
	int rank, size;
	double x[4] = {0};
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *c = argc > 1 ? argv[1] : "";
	if (strcmp(c, "late-sender") == 0) {
		int s = argc > 2 ? atoi(argv[2]) : 0;
		for (int i = 0; i < ITER; i++) {
			align();
			if (rank == s) {
				compute(20);
				MPI_Send(x, 1, MPI_DOUBLE, 1 - s, i, MPI_COMM_WORLD);
			} else {
				MPI_Recv(x, 1, MPI_DOUBLE, s, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		}
	} else if (strcmp(c, "barrier") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(10 * rank);
			MPI_Barrier(MPI_COMM_WORLD);
		}
	} else if (strcmp(c, "bcast") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			if (rank == 1)
				compute(20);
			MPI_Bcast(x, 4, MPI_DOUBLE, 1, MPI_COMM_WORLD);
		}
	} else if (strcmp(c, "ssend") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			if (rank == 0) {
				MPI_Ssend(x, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
			} else {
				compute(20);
				MPI_Recv(x, 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		}
	} else if (strcmp(c, "nonblocking") == 0) {
		for (int i = 0; i < ITER; i++) {
			MPI_Request rq[2];
			align();
			if (rank == 1)
				compute(20);
			MPI_Irecv(x, 1, MPI_DOUBLE, 1 - rank, i, MPI_COMM_WORLD, &rq[0]);
			MPI_Isend(x + 1, 1, MPI_DOUBLE, 1 - rank, i, MPI_COMM_WORLD, &rq[1]);
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
	} else if (strcmp(c, "pipeline") == 0) {
		MPI_Pcontrol(6);
		for (int i = 0; i < ITER; i++) {
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank > 0)
				MPI_Recv(x, 1, MPI_DOUBLE, rank - 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			start();
			compute(20 * (rank + 1));
			if (rank < size - 1)
				MPI_Send(x, 1, MPI_DOUBLE, rank + 1, i, MPI_COMM_WORLD);
		}
		MPI_Barrier(MPI_COMM_WORLD);
	} else {
		if (rank == 0)
			fprintf(stderr, "waits: unknown case %s\n", c);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Pcontrol(-6);
	MPI_Finalize();
	return 0;
}
