/* mpi4.c: MPI-4 calls on MPICH (2 ranks): 100 MPI_Send_c of 16 bytes
 * 0 -> 1 (MPI_Recv_c on 1), one MPI_Allreduce_init of 8 ints started 5 times
 * (MPI_Start + MPI_Wait), 10 MPI_Isendrecv of 4 ints each way. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, i;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	double x[2] = {0, 0}, sum = 0;
	for (i = 0; i < 100; i++) {
		if (rank == 0) {
			x[0] = i;
			MPI_Send_c(x, (MPI_Count)2, MPI_DOUBLE, 1, 3, MPI_COMM_WORLD);
		} else if (rank == 1) {
			MPI_Recv_c(x, (MPI_Count)2, MPI_DOUBLE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			sum += x[0];
		}
	}
	int in[8], out[8];
	MPI_Request r;
	MPI_Allreduce_init(in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
	long total = 0;
	for (int k = 0; k < 5; k++) {
		for (i = 0; i < 8; i++)
			in[i] = rank + i + k;
		MPI_Start(&r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		total += out[7];
	}
	MPI_Request_free(&r);
	int s[4], t[4], other = 1 - rank, got = 0;
	for (int k = 0; k < 10; k++) {
		for (i = 0; i < 4; i++)
			s[i] = rank * 100 + k;
		MPI_Isendrecv(s, 4, MPI_INT, other, k, t, 4, MPI_INT, other, k, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
		got += t[3];
	}
	printf("rank %d: sum %.0f total %ld got %d\n", rank, sum, total, got);
	MPI_Finalize();
	return 0;
}
