/* reset.c: MPI_Pcontrol(3) discards what came before (2 ranks), also while
 * regions nest deeper than the 32 levels recorded. */
#include <mpi.h>

int main(int argc, char **argv)
{
	int i, x = 0;
	MPI_Init(&argc, &argv);
	for (i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < 40; i++)
		MPI_Pcontrol(4, "r");
	MPI_Pcontrol(3);
	for (i = 0; i < 25; i++)
		MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (i = 0; i < 40; i++)
		MPI_Pcontrol(-4);
	MPI_Finalize();
	return 0;
}
