// cxx.cpp: a C++ program calling the C API (2 ranks): 100 messages of 16 bytes.
#include <mpi.h>
#include <cstdio>
#include <vector>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	std::vector<double> v(2, 1.5);
	for (int i = 0; i < 100; i++) {
		if (rank == 0)
			MPI_Send(v.data(), 2, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
		else if (rank == 1)
			MPI_Recv(v.data(), 2, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (rank == 1)
		std::printf("cxx got %g\n", v[1]);
	MPI_Finalize();
	return 0;
}
