/* bind_capi.cpp: bind.c in C++ (the C API). The reference program of the bindings matrix (internal/mpitest
 * bindings_test.go). The Fortran (../fortran/bind_*.f90) and C++ programs
 * make the same MPI calls with the same counts, types and peers, so that
 * all profiles are identical. Run on 2 ranks. Per rank pair:
 *   1000 MPI_Send of 8 bytes 0 -> 1, 1000 MPI_Recv with MPI_STATUS_IGNORE,
 *   MPI_Barrier inside an MPI_Pcontrol(0)/(1) window (not recorded) and
 *   once outside, MPI_Allreduce of 4 ints with MPI_IN_PLACE,
 *   2 MPI_Isend + 2 MPI_Irecv of one double completed by MPI_Waitall over
 *   the array of 4 requests (with statuses), MPI_Bcast of 10 ints.
 */
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
	int rank, size, i;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Pcontrol(0);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(1);
	double x = 0, sum = 0;
	for (i = 0; i < 1000; i++) {
		if (rank == 0) {
			x = i;
			MPI_Send(&x, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD); /* SEND-LINE */
		} else if (rank == 1) {
			MPI_Recv(&x, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			sum += x;
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	int v[4];
	for (i = 0; i < 4; i++)
		v[i] = rank + i;
	MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	MPI_Request req[4];
	MPI_Status st[4];
	double out[2], in[2];
	int other = 1 - rank;
	for (i = 0; i < 2; i++) {
		out[i] = 10 * rank + i;
		MPI_Irecv(&in[i], 1, MPI_DOUBLE, other, 20 + i, MPI_COMM_WORLD, &req[i]);
		MPI_Isend(&out[i], 1, MPI_DOUBLE, other, 20 + i, MPI_COMM_WORLD, &req[2 + i]);
	}
	MPI_Waitall(4, req, st);
	int b[10];
	for (i = 0; i < 10; i++)
		b[i] = rank == 0 ? i * i : -1;
	MPI_Bcast(b, 10, MPI_INT, 0, MPI_COMM_WORLD);
	std::printf("rank %d: sum %.0f v %d %d %d %d in %.0f %.0f src %d tag %d b9 %d\n", rank, sum, v[0], v[1], v[2], v[3],
	       in[0], in[1], st[0].MPI_SOURCE, st[1].MPI_TAG, b[9]);
	MPI_Finalize();
	return 0;
}
