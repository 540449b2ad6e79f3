/* order.c: a ping-pong whose order is known (every message is received
 * after it was sent), for the clock-correction test; 2 ranks. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, x = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < 20; i++) {
		if (rank == 0) {
			MPI_Send(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD);
			MPI_Recv(&x, 1, MPI_INT, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			usleep(200);
			MPI_Send(&x, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
		}
	}
	MPI_Finalize();
	return 0;
}
