/* ipm.c: IPM's Pcontrol convention (MPISCOPE_PCONTROL=ipm), 2 ranks. */
#include <mpi.h>

int main(int argc, char **argv)
{
	int i;
	MPI_Init(&argc, &argv);
	MPI_Pcontrol(1, "phase1");
	for (i = 0; i < 12; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(-1);
	for (i = 0; i < 3; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
