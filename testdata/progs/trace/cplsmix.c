/*
 * cplsmix.c: MPI_Waitall calls whose requests the completions record's
 * fast loop (ms_tcpls_fast, trace.c) starts to write and then leaves to
 * the general loop (2026-11-28). Each rank, with the other rank, N times:
 *  - MPI_Isend (tag 1) and MPI_Irecv (tag 1) of one double, then a
 *    persistent send and receive (MPI_Send_init, MPI_Recv_init, tag 2)
 *    started with MPI_Startall, all four completed by one MPI_Waitall:
 *    the fast loop writes two entries, meets the persistent send (its
 *    role is the persistent table's) and returns;
 *  - MPI_Irecv (tag 3) of one double, matched, and MPI_Irecv (tag 99),
 *    never sent, cancelled, then MPI_Isend (tag 3) and one MPI_Waitall of
 *    the three: the fast loop meets the cancelled receive.
 *  - two MPI_Irecv (tag 4), then two MPI_Isend (tag 4) completed by
 *    MPI_Testall, called until it says done, with MPI_REQUEST_NULL
 *    between them and MPI_STATUSES_IGNORE: sends only, so the call gets
 *    no statuses and the record's entries are made before the call
 *    (ms_trace_saveall, 2026-11-28); then one MPI_Waitall of the two
 *    receives.
 * Per rank: 5N sends and 5N receives of 8 bytes completed (N each
 * persistent), N receives cancelled, 3N MPI_Waitall and N MPI_Testall
 * that completed its requests: 4N completions records of 11N entries.
 */
#include <mpi.h>

#define N 5

int main(int argc, char **argv)
{
	int rank;
	double out = 1, in[3] = {0, 0, 0};
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	MPI_Request p[2], r[4];
	MPI_Send_init(&out, 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &p[0]);
	MPI_Recv_init(&in[2], 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &p[1]);
	for (int i = 0; i < N; i++) {
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(&in[0], 1, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &r[1]);
		MPI_Startall(2, p);
		r[2] = p[0];
		r[3] = p[1];
		MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
		MPI_Irecv(&in[0], 1, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv(&in[1], 1, MPI_DOUBLE, peer, 99, MPI_COMM_WORLD, &r[1]);
		MPI_Cancel(&r[1]);
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r[2]);
		MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
		MPI_Request q[2], s[3];
		MPI_Irecv(&in[0], 1, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(&in[1], 1, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &q[1]);
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &s[0]);
		s[1] = MPI_REQUEST_NULL;
		MPI_Isend(&out, 1, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &s[2]);
		for (int done = 0; !done;)
			MPI_Testall(3, s, &done, MPI_STATUSES_IGNORE);
		MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
	}
	MPI_Request_free(&p[0]);
	MPI_Request_free(&p[1]);
	MPI_Finalize();
	return 0;
}
