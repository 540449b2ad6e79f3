/* rma.c: one-sided programs with known wait states, for `mpiscope
 * analyze` (internal/analyze's end-to-end tests of the RMA patterns). As
 * in waits.c, each iteration agrees on a start time with tracing off (rank
 * 0 broadcasts its CLOCK_MONOTONIC plus 100 ms), then traces only the
 * one-sided calls; "computing" is sleeping until a deadline after that
 * start. The window (16 doubles over MPI_COMM_WORLD) is created and freed
 * with tracing on, so that the trace knows it. Each rank notes the times
 * it enters and leaves each traced call ("t <rank> <iteration> <what>
 * <ns>", "<what>.end" when it returned; CLOCK_MONOTONIC), printed at the
 * end: the tests compare the analysis with the waits these times make.
 *
 *   fence   N ranks: rank k sleeps k x 10 ms, then MPI_Win_fence, MPI_Put
 *           to rank k+1, MPI_Win_fence (wait at fence on rank k in the
 *           first fence: (N-1-k) x 10 ms)
 *   post    2 ranks: rank 0 (origin) MPI_Win_start, MPI_Put,
 *           MPI_Win_complete at once; rank 1 (target) sleeps 20 ms, then
 *           MPI_Win_post, MPI_Win_wait (late post on rank 0: 20 ms)
 *   wait    2 ranks: rank 1 MPI_Win_post, MPI_Win_wait at once; rank 0
 *           MPI_Win_start, MPI_Put, sleeps 20 ms, MPI_Win_complete (early
 *           wait on rank 1: 20 ms, all of it late complete)
 *   lock    3 ranks, target rank 0 (in an untraced MPI_Barrier meanwhile):
 *           rank 1 locks it exclusively, puts, flushes (the lock is held
 *           then), sleeps until 30 ms, unlocks; rank 2 sleeps 10 ms, locks
 *           it exclusively, puts, unlocks (lock contention on rank 2:
 *           20 ms)
 *   lockall 3 ranks: lock, rank 1's epoch an MPI_Win_lock_all ...
 *           MPI_Win_unlock_all (a shared lock on every target, rank 0's
 *           among them) instead: rank 2's exclusive lock on rank 0
 *           conflicts with it (lock contention on rank 2: 20 ms)
 *   efence  3 ranks: MPI_Win_fence on all at once; rank 0 sleeps 20 ms
 *           from its return, then MPI_Put to rank 1, MPI_Win_fence; ranks 1 and 2
 *           MPI_Win_fence at once (wait at fence on ranks 1 and 2: 20 ms;
 *           early fence on rank 1, waiting for rank 0's put: 20 ms)
 *   many    N ranks: MANY + 1 fences, between every other two a put to
 *           the next rank (one-sided records beyond a small analysis
 *           memory bound: MPISCOPE_ANALYZE_MEM=1M)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITER 5
#define MANY 5000

static struct timespec deadline;

static void start(void) { clock_gettime(CLOCK_MONOTONIC, &deadline); }

static void compute(int ms)
{
	struct timespec t = deadline;
	t.tv_nsec += (long)ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0)
		;
}

static struct {
	int rank, i;
	const char *what;
	int end;
	long long ns;
} notes[16 * ITER + 4];
static int nnotes;

static void note(int rank, int i, const char *what, int end)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (nnotes < (int)(sizeof notes / sizeof notes[0])) {
		notes[nnotes].rank = rank;
		notes[nnotes].i = i;
		notes[nnotes].what = what;
		notes[nnotes].end = end;
		notes[nnotes++].ns = (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
	}
}

/* CALL notes the entry and the return of a traced call. */
#define CALL(what, call)                 \
	do {                             \
		note(rank, i, what, 0);  \
		call;                    \
		note(rank, i, what, 1);  \
	} while (0)

static void report(void)
{
	for (int k = 0; k < nnotes; k++)
		printf("t %d %d %s%s %lld\n", notes[k].rank, notes[k].i, notes[k].what, notes[k].end ? ".end" : "", notes[k].ns);
}

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
	double buf[16] = {0}, one = 1;
	MPI_Win win;
	MPI_Group world, other = MPI_GROUP_NULL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int peer = 1 - rank;
	MPI_Comm_group(MPI_COMM_WORLD, &world);
	if (size == 2)
		MPI_Group_incl(world, 1, &peer, &other); /* post, wait */
	MPI_Pcontrol(6);
	MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	const char *c = argc > 1 ? argv[1] : "";
	if (strcmp(c, "fence") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(10 * rank);
			CALL("fence", MPI_Win_fence(0, win));
			CALL("put", MPI_Put(&one, 1, MPI_DOUBLE, (rank + 1) % size, rank, 1, MPI_DOUBLE, win));
			CALL("fence2", MPI_Win_fence(0, win));
		}
	} else if (strcmp(c, "post") == 0 || strcmp(c, "wait") == 0) {
		int late = strcmp(c, "post") == 0;
		for (int i = 0; i < ITER; i++) {
			align();
			if (rank == 0) {
				compute(0);
				CALL("start", MPI_Win_start(other, 0, win));
				CALL("put", MPI_Put(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win));
				compute(late ? 0 : 20);
				CALL("complete", MPI_Win_complete(win));
			} else {
				compute(late ? 20 : 0);
				CALL("post", MPI_Win_post(other, 0, win));
				CALL("wait", MPI_Win_wait(win));
			}
		}
	} else if (strcmp(c, "efence") == 0) {
		for (int i = 0; i < ITER; i++) {
			align();
			compute(0);
			CALL("fence", MPI_Win_fence(0, win));
			if (rank == 0) {
				start(); /* 20 ms from the fence's return, however late */
				compute(20);
				CALL("put", MPI_Put(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win));
			}
			CALL("fence2", MPI_Win_fence(0, win));
		}
	} else if (strcmp(c, "many") == 0) {
		for (int i = 0; i < MANY; i++) {
			MPI_Win_fence(0, win);
			if (i % 2)
				MPI_Put(&one, 1, MPI_DOUBLE, (rank + 1) % size, rank, 1, MPI_DOUBLE, win);
		}
		MPI_Win_fence(0, win);
	} else if (strcmp(c, "lock") == 0 || strcmp(c, "lockall") == 0) {
		int all = strcmp(c, "lockall") == 0;
		for (int i = 0; i < ITER; i++) {
			align();
			if (rank == 1) {
				compute(0);
				if (all)
					CALL("lock", MPI_Win_lock_all(0, win));
				else
					CALL("lock", MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
				CALL("put", MPI_Put(&one, 1, MPI_DOUBLE, 0, 1, 1, MPI_DOUBLE, win));
				CALL("flush", MPI_Win_flush(0, win));
				compute(30);
				if (all)
					CALL("unlock", MPI_Win_unlock_all(win));
				else
					CALL("unlock", MPI_Win_unlock(0, win));
			} else if (rank == 2) {
				compute(10);
				CALL("lock", MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
				CALL("put", MPI_Put(&one, 1, MPI_DOUBLE, 0, 2, 1, MPI_DOUBLE, win));
				CALL("unlock", MPI_Win_unlock(0, win));
			}
			MPI_Pcontrol(-6); /* the target waits here, untraced */
			MPI_Barrier(MPI_COMM_WORLD);
		}
	} else {
		if (rank == 0)
			fprintf(stderr, "rma: unknown case %s\n", c);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Pcontrol(6);
	MPI_Win_free(&win);
	MPI_Pcontrol(-6);
	if (other != MPI_GROUP_NULL)
		MPI_Group_free(&other);
	MPI_Group_free(&world);
	report();
	MPI_Finalize();
	return 0;
}
