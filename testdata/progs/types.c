/*
 * types.c: message sizes of derived, pair and predefined datatypes, known
 * by construction. Run with 2 ranks: rank 0 sends, from one call site per
 * datatype (marked @<name> at its line), 3 messages to rank 1:
 *   t3       1 x contiguous(3, MPI_INT)                12 bytes
 *   t5       1 x contiguous(5, MPI_INT), made after t3 was freed (MPI
 *            may give it t3's handle)                  20 bytes
 *   pair     1 x MPI_DOUBLE_INT                        12 bytes
 *   vec      1 x vector(2 blocks of 2 MPI_INT, stride 3) 16 bytes
 *   short    4 x MPI_SHORT                              8 bytes
 *   ld       3 x MPI_LONG_DOUBLE                       3 x sizeof(long double)
 * Rank 1 receives each with the same datatype and count.
 */
#include <mpi.h>
#include <stdio.h>

static int rank;

static void xfer(void *buf, int n, MPI_Datatype t)
{
	if (rank == 1)
		MPI_Recv(buf, n, t, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
	int ib[8] = {0};
	struct { double d; int i; } di = {1, 2};
	short sb[4] = {0};
	long double lb[3] = {0};
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Datatype t3, t5, vec;
	MPI_Type_contiguous(3, MPI_INT, &t3);
	MPI_Type_commit(&t3);
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(ib, 1, t3, 1, 1, MPI_COMM_WORLD); /* @t3 */
		xfer(ib, 1, t3);
	}
	MPI_Type_free(&t3);
	MPI_Type_contiguous(5, MPI_INT, &t5);
	MPI_Type_commit(&t5);
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(ib, 1, t5, 1, 1, MPI_COMM_WORLD); /* @t5 */
		xfer(ib, 1, t5);
	}
	MPI_Type_free(&t5);
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(&di, 1, MPI_DOUBLE_INT, 1, 1, MPI_COMM_WORLD); /* @pair */
		xfer(&di, 1, MPI_DOUBLE_INT);
	}
	MPI_Type_vector(2, 2, 3, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(ib, 1, vec, 1, 1, MPI_COMM_WORLD); /* @vec */
		xfer(ib, 1, vec);
	}
	MPI_Type_free(&vec);
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(sb, 4, MPI_SHORT, 1, 1, MPI_COMM_WORLD); /* @short */
		xfer(sb, 4, MPI_SHORT);
	}
	for (int i = 0; i < 3; i++) {
		if (rank == 0)
			MPI_Send(lb, 3, MPI_LONG_DOUBLE, 1, 1, MPI_COMM_WORLD); /* @ld */
		xfer(lb, 3, MPI_LONG_DOUBLE);
	}
	if (rank == 0)
		printf("types done, long double %d bytes\n", (int)sizeof(long double));
	MPI_Finalize();
	return 0;
}
