/* mpi4.c: MPI-4's point-to-point calls the piggyback channel carries its
 * header on (the large-count MPI_X_c forms, MPI_Isendrecv and
 * MPI_Isendrecv_replace), each matched with a call of the other form, on
 * 2 ranks (MPICH). Each rank prints what it received to PREFIX.<rank>
 * (argv[1]): the same without mpiscope and with the channel on
 * (TestPiggybackMPI4). Rank 0 sends 20 ms late to rank 1's MPI_Recv_c
 * (marker "late").
 *
 * Calls, both ranks together: MPI_Send_c 3, MPI_Send 1, MPI_Recv_c 3,
 * MPI_Recv 4, MPI_Isend_c, MPI_Issend_c, MPI_Ibsend_c, MPI_Irsend_c,
 * MPI_Ssend_c, MPI_Rsend_c, MPI_Bsend_c 1 each, MPI_Irecv_c 4,
 * MPI_Send_init_c 1, MPI_Recv_init_c 1, MPI_Start 6, MPI_Sendrecv_c 1,
 * MPI_Sendrecv 3, MPI_Sendrecv_replace_c 1, MPI_Sendrecv_replace 2,
 * MPI_Isendrecv 3, MPI_Isendrecv_c 1, MPI_Isendrecv_replace 1,
 * MPI_Isendrecv_replace_c 2, MPI_Mrecv_c 1, MPI_Imrecv_c 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank;

static void ints(const char *what, const int *b, int n)
{
	printf("r%d %s:", rank, what);
	for (int i = 0; i < n; i++)
		printf(" %d", b[i]);
	printf("\n");
}

static void st(const char *what, MPI_Status *s)
{
	MPI_Count n = -7;
	int e = -7;
	MPI_Get_count_c(s, MPI_INT, &n);
	MPI_Get_elements(s, MPI_INT, &e);
	printf("r%d %s: src=%d tag=%d count=%lld elements=%d\n", rank, what, s->MPI_SOURCE, s->MPI_TAG, (long long)n, e);
}

static void fill(int *b, int n, int base)
{
	for (int i = 0; i < n; i++)
		b[i] = base + i;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (argc > 1) {
		char path[4096];
		snprintf(path, sizeof path, "%s.%d", argv[1], rank);
		if (!freopen(path, "w", stdout)) {
			perror(path);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	const int peer = 1 - rank;
	int a[16], b[16];
	MPI_Status s;
	MPI_Request r[4];

	/* Large-count forms against the int forms, blocking. */
	if (rank == 0) {
		fill(a, 4, 10);
		MPI_Send_c(a, (MPI_Count)4, MPI_INT, 1, 1, MPI_COMM_WORLD);
		MPI_Recv_c(b, (MPI_Count)16, MPI_INT, 1, 2, MPI_COMM_WORLD, &s);
		ints("recv_c", b, 3);
		st("recv_c", &s);
	} else {
		MPI_Recv(b, 16, MPI_INT, 0, 1, MPI_COMM_WORLD, &s);
		ints("recv", b, 4);
		st("recv", &s);
		fill(a, 3, 20);
		MPI_Send(a, 3, MPI_INT, 0, 2, MPI_COMM_WORLD);
	}

	/* A late sender, to MPI_Recv_c. */
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		struct timespec ts = {0, 20000000};
		nanosleep(&ts, NULL);
		fill(a, 2, 30);
		MPI_Send_c(a, (MPI_Count)2, MPI_INT, 1, 3, MPI_COMM_WORLD);
	} else {
		MPI_Recv_c(b, (MPI_Count)2, MPI_INT, 0, 3, MPI_COMM_WORLD, &s); /* @late */
		ints("late", b, 2);
	}

	/* Nonblocking large-count sends, each mode, into MPI_Irecv_c and
	 * MPI_Recv_c; buffered from a buffer attached with the _c form. */
	int bsize = 4 * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
	void *bbuf = malloc((size_t)bsize);
	MPI_Buffer_attach_c(bbuf, (MPI_Count)bsize);
	if (rank == 0) {
		MPI_Barrier(MPI_COMM_WORLD); /* rank 1's ready receive is posted */
		fill(a, 16, 40);
		MPI_Isend_c(a, (MPI_Count)2, MPI_INT, 1, 4, MPI_COMM_WORLD, &r[0]);
		MPI_Issend_c(a + 2, (MPI_Count)2, MPI_INT, 1, 5, MPI_COMM_WORLD, &r[1]);
		MPI_Ibsend_c(a + 4, (MPI_Count)4, MPI_INT, 1, 6, MPI_COMM_WORLD, &r[2]);
		MPI_Irsend_c(a + 8, (MPI_Count)2, MPI_INT, 1, 7, MPI_COMM_WORLD, &r[3]);
		MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
		MPI_Ssend_c(a + 10, (MPI_Count)1, MPI_INT, 1, 8, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Rsend_c(a + 11, (MPI_Count)1, MPI_INT, 1, 9, MPI_COMM_WORLD);
		MPI_Bsend_c(a + 12, (MPI_Count)4, MPI_INT, 1, 10, MPI_COMM_WORLD);
	} else {
		MPI_Irecv_c(b + 8, (MPI_Count)2, MPI_INT, 0, 7, MPI_COMM_WORLD, &r[3]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Irecv_c(b, (MPI_Count)4, MPI_INT, 0, 4, MPI_COMM_WORLD, &r[0]);
		MPI_Irecv_c(b + 2, (MPI_Count)2, MPI_INT, 0, 5, MPI_COMM_WORLD, &r[1]);
		MPI_Recv(b + 4, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &s);
		st("ibsend_c", &s);
		MPI_Wait(&r[0], &s);
		st("isend_c", &s);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Wait(&r[3], &s);
		st("irsend_c", &s);
		MPI_Irecv_c(b + 11, (MPI_Count)1, MPI_INT, 0, 9, MPI_COMM_WORLD, &r[0]);
		MPI_Recv_c(b + 10, (MPI_Count)1, MPI_INT, 0, 8, MPI_COMM_WORLD, &s);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		MPI_Recv(b + 12, 4, MPI_INT, 0, 10, MPI_COMM_WORLD, &s);
		ints("modes", b, 16);
	}
	void *back = NULL;
	MPI_Count bs = -1;
	MPI_Buffer_detach_c(&back, &bs);
	printf("r%d detach_c: own buffer %d size %lld\n", rank, back == bbuf, (long long)(bs == bsize));
	free(bbuf);

	/* Persistent large-count send and receive, started 3 times. */
	int p = 0;
	if (rank == 0) {
		MPI_Send_init_c(&p, (MPI_Count)1, MPI_INT, 1, 11, MPI_COMM_WORLD, &r[0]);
	} else {
		MPI_Recv_init_c(&p, (MPI_Count)1, MPI_INT, 0, 11, MPI_COMM_WORLD, &r[0]);
	}
	long psum = 0;
	for (int k = 0; k < 3; k++) {
		p = rank == 0 ? 500 + k : -1;
		MPI_Start(&r[0]);
		MPI_Wait(&r[0], &s);
		psum += p * (k + 1);
	}
	MPI_Request_free(&r[0]);
	if (rank == 1)
		printf("r1 persistent_c: %ld\n", psum);

	/* Sendrecv and Sendrecv_replace, the _c form against the int form. */
	fill(a, 3, 60 + 10 * rank);
	memset(b, 0, sizeof b);
	if (rank == 0)
		MPI_Sendrecv_c(a, (MPI_Count)3, MPI_INT, 1, 12, b, (MPI_Count)8, MPI_INT, 1, 12, MPI_COMM_WORLD, &s);
	else
		MPI_Sendrecv(a, 3, MPI_INT, 0, 12, b, 8, MPI_INT, 0, 12, MPI_COMM_WORLD, &s);
	ints("sendrecv", b, 3);
	st("sendrecv", &s);
	fill(a, 2, 70 + 10 * rank);
	if (rank == 0)
		MPI_Sendrecv_replace_c(a, (MPI_Count)2, MPI_INT, 1, 13, 1, 13, MPI_COMM_WORLD, &s);
	else
		MPI_Sendrecv_replace(a, 2, MPI_INT, 0, 13, 0, 13, MPI_COMM_WORLD, &s);
	ints("replace", a, 2);

	/* MPI_Isendrecv and MPI_Isendrecv_replace, against the blocking
	 * forms and each other. */
	fill(a, 4, 80 + 10 * rank);
	memset(b, 0, sizeof b);
	if (rank == 0) {
		MPI_Isendrecv(a, 4, MPI_INT, 1, 14, b, 6, MPI_INT, 1, 14, MPI_COMM_WORLD, &r[0]);
		MPI_Wait(&r[0], &s);
	} else {
		MPI_Sendrecv(a, 2, MPI_INT, 0, 14, b, 6, MPI_INT, 0, 14, MPI_COMM_WORLD, &s);
	}
	/* (MPICH 4.0.2 leaves the status of an MPI_Isendrecv(_replace)
	 * unset: not printed.) */
	ints("isendrecv", b, 4);
	fill(a, 3, 90 + 10 * rank);
	if (rank == 0) {
		MPI_Isendrecv_replace(a, 3, MPI_INT, 1, 15, 1, 15, MPI_COMM_WORLD, &r[0]);
		MPI_Wait(&r[0], &s);
	} else {
		MPI_Sendrecv_replace(a, 3, MPI_INT, 0, 15, 0, 15, MPI_COMM_WORLD, &s);
	}
	ints("isendrecv_replace", a, 3);
	fill(a, 2, 100 + 10 * rank);
	memset(b, 0, sizeof b);
	if (rank == 0)
		MPI_Isendrecv(a, 2, MPI_INT, 1, 16, b, 2, MPI_INT, 1, 16, MPI_COMM_WORLD, &r[0]);
	else
		MPI_Isendrecv_c(a, (MPI_Count)2, MPI_INT, 0, 16, b, (MPI_Count)2, MPI_INT, 0, 16, MPI_COMM_WORLD, &r[0]);
	MPI_Waitall(1, r, MPI_STATUSES_IGNORE);
	ints("isendrecv_c", b, 2);
	fill(a, 2, 110 + 10 * rank);
	MPI_Isendrecv_replace_c(a, (MPI_Count)2, MPI_INT, peer, 17, peer, 17, MPI_COMM_WORLD, &r[0]);
	MPI_Wait(&r[0], &s);
	ints("isendrecv_replace_c", a, 2);

	/* Matched probes into the large-count receives. */
	if (rank == 0) {
		fill(a, 5, 130);
		MPI_Send_c(a, (MPI_Count)5, MPI_INT, 1, 19, MPI_COMM_WORLD);
		MPI_Recv(b, 1, MPI_INT, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Isendrecv(a + 1, 3, MPI_INT, 1, 20, b, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
	} else {
		MPI_Message m;
		MPI_Count n = -1;
		int flag = 0;
		MPI_Mprobe(0, 19, MPI_COMM_WORLD, &m, &s);
		MPI_Get_count_c(&s, MPI_INT, &n);
		MPI_Mrecv_c(b, n, MPI_INT, &m, &s);
		ints("mrecv_c", b, (int)n);
		st("mrecv_c", &s);
		MPI_Sendrecv(a, 1, MPI_INT, 0, 21, b, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		while (!flag)
			MPI_Improbe(0, 20, MPI_COMM_WORLD, &flag, &m, &s);
		MPI_Get_count_c(&s, MPI_INT, &n);
		MPI_Imrecv_c(b, n, MPI_INT, &m, &r[0]);
		MPI_Wait(&r[0], &s);
		ints("imrecv_c", b, (int)n);
		st("imrecv_c", &s);
	}
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
