/* waits.c: wait states known by construction (TestPiggybackWaits), on 4
 * ranks of one host. Each step starts at a common instant t0 of the
 * host's CLOCK_MONOTONIC (rank 0 broadcasts it, 50 ms ahead), so that
 * how unevenly the ranks leave a collective does not matter:
 *   - rank 0 sends to rank 1 at t0 + 20 ms, rank 1 posts its receive at
 *     t0: a late sender of 20 ms;
 *   - rank 0 sends at t0, rank 1 receives at t0 + 20 ms: none;
 *   - rank k enters a barrier at t0 + k x 10 ms: it waits (3 - k) x 10 ms
 *     for rank 3.
 * On a node with more ranks than cores a rank may wake late: each prints,
 * at the end through rank 0, when it called (CLOCK_MONOTONIC ns), the truth the test
 * compares with. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double t0;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* sync sets t0 50 ms after rank 0's now. */
static void sync(void)
{
	t0 = now() + 0.05;
	MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

/* at waits until t0 + ms. */
static void at(int ms)
{
	double t = t0 + ms * 1e-3;
	struct timespec ts;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

/* mark notes when the rank calls; printed after the calls, so that no
 * write (a system call the scheduler may switch at) sits between the
 * time taken and the MPI call measured. */
static const char *marked[2];
static double markedAt[2];
static int nmarked;

static void mark(const char *what) /* one of report's names */
{
	marked[nmarked] = what;
	markedAt[nmarked++] = now();
}

/* report has rank 0 print every rank's marks: one writer, so that the
 * lines cannot mix. */
static void report(int rank)
{
	double mine[2] = {0, 0}, all[4 * 2];
	int size, what[4 * 2], mw[2] = {-1, -1};
	const char *names[] = {"late-send", "late-recv", "barrier"};
	for (int i = 0; i < nmarked; i++) {
		mine[i] = markedAt[i];
		for (int n = 0; n < 3; n++)
			if (strcmp(marked[i], names[n]) == 0)
				mw[i] = n;
	}
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 4)
		return;
	MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Gather(mw, 2, MPI_INT, what, 2, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0)
		for (int r = 0; r < size; r++)
			for (int i = 0; i < 2; i++)
				if (what[2 * r + i] >= 0)
					printf("r%d %s %.0f\n", r, names[what[2 * r + i]], all[2 * r + i] * 1e9);
}

int main(int argc, char **argv)
{
	int rank, x = 0;
	MPI_Init(&argc, &argv);
	setvbuf(stdout, NULL, _IOLBF, 0); /* one write per line: the ranks' lines do not mix */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	sync();
	if (rank == 0) {
		at(20);
		mark("late-send");
		MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
	} else if (rank == 1) {
		at(0);
		mark("late-recv");
		MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @late */
	}
	sync();
	if (rank == 0) {
		at(0);
		MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
	} else if (rank == 1) {
		at(20);
		MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* @early */
	}
	sync();
	at(10 * rank);
	mark("barrier");
	MPI_Barrier(MPI_COMM_WORLD); /* @stagger */
	report(rank);
	MPI_Finalize();
	return 0;
}
