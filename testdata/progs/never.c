/*
 * never.c: whether the program's MPI_ functions are the MPI library's own
 * (2 ranks). It prints, per rank, how many of its MPI_ functions have the
 * address of their PMPI_ form: with no tool all of them (both families
 * define MPI_X as an alias of PMPI_X), with mpiscope's wrappers on the
 * path none. It makes calls known by construction and asks for recording
 * with MPI_Pcontrol(1), which MPISCOPE_ENABLE=never ignores.
 */
#include <mpi.h>
#include <stdio.h>

typedef int (*fn)(void);
static const struct {
	const char *name;
	fn mpi, pmpi;
} funcs[] = {
    {"MPI_Send", (fn)MPI_Send, (fn)PMPI_Send},
    {"MPI_Recv", (fn)MPI_Recv, (fn)PMPI_Recv},
    {"MPI_Allreduce", (fn)MPI_Allreduce, (fn)PMPI_Allreduce},
    {"MPI_Barrier", (fn)MPI_Barrier, (fn)PMPI_Barrier},
    {"MPI_Comm_rank", (fn)MPI_Comm_rank, (fn)PMPI_Comm_rank},
    {"MPI_Wtime", (fn)MPI_Wtime, (fn)PMPI_Wtime},
};

int main(int argc, char **argv)
{
	int rank, i, n = sizeof funcs / sizeof funcs[0], same = 0;
	double x = 1, sum = 0;
	MPI_Init(&argc, &argv);
	MPI_Pcontrol(1);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 0; i < 100; i++) {
		double s;
		MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += s;
	}
	if (rank == 0)
		MPI_Send(&x, 1, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
	else
		MPI_Recv(&x, 1, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < n; i++)
		same += funcs[i].mpi == funcs[i].pmpi;
	printf("rank %d: sum %.0f, %d of %d MPI_ functions are PMPI_\n", rank, sum, same, n);
	MPI_Finalize();
	return 0;
}
