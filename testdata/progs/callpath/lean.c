/*
 * lean.c: the lean fast path at call-path depth > 1 (docs/callpaths.md,
 * TestCallPathsLean). Each rank talks to itself: MPI_Comm_rank, then a
 * 0-byte MPI_Isend to itself, the MPI_Recv that takes it and the
 * MPI_Wait that completes the send, all from loop(), five frames of the
 * program below main (main, c1, c2, c3, c4, loop), so every call at depth 4
 * has the path loop < c4 < c3 < c2.
 *
 * loop(1) runs first (the paths are entered then), then loop(N) and
 * loop(2 N): under callgrind with --toggle-collect=loop --dump-after=loop
 * the second and third dumps count N and 2 N iterations.
 *
 * Usage: lean N
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) void loop(long n)
{
	int r;
	char b[1] = {0}, c[1];
	MPI_Request q;
	for (long i = 0; i < n; i++) {
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
		MPI_Isend(b, 0, MPI_BYTE, r, 7, MPI_COMM_WORLD, &q);
		MPI_Recv(c, 0, MPI_BYTE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
	}
	__asm__ volatile("" ::: "memory");
}

/* The chain: each adds to its callee's result, so no call is a tail call. */
static volatile long sink;
static __attribute__((noinline)) long c4(long n)
{
	loop(1);
	loop(n);
	loop(2 * n);
	sink += n;
	return n + 1;
}
static __attribute__((noinline)) long c3(long n) { long r = c4(n); sink += r; return r + 1; }
static __attribute__((noinline)) long c2(long n) { long r = c3(n); sink += r; return r + 1; }
static __attribute__((noinline)) long c1(long n) { long r = c2(n); sink += r; return r + 1; }

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000;
	c1(n);
	int rank;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("lean done %ld\n", 1 + 3 * n);
	MPI_Finalize();
	return 0;
}
