/*
 * pcontrol.c: MPI_Pcontrol levels with counts known by construction (2 ranks).
 */
#include <mpi.h>
#include <stdio.h>

/* exchange: MPI_Irecv, MPI_Send and MPI_Wait of one double with the other
 * rank. MPI_Wait ends with its record deferred (ms_defer) to the next
 * recorded call: each exchange below is the last recorded call before a
 * Pcontrol level or MPI_Finalize, which must still count it, in its region. */
static void exchange(int rank)
{
	double x = rank, y;
	MPI_Request r;
	MPI_Irecv(&y, 1, MPI_DOUBLE, 1 - rank, 7, MPI_COMM_WORLD, &r);
	MPI_Send(&x, 1, MPI_DOUBLE, 1 - rank, 7, MPI_COMM_WORLD);
	MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int rank, i;
	double d = 1, s;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	exchange(rank);
	MPI_Pcontrol(0);
	for (i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_WORLD); /* not recorded */
	MPI_Pcontrol(1);
	MPI_Pcontrol(4, "outer");
	for (i = 0; i < 20; i++)
		MPI_Allreduce(&d, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Pcontrol(4, "inner");
	for (i = 0; i < 30; i++)
		MPI_Allreduce(&d, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	exchange(rank);
	MPI_Pcontrol(-4, "inner");
	MPI_Pcontrol(-4, "outer");
	for (i = 0; i < 7; i++)
		MPI_Pcontrol(5, "tick");
	/* Rank 0 ends with a receive, whose record is still deferred. */
	if (rank == 0) {
		MPI_Send(&d, 1, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD);
		MPI_Recv(&s, 1, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(&s, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Send(&d, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
	}
	MPI_Pcontrol(2); /* snapshot-1: 10 barriers, 50 allreduces, 2 exchanges, a send and a receive per rank */
	for (i = 0; i < 5; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(42);
	MPI_Pcontrol(42);
	exchange(rank);
	if (rank == 0)
		printf("pcontrol done\n");
	MPI_Finalize();
	return 0;
}
