/*
 * pin.c: the program whose rank-0 trace is committed beside it (pin-r0-raw.mst,
 * pin-r0.mst; README.md has the recipe, pin_test.go the expected events).
 * 2 ranks. Every event kind appears: calls, completions, a region's enter
 * and leave, a user event, a persistent send's post; short records (the
 * repeated calls of the loops, with and without a request) and full
 * ones; a communicator other than the world.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, i, x = 0, buf[10] = {0};
	volatile int n = 3; /* loops the compiler does not unroll: one callsite */
	double d = 1, s;
	MPI_Request r;
	MPI_Comm dup;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Pcontrol(4, "phase");
	if (rank == 0) {
		MPI_Send(buf, 10, MPI_INT, 1, 5, MPI_COMM_WORLD);
		MPI_Irecv(buf, 3, MPI_INT, 1, 6, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Send_init(buf, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, &r);
		MPI_Start(&r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Request_free(&r);
	} else {
		MPI_Recv(buf, 10, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Isend(buf, 3, MPI_INT, 0, 6, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		MPI_Recv(buf, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	MPI_Allreduce(&d, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Pcontrol(-4, "phase");
	MPI_Pcontrol(5, "tick");
	for (i = 0; i < n; i++) {
		if (rank == 0) {
			MPI_Irecv(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		} else
			MPI_Send(&x, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
	}
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	for (i = 0; i < n; i++)
		MPI_Barrier(dup);
	MPI_Comm_free(&dup);
	MPI_Finalize();
	return 0;
}
