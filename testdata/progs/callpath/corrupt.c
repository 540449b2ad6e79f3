/* corrupt.c: a frame pointer register used as a general register by
 * hand-written assembly (corrupt.S) between the program and its MPI call
 * (internal/mpitest/callpath_test.go). corrupt_barrier(v) puts v in rbp
 * and calls barrier_call(), which calls MPI_Barrier: the walk up from
 * barrier_call meets v as the next frame and must stop there, the call
 * still counted. Per rank: 5 values, 4 calls each (20 MPI_Barrier). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

void corrupt_barrier(uintptr_t rbp); /* corrupt.S */
volatile int cr_sink;

__attribute__((noinline)) void barrier_call(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
	cr_sink++;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	uintptr_t local[8] = {0};
	/* Not in the stack; misaligned; far above it; 0; a word of main's
	 * frame (inside the stack, above the walk: read, never followed out
	 * of bounds). */
	uintptr_t vals[5] = {0x1234567, 1, (uintptr_t)-16, 0, (uintptr_t)&local[4]};
	for (int v = 0; v < 5; v++)
		for (int i = 0; i < 4; i++)
			corrupt_barrier(vals[v]);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("corrupt done\n");
	MPI_Finalize();
	return 0;
}
