/*
 * p2pmore.c: the point-to-point forms beyond send and receive, 2 ranks,
 * each with the other, 8 bytes a message:
 *  - 2 MPI_Sendrecv_replace (tag 1);
 *  - MPI_Bsend_init (tag 2), MPI_Ssend_init (tag 3), MPI_Rsend_init
 *    (tag 4), each started once against an MPI_Irecv posted before a
 *    barrier, all waited with MPI_Waitall;
 *  - 2 MPI_Send (tag 5) received with MPI_Mprobe + MPI_Mrecv;
 *  - 2 MPI_Send (tag 6) received with MPI_Improbe + MPI_Imrecv + MPI_Wait;
 *  - an MPI_Irecv (tag 99, never sent) cancelled, then MPI_Wait;
 *  - with MPI 4: MPI_Isendrecv (tag 7) and MPI_Isendrecv_replace (tag 8),
 *    each waited.
 * Per rank: 6 blocking sends, 4 blocking receives, 3 persistent sends, 5
 * nonblocking receives matched (+2 sends and 2 receives with MPI 4), 1
 * cancelled receive.
 */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank;
	double x = 1, in[4];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int peer = 1 - rank;
	for (int i = 0; i < 2; i++)
		MPI_Sendrecv_replace(&x, 1, MPI_DOUBLE, peer, 1, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	int bsize = 1024;
	void *bbuf = malloc(bsize);
	MPI_Buffer_attach(bbuf, bsize);
	MPI_Request r[6];
	double out[3] = {1, 2, 3};
	MPI_Bsend_init(&out[0], 1, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD, &r[0]);
	MPI_Ssend_init(&out[1], 1, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &r[1]);
	MPI_Rsend_init(&out[2], 1, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, &r[2]);
	for (int i = 0; i < 3; i++)
		MPI_Irecv(&in[i], 1, MPI_DOUBLE, peer, 2 + i, MPI_COMM_WORLD, &r[3 + i]);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Startall(3, r);
	MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
	for (int i = 0; i < 3; i++)
		MPI_Request_free(&r[i]);
	MPI_Buffer_detach(&bbuf, &bsize);
	free(bbuf);
	for (int i = 0; i < 2; i++) {
		MPI_Message m;
		MPI_Send(&x, 1, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD);
		MPI_Mprobe(peer, 5, MPI_COMM_WORLD, &m, MPI_STATUS_IGNORE);
		MPI_Mrecv(&in[0], 1, MPI_DOUBLE, &m, MPI_STATUS_IGNORE);
	}
	for (int i = 0; i < 2; i++) {
		MPI_Message m;
		MPI_Request q;
		int flag = 0;
		MPI_Send(&x, 1, MPI_DOUBLE, peer, 6, MPI_COMM_WORLD);
		while (!flag)
			MPI_Improbe(peer, 6, MPI_COMM_WORLD, &flag, &m, MPI_STATUS_IGNORE);
		MPI_Imrecv(&in[0], 1, MPI_DOUBLE, &m, &q);
		MPI_Wait(&q, MPI_STATUS_IGNORE);
	}
	MPI_Request c;
	MPI_Irecv(&in[0], 1, MPI_DOUBLE, peer, 99, MPI_COMM_WORLD, &c);
	MPI_Cancel(&c);
	MPI_Wait(&c, MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4
	MPI_Request q;
	MPI_Isendrecv(&x, 1, MPI_DOUBLE, peer, 7, &in[0], 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
	MPI_Isendrecv_replace(&x, 1, MPI_DOUBLE, peer, 8, peer, 8, MPI_COMM_WORLD, &q);
	MPI_Wait(&q, MPI_STATUS_IGNORE);
#endif
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
