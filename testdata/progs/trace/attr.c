/*
 * attr.c: 1,000 calls of a cheap function (MPI_Comm_get_attr) in a tight
 * loop: 7 bytes per event once packed.
 */
#include <mpi.h>
int main(int argc, char **argv)
{
	int *v, flag;
	MPI_Init(&argc, &argv);
	for (int i = 0; i < 1000; i++)
		MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag);
	MPI_Finalize();
	return 0;
}
