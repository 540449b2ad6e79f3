/*
 * app.c: the program of the stacking tests (internal/mpitest/stack_test.go).
 * Per rank, with 2 ranks: 100 MPI_Send and 100 MPI_Recv (rank 0 sends 8
 * bytes each, rank 1 answers 16), in region "solve" 10 MPI_Barrier, then 5
 * MPI_Allreduce of one int, 1 MPI_Comm_rank, 1 MPI_Comm_size, 2
 * MPI_Pcontrol (4 "solve" and -4). With STACK_APP_FAIL_TAG=T set, rank 0
 * also sends one message with tag T under MPI_ERRORS_RETURN and prints
 * the error class it gets (a tool below may refuse it).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double d = 1.5;
	int four[4] = {1, 2, 3, 4};
	long sum = 0;
	for (int i = 0; i < 100; i++) {
		if (rank == 0) {
			MPI_Send(&d, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
			MPI_Recv(four, 4, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			sum += four[3];
		} else if (rank == 1) {
			MPI_Recv(&d, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(four, 4, MPI_INT, 0, 8, MPI_COMM_WORLD);
			sum += (long)d;
		}
	}
	MPI_Pcontrol(4, "solve");
	for (int i = 0; i < 10; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(-4);
	int one = 1, total = 0;
	for (int i = 0; i < 5; i++)
		MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	const char *ft = getenv("STACK_APP_FAIL_TAG");
	if (ft != NULL && *ft && rank == 0) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		int rc = MPI_Send(&d, 1, MPI_DOUBLE, 1, atoi(ft), MPI_COMM_WORLD), cls = -1;
		MPI_Error_class(rc, &cls);
		printf("rank 0: send with tag %s returned error class %d (MPI_ERR_TAG is %d)\n", ft, cls, MPI_ERR_TAG);
	}
	printf("rank %d of %d: sum %ld total %d\n", rank, size, sum, total);
	MPI_Finalize();
	return 0;
}
