/*
 * sample.c: the program `make demo` profiles. A 1-D halo exchange with a
 * reduction per step and a slow rank, so the report has something to show:
 * point-to-point, collectives, imbalance, a region and a user event.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define STEPS 200
#define N 4096

static double u[N + 2];

static void compute(int rank, int step)
{
	/* Rank 1 works twice as long: load imbalance shows as wait time. */
	volatile double s = 0;
	long iters = (rank == 1 ? 2 : 1) * 200000L;
	for (long i = 0; i < iters; i++)
		s += u[(i + step) % N] * 1e-9;
	u[1] += s;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	double norm = 0;

	MPI_Pcontrol(4, "solver");
	for (int step = 0; step < STEPS; step++) {
		MPI_Request req[4];
		MPI_Irecv(&u[0], 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(&u[N + 1], 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(&u[1], 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(&u[N], 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &req[3]);
		compute(rank, step);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		double local = u[1];
		MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	}
	MPI_Pcontrol(-4, "solver");
	MPI_Pcontrol(5, "solver done");

	double all[64];
	MPI_Gather(&norm, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("sample: %d ranks, %d steps, norm %.3g\n", size, STEPS, norm);
	MPI_Finalize();
	return 0;
}
