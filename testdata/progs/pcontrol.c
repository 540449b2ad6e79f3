/*
 * pcontrol.c: MPI_Pcontrol levels with counts known by construction (2 ranks).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, i;
	double d = 1, s;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
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
	MPI_Pcontrol(-4, "inner");
	MPI_Pcontrol(-4, "outer");
	for (i = 0; i < 7; i++)
		MPI_Pcontrol(5, "tick");
	MPI_Pcontrol(2); /* snapshot-1: 10 barriers, 50 allreduces per rank */
	for (i = 0; i < 5; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(42);
	MPI_Pcontrol(42);
	if (rank == 0)
		printf("pcontrol done\n");
	MPI_Finalize();
	return 0;
}
