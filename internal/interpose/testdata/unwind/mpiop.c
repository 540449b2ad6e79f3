/* mpiop.c: walks from inside the MPI library: a user-defined reduction
 * operation, called by the library from its own frames, checks ms_unwind
 * against backtrace() through the library's frames (its own call-frame
 * information) to main. One process, no mpirun. */
#include <mpi.h>

#include "probe.h"

static int calls;

static void sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	if (!calls++)
		probe("a reduction operation called by the MPI library", 0);
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Op op;
	MPI_Op_create(sum, 1, &op);
	int in[4] = {1, 2, 3, 4}, out[4];
	/* On one process Open MPI 4.1 and MPICH 4.0 copy in MPI_Allreduce
	 * without calling the operation; MPI_Reduce_local calls it (Open
	 * MPI: from mca_coll_base_reduce_local). */
	MPI_Allreduce(in, out, 4, MPI_INT, op, MPI_COMM_WORLD);
	MPI_Reduce_local(in, out, 4, MPI_INT, op);
	MPI_Op_free(&op);
	MPI_Finalize();
	return probe_summary();
}
