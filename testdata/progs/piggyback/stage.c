/* stage.c: sends the piggyback channel stages (small contiguous data of a
 * predefined datatype: header and data copied into one buffer sent as
 * MPI_PACKED) and sends it does not, received in every way the receiver
 * can post, on 2 ranks. Each rank prints what it received to PREFIX.<rank>
 * (argv[1]). The output must be the same without mpiscope, with it, and
 * with the channel on with or without staging (TestPiggybackStage).
 *
 * Staged by construction with the default threshold (1 KiB), rank 0:
 * 1000 MPI_Send of 2 doubles, 100 MPI_Isend of 256 ints (4 at a time of
 * one buffer: the 4 header slots of its cache entry), 40 MPI_Isend of one
 * int (4 at a time of one buffer: Open MPI hands out one shared request
 * for sends it completed at once, and the slots must still come back),
 * 40 of 60 MPI_Issend of one int (6 at a time of one buffer, before the
 * receiver posts: 4 slots, the other 2 take a datatype of their own), 10
 * MPI_Sendrecv of 8 chars, 10 MPI_Ssend and 10 MPI_Issend of 1 int, 5
 * MPI_Send of 0 ints, 1 MPI_Send before a probe, 1 truncated MPI_Send, 1
 * MPI_Send of one MPI_DOUBLE_INT: 1218; rank 1: its 10 MPI_Sendrecv. Not
 * staged: 257 ints (over 1 KiB), a vector, a derived contiguous type, a
 * persistent send, two MPI_DOUBLE_INT (their extent is not their size). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void sum(const char *what, const int *b, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += (long)b[i] * (i + 1);
	printf("r%d %s: %ld\n", rank, what, s);
}

static void count(const char *what, MPI_Status *s, MPI_Datatype t)
{
	int n = -7, e = -7;
	MPI_Get_count(s, t, &n);
	MPI_Get_elements(s, t, &e);
	printf("r%d %s: src=%d tag=%d count=%d elements=%d\n", rank, what, s->MPI_SOURCE, s->MPI_TAG, n, e);
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
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	const int peer = 1 - rank;
	static int a[4][300], b[300];
	MPI_Status s, ss[6];
	MPI_Request r[6];

	/* 1000 sends of 16 bytes. */
	double d[2] = {0, 0}, dsum = 0;
	for (int i = 0; i < 1000; i++) {
		if (rank == 0) {
			d[0] = i;
			d[1] = 0.5 * i;
			MPI_Send(d, 2, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
		} else {
			MPI_Recv(d, 2, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &s);
			dsum += d[0] + 3 * d[1];
		}
	}
	if (rank == 1) {
		printf("r1 doubles: %.1f\n", dsum);
		count("doubles", &s, MPI_DOUBLE);
	}

	/* 1 KiB, nonblocking, 4 at a time of one buffer, received posted
	 * larger. */
	long tot = 0;
	for (int k = 0; k < 25; k++) {
		if (rank == 0)
			for (int i = 0; i < 256; i++)
				a[0][i] = k * 1000 + i;
		for (int j = 0; j < 4; j++) {
			if (rank == 0) {
				MPI_Isend(a[0], 256, MPI_INT, 1, 2 + 100 * j, MPI_COMM_WORLD, &r[j]);
			} else {
				MPI_Irecv(a[j], 300, MPI_INT, 0, 2 + 100 * j, MPI_COMM_WORLD, &r[j]);
			}
		}
		MPI_Waitall(4, r, ss);
		if (rank == 1)
			for (int j = 0; j < 4; j++) {
				int n = -1;
				MPI_Get_count(&ss[j], MPI_INT, &n);
				for (int i = 0; i < n; i++)
					tot += a[j][i];
				tot += 1000000L * n;
			}
	}
	if (rank == 1)
		printf("r1 isend 1KiB: %ld\n", tot);

	/* 4 small sends of one buffer at once. */
	tot = 0;
	for (int k = 0; k < 10; k++) {
		int one = 7 * k + 1, got[6];
		for (int j = 0; j < 4; j++) {
			if (rank == 0)
				MPI_Isend(&one, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &r[j]);
			else
				MPI_Irecv(&got[j], 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r[j]);
		}
		MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
		if (rank == 1)
			for (int j = 0; j < 4; j++)
				tot += got[j] * (j + 1);
	}
	if (rank == 1)
		printf("r1 same buffer: %ld\n", tot);

	/* 6 synchronous sends of one buffer at once, posted before the
	 * receives: all 6 in flight. */
	tot = 0;
	for (int k = 0; k < 10; k++) {
		int one = 5 * k + 2, got[6];
		if (rank == 0) {
			for (int j = 0; j < 6; j++)
				MPI_Issend(&one, 1, MPI_INT, 1, 20 + j, MPI_COMM_WORLD, &r[j]);
			MPI_Barrier(MPI_COMM_WORLD);
		} else {
			MPI_Barrier(MPI_COMM_WORLD);
			for (int j = 0; j < 6; j++)
				MPI_Irecv(&got[j], 1, MPI_INT, 0, 20 + j, MPI_COMM_WORLD, &r[j]);
		}
		MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
		if (rank == 1)
			for (int j = 0; j < 6; j++)
				tot += got[j] * (j + 2);
	}
	if (rank == 1)
		printf("r1 same buffer, synchronous: %ld\n", tot);

	/* Over the threshold: 257 ints. */
	for (int k = 0; k < 10; k++) {
		if (rank == 0) {
			for (int i = 0; i < 257; i++)
				b[i] = k + i;
			MPI_Send(b, 257, MPI_INT, 1, 4, MPI_COMM_WORLD);
		} else {
			memset(b, 0, sizeof b);
			MPI_Recv(b, 257, MPI_INT, 0, 4, MPI_COMM_WORLD, &s);
		}
	}
	if (rank == 1) {
		sum("257 ints", b, 257);
		count("257 ints", &s, MPI_INT);
	}

	/* A vector (every other int of 8) and a derived contiguous type,
	 * each received as plain ints. */
	MPI_Datatype vec, con;
	MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_contiguous(4, MPI_INT, &con);
	MPI_Type_commit(&con);
	for (int k = 0; k < 10; k++) {
		if (rank == 0) {
			for (int i = 0; i < 8; i++)
				b[i] = 10 * k + i;
			MPI_Send(b, 1, vec, 1, 5, MPI_COMM_WORLD);
			MPI_Send(b, 1, con, 1, 6, MPI_COMM_WORLD);
		} else {
			MPI_Recv(b, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &s);
			MPI_Recv(b + 4, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &s);
		}
	}
	if (rank == 1)
		sum("vector and contiguous", b, 8);
	MPI_Type_free(&vec);
	MPI_Type_free(&con);

	/* Both ways at once, 8 chars, received into a larger buffer. */
	char cs[8], cr[16];
	for (int k = 0; k < 10; k++) {
		for (int i = 0; i < 8; i++)
			cs[i] = (char)('a' + rank * 8 + i);
		memset(cr, '.', sizeof cr);
		MPI_Sendrecv(cs, 8, MPI_CHAR, peer, 7, cr, 16, MPI_CHAR, peer, 7, MPI_COMM_WORLD, &s);
	}
	printf("r%d sendrecv: %.16s\n", rank, cr);
	count("sendrecv", &s, MPI_CHAR);

	/* Synchronous, blocking and not. */
	for (int k = 0; k < 10; k++) {
		int x = 100 + k, y[2] = {-1, -1};
		if (rank == 0) {
			MPI_Ssend(&x, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
			MPI_Issend(&x, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, &r[0]);
			MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(y, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Recv(y + 1, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (k == 9)
				printf("r1 ssend: %d %d\n", y[0], y[1]);
		}
	}

	/* Zero counts. */
	for (int k = 0; k < 5; k++) {
		if (rank == 0) {
			MPI_Send(b, 0, MPI_INT, 1, 10, MPI_COMM_WORLD);
		} else {
			b[0] = 42;
			MPI_Recv(b, 4, MPI_INT, 0, 10, MPI_COMM_WORLD, &s);
		}
	}
	if (rank == 1) {
		count("zero", &s, MPI_INT);
		printf("r1 zero: untouched %d\n", b[0]);
	}

	/* A probe sizes the receive. */
	if (rank == 0) {
		int five[5] = {5, 4, 3, 2, 1};
		MPI_Send(five, 5, MPI_INT, 1, 11, MPI_COMM_WORLD);
	} else {
		int n = -1;
		MPI_Probe(0, 11, MPI_COMM_WORLD, &s);
		MPI_Get_count(&s, MPI_INT, &n);
		int *p = malloc(sizeof(int) * (size_t)n);
		MPI_Recv(p, n, MPI_INT, 0, 11, MPI_COMM_WORLD, &s);
		sum("probed", p, n);
		count("probed", &s, MPI_INT);
		free(p);
	}

	/* Truncation: 8 ints into 4. */
	if (rank == 0) {
		int eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
		MPI_Send(eight, 8, MPI_INT, 1, 12, MPI_COMM_WORLD);
	} else {
		int four[4], cls = -1;
		int rc = MPI_Recv(four, 4, MPI_INT, 0, 12, MPI_COMM_WORLD, &s);
		MPI_Error_class(rc, &cls);
		printf("r1 truncated: %s\n", cls == MPI_ERR_TRUNCATE ? "MPI_ERR_TRUNCATE" : cls == MPI_SUCCESS ? "success" : "other");
	}

	/* A persistent send, started 5 times. */
	int ps = 0;
	if (rank == 0) {
		MPI_Send_init(&ps, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &r[0]);
		for (int k = 0; k < 5; k++) {
			ps = 1000 + k;
			MPI_Start(&r[0]);
			MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		}
		MPI_Request_free(&r[0]);
	} else {
		long t = 0;
		for (int k = 0; k < 5; k++) {
			MPI_Recv(&ps, 1, MPI_INT, 0, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			t += ps * (k + 1);
		}
		printf("r1 persistent: %ld\n", t);
	}

	/* MPI_DOUBLE_INT: one (staged), then two (not). */
	struct {
		double v;
		int i;
	} di[2] = {{1.5, 3}, {2.5, 4}};
	if (rank == 0) {
		MPI_Send(di, 1, MPI_DOUBLE_INT, 1, 14, MPI_COMM_WORLD);
		MPI_Send(di, 2, MPI_DOUBLE_INT, 1, 15, MPI_COMM_WORLD);
	} else {
		memset(di, 0, sizeof di);
		MPI_Recv(di, 2, MPI_DOUBLE_INT, 0, 14, MPI_COMM_WORLD, &s);
		count("double_int 1", &s, MPI_DOUBLE_INT);
		printf("r1 double_int 1: %.1f %d\n", di[0].v, di[0].i);
		MPI_Recv(di, 2, MPI_DOUBLE_INT, 0, 15, MPI_COMM_WORLD, &s);
		count("double_int 2", &s, MPI_DOUBLE_INT);
		printf("r1 double_int 2: %.1f %d %.1f %d\n", di[0].v, di[0].i, di[1].v, di[1].i);
	}

	fflush(stdout);
	MPI_Finalize();
	return 0;
}
