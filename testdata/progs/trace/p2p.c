/* p2p.c: point-to-point patterns with known peers, tags and sizes, for
 * 3 ranks (trace tests, internal/trace/e2e_test.go). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, buf[16] = {0};
	double d[4] = {0};
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Pcontrol(4, "phase");
	/* blocking: 0 -> 1, 10 ints, tag 5 */
	if (rank == 0)
		MPI_Send(buf, 10, MPI_INT, 1, 5, MPI_COMM_WORLD);
	else if (rank == 1)
		MPI_Recv(buf, 10, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* nonblocking: 1 -> 0, 3 doubles, tag 6, received from any source */
	if (rank == 1) {
		MPI_Request r;
		MPI_Isend(d, 3, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	} else if (rank == 0) {
		MPI_Request r;
		MPI_Irecv(d, 4, MPI_DOUBLE, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	}
	/* Sendrecv ring: to rank+1, from rank-1, 1 int, tag 7 */
	MPI_Sendrecv(buf, 1, MPI_INT, (rank + 1) % size, 7, buf + 1, 1, MPI_INT, (rank + size - 1) % size, 7,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* any source, blocking: 2 -> 0, 2 ints, tag 8 */
	if (rank == 2)
		MPI_Send(buf, 2, MPI_INT, 0, 8, MPI_COMM_WORLD);
	else if (rank == 0)
		MPI_Recv(buf, 16, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	/* Waitall: 1 and 2 -> 0, 4 ints, tag 9 */
	if (rank == 0) {
		MPI_Request r[2];
		MPI_Irecv(buf, 4, MPI_INT, 1, 9, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(buf + 4, 4, MPI_INT, 2, 9, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	} else {
		MPI_Request r;
		MPI_Isend(buf, 4, MPI_INT, 0, 9, MPI_COMM_WORLD, &r);
		MPI_Waitall(1, &r, MPI_STATUSES_IGNORE);
	}
	/* receives completed out of posting order: 1 -> 0, tag 12, 1 int then
	 * 2 ints; rank 0 waits for its second receive first (MPI matches in
	 * posting order: the first receive gets the first message) */
	if (rank == 1) {
		MPI_Send(buf, 1, MPI_INT, 0, 12, MPI_COMM_WORLD);
		MPI_Send(buf, 2, MPI_INT, 0, 12, MPI_COMM_WORLD);
	} else if (rank == 0) {
		MPI_Request r[2];
		MPI_Irecv(buf, 1, MPI_INT, 1, 12, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(buf + 4, 2, MPI_INT, 1, 12, MPI_COMM_WORLD, &r[1]);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	}
	/* a split communicator: ranks 0 and 2 (even), message 2 -> 0 on it, tag 3 */
	MPI_Comm even;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &even);
	if (rank == 2)
		MPI_Send(buf, 5, MPI_INT, 0, 3, even);
	else if (rank == 0)
		MPI_Recv(buf, 5, MPI_INT, 1, 3, even, MPI_STATUS_IGNORE);
	MPI_Comm_free(&even);
	/* persistent ring: to rank+1, from rank-1, 1 double, tag 10, 4 rounds
	 * (MPI_Startall, then MPI_Start receive first), then MPI_Test on the
	 * inactive send request, which completes nothing */
	{
		MPI_Request p[2];
		double ps = rank, pr = 0;
		int flag;
		MPI_Send_init(&ps, 1, MPI_DOUBLE, (rank + 1) % size, 10, MPI_COMM_WORLD, &p[0]);
		MPI_Recv_init(&pr, 1, MPI_DOUBLE, (rank + size - 1) % size, 10, MPI_COMM_WORLD, &p[1]);
		for (int k = 0; k < 4; k++) {
			if (k % 2 == 0) {
				MPI_Startall(2, p);
			} else {
				MPI_Start(&p[1]);
				MPI_Start(&p[0]);
			}
			MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
		}
		MPI_Test(&p[0], &flag, MPI_STATUS_IGNORE);
		MPI_Request_free(&p[0]);
		MPI_Request_free(&p[1]);
	}
#if MPI_VERSION >= 4
	/* MPI_Isendrecv (MPI 4): 0 <-> 1, 2 ints each way, tag 11 */
	if (rank < 2) {
		MPI_Request r;
		MPI_Isendrecv(buf, 2, MPI_INT, 1 - rank, 11, buf + 8, 2, MPI_INT, 1 - rank, 11, MPI_COMM_WORLD, &r);
		MPI_Wait(&r, MPI_STATUS_IGNORE);
	}
#endif
	/* a rooted collective: root 1 */
	MPI_Bcast(d, 2, MPI_DOUBLE, 1, MPI_COMM_WORLD);
	/* one call site, two shapes: 6 MPI_Bcast from root 0 of 1, 2, 1, 2,
	 * 1, 2 doubles (the repeats take the wrapper's short-record path) */
	for (int k = 0; k < 6; k++)
		MPI_Bcast(d, 1 + k % 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Allreduce(d, d + 1, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	/* nonblocking collectives: MPI_Ibcast of 4 ints from root 2 and
	 * MPI_Ibarrier, completed by one MPI_Waitall */
	{
		MPI_Request r[2];
		MPI_Ibcast(buf, 4, MPI_INT, 2, MPI_COMM_WORLD, &r[0]);
		MPI_Ibarrier(MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	}
#if MPI_VERSION >= 4
	/* a persistent collective (MPI 4): MPI_Allreduce_init of 1 double,
	 * started and waited for twice */
	{
		MPI_Request r;
		MPI_Allreduce_init(d, d + 2, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
		for (int k = 0; k < 2; k++) {
			MPI_Start(&r);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
		MPI_Request_free(&r);
	}
#endif
	/* a failed call (a rank that does not exist): traced as a plain
	 * call, not as a message */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (MPI_Send(buf, 1, MPI_INT, size + 5, 13, MPI_COMM_WORLD) == MPI_SUCCESS)
		fprintf(stderr, "p2p: MPI_Send to rank %d succeeded\n", size + 5);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Pcontrol(-4);
	MPI_Pcontrol(5, "done");
	MPI_Finalize();
	return 0;
}
