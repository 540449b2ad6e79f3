/* transp.c: what a program can observe of its point-to-point messages,
 * printed line by line ("rN case: values"), on 2 ranks. Its output must
 * be the same with mpiscope's piggyback channel on (MPISCOPE_PIGGYBACK=1),
 * off, and without mpiscope (TestPiggybackTransparent). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void st(const char *what, MPI_Status *s, MPI_Datatype t)
{
	int n = -7, e = -7, c = -7;
	MPI_Get_count(s, t, &n);
	MPI_Get_elements(s, t, &e);
	MPI_Test_cancelled(s, &c);
	printf("r%d %s: src=%d tag=%d count=%d elements=%d cancelled=%d\n", rank, what, s->MPI_SOURCE, s->MPI_TAG, n, e, c);
}

static void ints(const char *what, const int *b, int n)
{
	printf("r%d %s:", rank, what);
	for (int i = 0; i < n; i++)
		printf(" %d", b[i]);
	printf("\n");
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
	/* With an argument PREFIX each rank writes PREFIX.<rank>: a launcher
	 * may forward the ranks' stdout in pieces that split lines. */
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
	int a[32], b[32];
	MPI_Status s, ss[4];
	MPI_Request r[4];

	/* Blocking, a receive posted larger than the message. */
	if (rank == 0) {
		fill(a, 10, 100);
		MPI_Send(a, 10, MPI_INT, 1, 1, MPI_COMM_WORLD);
		MPI_Send(a, 5, MPI_INT, 1, 2, MPI_COMM_WORLD);
	} else {
		memset(b, 0xff, sizeof b);
		MPI_Recv(b, 10, MPI_INT, 0, 1, MPI_COMM_WORLD, &s);
		st("recv", &s, MPI_INT);
		ints("recv data", b, 10);
		memset(b, 0xff, sizeof b);
		MPI_Recv(b, 10, MPI_INT, 0, 2, MPI_COMM_WORLD, &s);
		st("recv larger", &s, MPI_INT);
		ints("recv larger data", b, 10);
	}

	/* MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_STATUS_IGNORE, zero counts. */
	if (rank == 0) {
		fill(a, 3, 7);
		MPI_Send(a, 3, MPI_INT, 1, 33, MPI_COMM_WORLD);
		MPI_Send(a, 3, MPI_INT, 1, 34, MPI_COMM_WORLD);
		MPI_Send(NULL, 0, MPI_INT, 1, 35, MPI_COMM_WORLD);
	} else {
		MPI_Recv(b, 8, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
		st("any", &s, MPI_INT);
		memset(b, 0, sizeof b);
		MPI_Recv(b, 8, MPI_INT, 0, 34, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		ints("ignore data", b, 4);
		MPI_Recv(b, 8, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &s);
		st("zero", &s, MPI_INT);
	}

	/* MPI_PROC_NULL. */
	MPI_Send(a, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
	MPI_Recv(b, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &s);
	st("procnull", &s, MPI_INT);

	/* Noncontiguous and derived types; partial elements. */
	MPI_Datatype vec, pair;
	MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	MPI_Type_contiguous(2, MPI_INT, &pair);
	MPI_Type_commit(&pair);
	if (rank == 0) {
		fill(a, 32, 0);
		MPI_Send(a, 2, vec, 1, 5, MPI_COMM_WORLD);
		MPI_Send(a, 2, vec, 1, 6, MPI_COMM_WORLD);
		MPI_Send(a, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
	} else {
		memset(b, 0, sizeof b);
		MPI_Recv(b, 20, MPI_INT, 0, 5, MPI_COMM_WORLD, &s);
		st("vec as int", &s, MPI_INT);
		ints("vec as int data", b, 12);
		memset(b, 0, sizeof b);
		MPI_Recv(b, 2, vec, 0, 6, MPI_COMM_WORLD, &s);
		st("vec as vec", &s, vec);
		ints("vec as vec data", b, 24);
		MPI_Recv(b, 2, pair, 0, 7, MPI_COMM_WORLD, &s);
		st("partial pair", &s, pair);
	}

	/* MPI_BOTTOM with absolute addresses. */
	{
		int x[2] = {rank * 10 + 1, rank * 10 + 2};
		double y = rank + 0.5;
		int bl[2] = {2, 1};
		MPI_Aint d[2];
		MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, abs;
		MPI_Get_address(x, &d[0]);
		MPI_Get_address(&y, &d[1]);
		MPI_Type_create_struct(2, bl, d, ty, &abs);
		MPI_Type_commit(&abs);
		MPI_Sendrecv_replace(MPI_BOTTOM, 1, abs, peer, 8, peer, 8, MPI_COMM_WORLD, &s);
		st("bottom", &s, abs);
		printf("r%d bottom data: %d %d %.1f\n", rank, x[0], x[1], y);
		MPI_Type_free(&abs);
	}

	/* Truncation under MPI_ERRORS_RETURN. */
	if (rank == 0) {
		MPI_Send(a, 10, MPI_INT, 1, 9, MPI_COMM_WORLD);
	} else {
		int rc = MPI_Recv(b, 5, MPI_INT, 0, 9, MPI_COMM_WORLD, &s), cls = -1;
		MPI_Error_class(rc, &cls);
		printf("r1 truncate: rc_is_truncate=%d\n", cls == MPI_ERR_TRUNCATE);
	}

	/* Nonblocking, every completion call. */
	fill(a, 32, 1000 * (rank + 1));
	MPI_Irecv(b, 8, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[0]);
	MPI_Isend(a, 4, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[1]);
	MPI_Wait(&r[0], &s);
	st("wait", &s, MPI_INT);
	MPI_Wait(&r[1], MPI_STATUS_IGNORE);
	ints("wait data", b, 4);

	memset(b, 0, sizeof b);
	MPI_Irecv(b, 8, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[0]);
	MPI_Irecv(b + 8, 8, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[1]);
	MPI_Issend(a, 3, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[2]);
	MPI_Isend(a + 3, 5, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[3]);
	MPI_Waitall(4, r, ss);
	st("waitall 0", &ss[0], MPI_INT);
	st("waitall 1", &ss[1], MPI_INT);
	ints("waitall data", b, 16);

	MPI_Irecv(b, 8, MPI_INT, peer, 13, MPI_COMM_WORLD, &r[0]);
	MPI_Isend(a, 6, MPI_INT, peer, 13, MPI_COMM_WORLD, &r[1]);
	MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	ints("waitall ignore data", b, 6);

	{
		int idx, done = 0, got = 0, flag = 0;
		MPI_Irecv(b, 8, MPI_INT, peer, 14, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 7, MPI_INT, peer, 14, MPI_COMM_WORLD, &r[1]);
		while (done < 2) {
			MPI_Waitany(2, r, &idx, &s);
			if (idx == 0)
				st("waitany", &s, MPI_INT);
			done++;
		}
		MPI_Irecv(b, 8, MPI_INT, peer, 15, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 2, MPI_INT, peer, 15, MPI_COMM_WORLD, &r[1]);
		done = 0;
		while (done < 2) {
			int outn, ix[2];
			MPI_Waitsome(2, r, &outn, ix, ss);
			for (int k = 0; k < outn; k++)
				if (ix[k] == 0)
					st("waitsome", &ss[k], MPI_INT);
			done += outn;
		}
		MPI_Irecv(b, 8, MPI_INT, peer, 16, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 5, MPI_INT, peer, 16, MPI_COMM_WORLD, &r[1]);
		while (!flag)
			MPI_Testall(2, r, &flag, ss);
		st("testall", &ss[0], MPI_INT);
		MPI_Irecv(b, 8, MPI_INT, peer, 17, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 1, MPI_INT, peer, 17, MPI_COMM_WORLD, &r[1]);
		flag = 0;
		while (!flag)
			MPI_Test(&r[0], &flag, &s);
		st("test", &s, MPI_INT);
		MPI_Wait(&r[1], MPI_STATUS_IGNORE);
		MPI_Irecv(b, 8, MPI_INT, peer, 18, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 8, MPI_INT, peer, 18, MPI_COMM_WORLD, &r[1]);
		done = 0;
		while (done < 2) {
			MPI_Testany(2, r, &idx, &flag, &s);
			if (flag && idx != MPI_UNDEFINED) {
				if (idx == 0)
					st("testany", &s, MPI_INT);
				done++;
			}
		}
		MPI_Irecv(b, 8, MPI_INT, peer, 19, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 3, MPI_INT, peer, 19, MPI_COMM_WORLD, &r[1]);
		done = 0;
		while (done < 2) {
			int outn, ix[2];
			MPI_Testsome(2, r, &outn, ix, ss);
			for (int k = 0; k < outn; k++)
				if (ix[k] == 0)
					st("testsome", &ss[k], MPI_INT);
			done += outn;
		}
		MPI_Irecv(b, 8, MPI_INT, peer, 20, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(a, 4, MPI_INT, peer, 20, MPI_COMM_WORLD, &r[1]);
		flag = 0;
		while (!flag)
			MPI_Request_get_status(r[0], &flag, &s);
		st("get_status", &s, MPI_INT);
		MPI_Waitall(2, r, ss);
		st("get_status wait", &ss[0], MPI_INT);
		got = b[0];
		printf("r%d get_status data: %d\n", rank, got);
	}

	/* Persistent requests. */
	{
		MPI_Request p[2];
		MPI_Recv_init(b, 8, MPI_INT, peer, 21, MPI_COMM_WORLD, &p[0]);
		MPI_Send_init(a, 6, MPI_INT, peer, 21, MPI_COMM_WORLD, &p[1]);
		for (int it = 0; it < 3; it++) {
			a[0] = it;
			MPI_Start(&p[0]);
			MPI_Start(&p[1]);
			MPI_Waitall(2, p, ss);
			st("persistent", &ss[0], MPI_INT);
			ints("persistent data", b, 6);
		}
		a[0] = 9;
		MPI_Startall(2, p);
		MPI_Wait(&p[0], &s);
		MPI_Wait(&p[1], MPI_STATUS_IGNORE);
		st("startall", &s, MPI_INT);
		MPI_Request_free(&p[0]);
		MPI_Request_free(&p[1]);
		MPI_Ssend_init(a, 2, MPI_INT, peer, 22, MPI_COMM_WORLD, &p[1]);
		MPI_Irecv(b, 8, MPI_INT, peer, 22, MPI_COMM_WORLD, &p[0]);
		MPI_Start(&p[1]);
		MPI_Wait(&p[0], &s);
		MPI_Wait(&p[1], MPI_STATUS_IGNORE);
		st("ssend_init", &s, MPI_INT);
		MPI_Request_free(&p[1]);
	}

	/* Probes, with receives sized from MPI_Get_count. */
	if (rank == 0) {
		fill(a, 32, 50);
		MPI_Send(a, 7, MPI_INT, 1, 23, MPI_COMM_WORLD);
		MPI_Send(a, 9, MPI_INT, 1, 24, MPI_COMM_WORLD);
		MPI_Send(a, 11, MPI_INT, 1, 25, MPI_COMM_WORLD);
		MPI_Send(a, 13, MPI_INT, 1, 26, MPI_COMM_WORLD);
	} else {
		int n, flag = 0;
		MPI_Probe(0, 23, MPI_COMM_WORLD, &s);
		st("probe", &s, MPI_INT);
		MPI_Get_count(&s, MPI_INT, &n);
		int *v = malloc(sizeof(int) * (size_t)n);
		MPI_Recv(v, n, MPI_INT, 0, 23, MPI_COMM_WORLD, &s);
		st("probe recv", &s, MPI_INT);
		ints("probe data", v, n);
		free(v);
		while (!flag)
			MPI_Iprobe(MPI_ANY_SOURCE, 24, MPI_COMM_WORLD, &flag, &s);
		st("iprobe", &s, MPI_INT);
		MPI_Recv(b, 32, MPI_INT, 0, 24, MPI_COMM_WORLD, &s);
		MPI_Message m;
		MPI_Mprobe(0, 25, MPI_COMM_WORLD, &m, &s);
		st("mprobe", &s, MPI_INT);
		MPI_Get_count(&s, MPI_INT, &n);
		MPI_Mrecv(b, n, MPI_INT, &m, &s);
		st("mrecv", &s, MPI_INT);
		ints("mrecv data", b, n);
		flag = 0;
		while (!flag)
			MPI_Improbe(0, 26, MPI_COMM_WORLD, &flag, &m, &s);
		st("improbe", &s, MPI_INT);
		MPI_Imrecv(b, 32, MPI_INT, &m, &r[0]);
		MPI_Wait(&r[0], &s);
		st("imrecv", &s, MPI_INT);
		ints("imrecv data", b, 13);
	}

	/* Sendrecv, Sendrecv_replace (also with MPI_PROC_NULL on one side). */
	fill(a, 32, 200 * (rank + 1));
	MPI_Sendrecv(a, 5, MPI_INT, peer, 27, b, 10, MPI_INT, peer, 27, MPI_COMM_WORLD, &s);
	st("sendrecv", &s, MPI_INT);
	ints("sendrecv data", b, 5);
	MPI_Sendrecv(a, 0, MPI_INT, peer, 28, a, 0, MPI_INT, peer, 28, MPI_COMM_WORLD, &s);
	st("sendrecv zero", &s, MPI_INT);
	MPI_Sendrecv_replace(a, 4, MPI_INT, peer, 29, peer, 29, MPI_COMM_WORLD, &s);
	st("replace", &s, MPI_INT);
	ints("replace data", a, 4);
	if (rank == 0)
		MPI_Sendrecv_replace(a, 4, MPI_INT, 1, 30, MPI_PROC_NULL, 30, MPI_COMM_WORLD, &s);
	else
		MPI_Sendrecv_replace(a, 4, MPI_INT, MPI_PROC_NULL, 30, 0, 30, MPI_COMM_WORLD, &s);
	st("replace half", &s, MPI_INT);
	ints("replace half data", a, 4);

	/* Synchronous, ready and buffered modes; the attached buffer sized
	 * exactly for the messages. */
	if (rank == 0) {
		MPI_Ssend(a, 3, MPI_INT, 1, 31, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Rsend(a, 2, MPI_INT, 1, 32, MPI_COMM_WORLD);
		int sz;
		MPI_Pack_size(6, MPI_INT, MPI_COMM_WORLD, &sz);
		sz = 2 * (sz + MPI_BSEND_OVERHEAD);
		char *bb = malloc((size_t)sz);
		MPI_Buffer_attach(bb, sz);
		int rc1 = MPI_Bsend(a, 6, MPI_INT, 1, 33, MPI_COMM_WORLD);
		int rc2 = MPI_Bsend(a, 6, MPI_INT, 1, 33, MPI_COMM_WORLD);
		void *back;
		int bsz;
		MPI_Buffer_detach(&back, &bsz);
		printf("r0 bsend: rc=%d,%d detach_same=%d size_same=%d\n", rc1, rc2, back == (void *)bb, bsz == sz);
		free(bb);
	} else {
		MPI_Recv(b, 8, MPI_INT, 0, 31, MPI_COMM_WORLD, &s);
		st("ssend", &s, MPI_INT);
		MPI_Irecv(b, 8, MPI_INT, 0, 32, MPI_COMM_WORLD, &r[0]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&r[0], &s);
		st("rsend", &s, MPI_INT);
		MPI_Recv(b, 8, MPI_INT, 0, 33, MPI_COMM_WORLD, &s);
		st("bsend", &s, MPI_INT);
		MPI_Recv(b, 8, MPI_INT, 0, 33, MPI_COMM_WORLD, &s);
	}

	/* Cancel. */
	MPI_Irecv(b, 8, MPI_INT, peer, 99, MPI_COMM_WORLD, &r[0]);
	MPI_Cancel(&r[0]);
	MPI_Wait(&r[0], &s);
	{
		int c = 0;
		MPI_Test_cancelled(&s, &c);
		printf("r%d cancel: cancelled=%d\n", rank, c);
	}

	/* Intercommunicator. */
	{
		MPI_Comm half, inter;
		MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
		MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 40, &inter);
		fill(a, 32, 300 + rank);
		MPI_Sendrecv(a, 3 + rank, MPI_INT, 0, 41, b, 8, MPI_INT, 0, 41, inter, &s);
		st("inter", &s, MPI_INT);
		ints("inter data", b, 3 + peer);
		MPI_Comm_free(&inter);
		MPI_Comm_free(&half);
	}

	/* A loop reusing its buffers. */
	{
		long sum = 0;
		for (int it = 0; it < 200; it++) {
			a[0] = it;
			MPI_Sendrecv(a, 4, MPI_INT, peer, 50, b, 4, MPI_INT, peer, 50, MPI_COMM_WORLD, &s);
			sum += b[0];
		}
		printf("r%d loop: sum=%ld\n", rank, sum);
	}

	MPI_Type_free(&vec);
	MPI_Type_free(&pair);
	MPI_Finalize();
	return 0;
}
