// class.cpp: a C++ class method that calls MPI, reached from two callers
// (internal/mpitest/callpath_test.go). Per rank: Halo::exchange calls
// MPI_Allreduce, 12 times from Solver::step and 4 times from main.
#include <mpi.h>
#include <cstdio>

static volatile int cx_sink;

class Halo {
public:
	__attribute__((noinline)) void exchange(double *x)
	{
		MPI_Allreduce(MPI_IN_PLACE, x, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		cx_sink++;
	}
};

class Solver {
public:
	__attribute__((noinline)) void step(Halo &h, double *x)
	{
		for (int i = 0; i < 12; i++)
			h.exchange(x);
		cx_sink++;
	}
};

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	double x[2] = {1, 2};
	Halo h;
	Solver s;
	s.step(h, x);
	for (int i = 0; i < 4; i++)
		h.exchange(x);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		std::printf("class done\n");
	MPI_Finalize();
	return 0;
}
