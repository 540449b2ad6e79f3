/* calltree.c: MPI calls whose call paths are known by construction
 * (internal/mpitest/callpath_test.go). Built with -O1
 * -fno-omit-frame-pointer; every function below is noinline and does
 * something after each call, so that no call becomes a jump (a tail call
 * leaves no frame).
 *
 * Per rank:
 *   MPI_Allreduce in halo(), called 10 times from solve(), 20 from
 *     precond() and 5 from output(), each called once from main();
 *   MPI_Barrier in rec(0), reached from main() through rec(5) .. rec(0)
 *     (six frames of rec), 3 times;
 *   MPI_Bcast in cp_lib_bcast() of the program's own shared library
 *     (cplib.c), called 7 times from driver(), called once from main();
 *   MPI_Scan in inl_scan(), inlined into sweep() (always_inline), 3 times,
 *     sweep() called once from main(): the path shows inl_scan as the
 *     source says (debug information), though it has no frame of its own.
 */
#include <mpi.h>
#include <stdio.h>

void cp_lib_bcast(int *v); /* cplib.c */

volatile int cp_sink;

__attribute__((noinline)) void halo(double *x)
{
	MPI_Allreduce(MPI_IN_PLACE, x, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	cp_sink++;
}

__attribute__((noinline)) void solve(double *x)
{
	for (int i = 0; i < 10; i++)
		halo(x);
	cp_sink++;
}

__attribute__((noinline)) void precond(double *x)
{
	for (int i = 0; i < 20; i++)
		halo(x);
	cp_sink++;
}

__attribute__((noinline)) void output(double *x)
{
	for (int i = 0; i < 5; i++)
		halo(x);
	cp_sink++;
}

__attribute__((noinline)) void rec(int d)
{
	if (d == 0)
		MPI_Barrier(MPI_COMM_WORLD);
	else
		rec(d - 1);
	cp_sink++;
}

static inline __attribute__((always_inline)) void inl_scan(int *a, int *b)
{
	MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
}

__attribute__((noinline)) void sweep(void)
{
	int a = 1, b = 0;
	for (int i = 0; i < 3; i++)
		inl_scan(&a, &b);
	cp_sink += b;
}

__attribute__((noinline)) void driver(void)
{
	int v = 1;
	for (int i = 0; i < 7; i++)
		cp_lib_bcast(&v);
	cp_sink++;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	double x[4] = {1, 2, 3, 4};
	solve(x);
	precond(x);
	output(x);
	for (int i = 0; i < 3; i++)
		rec(5);
	driver();
	sweep();
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("calltree done\n");
	MPI_Finalize();
	return 0;
}
