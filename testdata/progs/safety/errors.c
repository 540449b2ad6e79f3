/*
 * errors.c: erroneous calls under MPI_ERRORS_RETURN (transparency test,
 * internal/mpitest/safety_test.go). Rank 0 makes calls that must fail and
 * prints, for each, the returned error class; the output must be the same
 * with and without mpiscope. Then every rank makes one good MPI_Allreduce
 * and rank 0 prints its result.
 */
#include <mpi.h>
#include <stdio.h>

static void show(const char *what, int rc)
{
	int cls = -1;
	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	printf("%-28s rc %s class %d\n", what, rc == MPI_SUCCESS ? "ok" : "error", cls);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, x = 1, y = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	if (rank == 0) {
		show("send to rank=size", MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD));
		show("send to rank=-5", MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD));
		show("send tag=-3", MPI_Send(&x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD));
		show("send count=-1", MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
		show("send datatype null", MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD));
		show("recv from rank=size", MPI_Recv(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
		show("isend count=-1", MPI_Isend(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, &(MPI_Request){MPI_REQUEST_NULL}));
		show("bcast on self root=1", MPI_Bcast(&x, 1, MPI_INT, 1, MPI_COMM_SELF));
		show("reduce on self op null", MPI_Reduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_SELF));
		show("type_size datatype null", MPI_Type_size(MPI_DATATYPE_NULL, &y));
		show("comm_split on self", MPI_Comm_split(MPI_COMM_SELF, -7, 0, &(MPI_Comm){MPI_COMM_NULL}));
		show("send proc_null (good)", MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
	}
	int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		show("allreduce (good)", rc);
		printf("sum %d\n", y);
	}
	MPI_Finalize();
	return 0;
}
