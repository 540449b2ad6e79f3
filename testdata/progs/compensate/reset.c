/* reset.c: MPI_Pcontrol(3) clears the wait states and the compensation
 * totals (TestCompensateReset), on 2 ranks. Rank 0 sends BEFORE messages
 * to rank 1, each 2 ms after rank 1 posted its receive (a late sender),
 * then both reset, then AFTER more the same way, from the same callsite. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define BEFORE 20
#define AFTER 3

static void pause_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void late(int rank, int n)
{
	for (int i = 0; i < n; i++) {
		int x = i;
		if (rank == 0) {
			pause_ms(2);
			MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the late sender */
		}
	}
}

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	late(rank, BEFORE);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(3);
	late(rank, AFTER);
	if (rank == 0)
		printf("done\n");
	MPI_Finalize();
	return 0;
}
