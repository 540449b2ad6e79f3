/* waits.c: programs with known wait states, for `mpiscope analyze`
 * (internal/analyze's end-to-end tests). Run with MPISCOPE_TRACE=0: each
 * case agrees on a start time with tracing off (rank 0 broadcasts its
 * CLOCK_MONOTONIC plus 100 ms: every rank of the host reads the same
 * clock), then traces (MPI_Pcontrol(6)) only the calls whose waiting is
 * known by construction, ITER times. "Computing" is sleeping until a
 * deadline after that start (clock_nanosleep, absolute), and a rank that
 * does not compute sleeps until the start itself: no wait depends on when
 * a barrier returned on each rank of a loaded machine. On a loaded machine
 * a rank may still wake late: so each rank prints, before each traced
 * call, the time it enters it ("t <rank> <iteration> <what> <ns>",
 * CLOCK_MONOTONIC), and the tests compare the analysis with the waits
 * these times make (and log how far they are from the nominal ones).
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
 *   pipeline        4 ranks, a ring traced throughout: rank 0 computes
 *                   40 ms and sends to 1; rank k receives from k-1,
 *                   computes (k+1) x 40 ms and sends to k+1 (rank 3 to
 *                   rank 0, which receives it before its next iteration
 *                   and at the end). The critical path runs 0 -> 1 -> 2
 *                   -> 3 -> 0 ...: (k+1) x 40 ms per iteration on rank k.
 *   chain           4 ranks: rank 2 computes 30 ms, then sends to 3; rank
 *                   3 receives and sends to 0, 0 to 1 (each already in
 *                   MPI_Recv): ranks 3, 0 and 1 each wait about 30 ms, all
 *                   of it caused by rank 2's computation before its
 *                   MPI_Send (delay costs: 30 ms short term, the rest long
 *                   term, per iteration).
 *   inter           4 ranks, an intercommunicator between A = {0, 1} and
 *                   B = {2, 3} (made with tracing off), four collectives
 *                   on it: MPI_Barrier with B 20 ms late (wait at barrier
 *                   on A: 20 ms, each group waiting for the other);
 *                   MPI_Bcast from rank 0 (MPI_ROOT; rank 1 passes
 *                   MPI_PROC_NULL) 20 ms late (late broadcast on B: 20
 *                   ms; none on rank 1); MPI_Allreduce with A 20 ms late
 *                   (wait at N x N on B: 20 ms); MPI_Reduce to rank 2
 *                   (MPI_ROOT; rank 3 passes MPI_PROC_NULL) with A 20 ms
 *                   late (early reduce on rank 2: 20 ms).
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

/* at notes the time the calling rank enters a traced call; report prints
 * the notes at the end (printing at once could block on a full pipe
 * between the clock read and the call). */
static struct {
	int rank, i;
	const char *what;
	long long ns;
} notes[8 * ITER + 4];
static int nnotes;

static void at(int rank, int i, const char *what)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (nnotes < (int)(sizeof notes / sizeof notes[0])) {
		notes[nnotes].rank = rank;
		notes[nnotes].i = i;
		notes[nnotes].what = what;
		notes[nnotes++].ns = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
	}
}

static void report(void)
{
	for (int k = 0; k < nnotes; k++)
		printf("t %d %d %s %lld\n", notes[k].rank, notes[k].i, notes[k].what, notes[k].ns);
}

/* align agrees on a start time 100 ms ahead with tracing off, then
 * turns tracing on. */
static void align(void)
{
	long long t[2];
	MPI_Pcontrol(-6);
	start();
	t[0] = deadline.tv_sec;
	t[1] = deadline.tv_nsec + 100000000L;
	MPI_Bcast(t, 2, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
	deadline.tv_sec = t[0] + t[1] / 1000000000L;
	deadline.tv_nsec = t[1] % 1000000000L;
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
			compute(rank == s ? 20 : 0);
			at(rank, i, rank == s ? "send" : "recv");
			if (rank == s) {
				MPI_Send(x, 1, MPI_DOUBLE, 1 - s, i, MPI_COMM_WORLD);
			} else {
				MPI_Recv(x, 1, MPI_DOUBLE, s, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		}
	} else if (strcmp(c, "barrier") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(10 * rank);
			at(rank, i, "barrier");
			MPI_Barrier(MPI_COMM_WORLD);
		}
	} else if (strcmp(c, "bcast") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(rank == 1 ? 20 : 0);
			at(rank, i, "bcast");
			MPI_Bcast(x, 4, MPI_DOUBLE, 1, MPI_COMM_WORLD);
		}
	} else if (strcmp(c, "ssend") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(rank == 1 ? 20 : 0);
			at(rank, i, rank == 0 ? "ssend" : "recv");
			if (rank == 0) {
				MPI_Ssend(x, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
			} else {
				MPI_Recv(x, 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
		}
	} else if (strcmp(c, "nonblocking") == 0) {
		for (int i = 0; i < ITER; i++) {
			MPI_Request rq[2];
			align();
			compute(rank == 1 ? 20 : 0);
			MPI_Irecv(x, 1, MPI_DOUBLE, 1 - rank, i, MPI_COMM_WORLD, &rq[0]);
			at(rank, i, "isend");
			MPI_Isend(x + 1, 1, MPI_DOUBLE, 1 - rank, i, MPI_COMM_WORLD, &rq[1]);
			at(rank, i, "waitall");
			MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		}
	} else if (strcmp(c, "pipeline") == 0) {
		int prev = (rank + size - 1) % size, next = (rank + 1) % size;
		align();
		compute(0);
		at(rank, 0, "start");
		MPI_Comm_rank(MPI_COMM_WORLD, &rank); /* the start of rank 0's path */
		for (int i = 0; i < ITER; i++) {
			if (rank > 0 || i > 0)
				MPI_Recv(x, 1, MPI_DOUBLE, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			start();
			compute(40 * (rank + 1));
			at(rank, i, "send");
			MPI_Send(x, 1, MPI_DOUBLE, next, rank == size - 1 ? i + 1 : i, MPI_COMM_WORLD);
		}
		if (rank == 0) {
			MPI_Recv(x, 1, MPI_DOUBLE, prev, ITER, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			at(rank, ITER, "end"); /* the path ends with this receive */
		}
	} else if (strcmp(c, "chain") == 0) {
		/* 2 -> 3 -> 0 -> 1 */
		int prev = (rank + size - 1) % size, next = (rank + 1) % size;
		for (int i = 0; i < ITER; i++) {
			align();
			compute(rank == 2 ? 30 : 0);
			if (rank != 2) {
				at(rank, i, "recv");
				MPI_Recv(x, 1, MPI_DOUBLE, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			}
			if (rank != 1) {
				at(rank, i, "send");
				MPI_Send(x, 1, MPI_DOUBLE, next, i, MPI_COMM_WORLD);
			}
		}
	} else if (strcmp(c, "inter") == 0) {
		MPI_Comm local, ic;
		int a = rank < 2; /* group A */
		MPI_Pcontrol(-6);
		MPI_Comm_split(MPI_COMM_WORLD, a, rank, &local);
		MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, a ? 2 : 0, 7, &ic);
		for (int i = 0; i < ITER; i++) {
			align();
			compute(a ? 0 : 20);
			at(rank, i, "barrier");
			MPI_Barrier(ic);
			align();
			compute(rank == 0 ? 20 : 0);
			at(rank, i, "bcast");
			MPI_Bcast(x, 4, MPI_DOUBLE, a ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic);
			align();
			compute(a ? 20 : 0);
			at(rank, i, "allreduce");
			MPI_Allreduce(x, x + 2, 2, MPI_DOUBLE, MPI_SUM, ic);
			align();
			compute(a ? 20 : 0);
			at(rank, i, "reduce");
			MPI_Reduce(x, x + 2, 2, MPI_DOUBLE, MPI_SUM, a ? 0 : (rank == 2 ? MPI_ROOT : MPI_PROC_NULL), ic);
		}
		MPI_Pcontrol(-6);
		MPI_Comm_free(&ic);
		MPI_Comm_free(&local);
	} else {
		if (rank == 0)
			fprintf(stderr, "waits: unknown case %s\n", c);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Pcontrol(-6);
	report();
	MPI_Finalize();
	return 0;
}
