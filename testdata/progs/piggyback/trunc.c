/* trunc.c: truncated receives under MPI_ERRORS_RETURN, on 2 ranks: every
 * receive and completion call, the statuses set beforehand to values the
 * implementation would leave in place, and what the program can observe
 * printed line by line ("r1 case: values"). Its output must be the same
 * with mpiscope's piggyback channel on, off, and without mpiscope
 * (TestPiggybackTruncate). With an argument PREFIX, rank r writes
 * PREFIX.<r>.
 *
 * Rank 0 sends 10 ints with tags 1 to 12, rank 1 receives each into 5
 * (tag 4 into 10: the second request of an MPI_Waitall whose first is
 * truncated, which the implementation may leave pending). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int cls(int rc)
{
	int c = -1;
	MPI_Error_class(rc, &c);
	return c;
}

static const char *name(int c)
{
	return c == MPI_SUCCESS ? "success" : c == MPI_ERR_TRUNCATE ? "truncate" : c == MPI_ERR_IN_STATUS ? "in_status"
		: c == MPI_ERR_PENDING ? "pending" : "other";
}

/* preset gives a status values that no receive here makes. */
static void preset(MPI_Status *s)
{
	MPI_Status_set_elements(s, MPI_INT, 77);
	s->MPI_SOURCE = -66;
	s->MPI_TAG = -55;
	s->MPI_ERROR = MPI_SUCCESS;
}

static void show(const char *what, int rc, MPI_Status *s, const int *b)
{
	int n = -7, e = -7;
	MPI_Get_count(s, MPI_INT, &n);
	MPI_Get_elements(s, MPI_INT, &e);
	printf("r1 %s: rc=%s src=%d tag=%d count=%d elements=%d data=%d,%d,%d,%d,%d,%d\n", what, name(cls(rc)), s->MPI_SOURCE,
	       s->MPI_TAG, n, e, b[0], b[1], b[2], b[3], b[4], b[5]);
}

int main(int argc, char **argv)
{
	int rank, a[16], b[32];
	MPI_Status s, ss[2];
	MPI_Request q[2];
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
	for (int i = 0; i < 16; i++)
		a[i] = 100 + i;
	if (rank == 0) {
		for (int t = 1; t <= 12; t++)
			MPI_Send(a, 10, MPI_INT, 1, t, MPI_COMM_WORLD);
		MPI_Sendrecv(a, 10, MPI_INT, 1, 13, b, 1, MPI_INT, 1, 13, MPI_COMM_WORLD, &s);
		printf("r0 done: sent\n");
	} else {
		int rc, idx = -1, flag = 0, outn = 0, ix[2];

		memset(b, 0, sizeof b);
		preset(&s);
		rc = MPI_Recv(b, 5, MPI_INT, 0, 1, MPI_COMM_WORLD, &s);
		show("recv", rc, &s, b);

		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Irecv(b, 5, MPI_INT, 0, 2, MPI_COMM_WORLD, &q[0]);
		rc = MPI_Wait(&q[0], &s);
		show("wait", rc, &s, b);

		/* MPI_Waitall: the first truncated, the second not. */
		memset(b, 0, sizeof b);
		preset(&ss[0]);
		preset(&ss[1]);
		MPI_Irecv(b, 5, MPI_INT, 0, 3, MPI_COMM_WORLD, &q[0]);
		MPI_Irecv(b + 16, 10, MPI_INT, 0, 4, MPI_COMM_WORLD, &q[1]);
		rc = MPI_Waitall(2, q, ss);
		show("waitall 0", rc, &ss[0], b);
		printf("r1 waitall 0 error: %s\n", name(rc == MPI_SUCCESS ? MPI_SUCCESS : cls(ss[0].MPI_ERROR)));
		/* Left pending (whether it is depends on the implementation
		 * and the timing): completed here, with the same calls either
		 * way (the counts are compared). */
		{
			MPI_Status tmp;
			preset(&tmp);
			MPI_Wait(&q[1], cls(rc) == MPI_ERR_IN_STATUS && cls(ss[1].MPI_ERROR) == MPI_ERR_PENDING ? &ss[1] : &tmp);
		}
		show("waitall 1", MPI_SUCCESS, &ss[1], b + 16);

		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Irecv(b, 5, MPI_INT, 0, 5, MPI_COMM_WORLD, &q[0]);
		do
			rc = MPI_Test(&q[0], &flag, &s);
		while (!flag && rc == MPI_SUCCESS);
		show("test", rc, &s, b);

		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Irecv(b, 5, MPI_INT, 0, 6, MPI_COMM_WORLD, &q[0]);
		rc = MPI_Waitany(1, q, &idx, &s);
		show("waitany", rc, &s, b);

		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Irecv(b, 5, MPI_INT, 0, 7, MPI_COMM_WORLD, &q[0]);
		flag = 0;
		do
			rc = MPI_Testany(1, q, &idx, &flag, &s);
		while (!flag && rc == MPI_SUCCESS);
		show("testany", rc, &s, b);

		memset(b, 0, sizeof b);
		preset(&ss[0]);
		MPI_Irecv(b, 5, MPI_INT, 0, 8, MPI_COMM_WORLD, &q[0]);
		rc = MPI_Waitsome(1, q, &outn, ix, ss);
		show("waitsome", rc, &ss[0], b);
		printf("r1 waitsome error: %s\n", name(rc == MPI_SUCCESS ? MPI_SUCCESS : cls(ss[0].MPI_ERROR)));

		memset(b, 0, sizeof b);
		preset(&ss[0]);
		MPI_Irecv(b, 5, MPI_INT, 0, 9, MPI_COMM_WORLD, &q[0]);
		outn = 0;
		do
			rc = MPI_Testsome(1, q, &outn, ix, ss);
		while (outn == 0 && rc == MPI_SUCCESS);
		show("testsome", rc, &ss[0], b);

		memset(b, 0, sizeof b);
		preset(&ss[0]);
		MPI_Irecv(b, 5, MPI_INT, 0, 10, MPI_COMM_WORLD, &q[0]);
		flag = 0;
		do
			rc = MPI_Testall(1, q, &flag, ss);
		while (!flag && rc == MPI_SUCCESS);
		show("testall", rc, &ss[0], b);

		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Message m;
		MPI_Mprobe(0, 11, MPI_COMM_WORLD, &m, &s);
		preset(&s);
		rc = MPI_Mrecv(b, 5, MPI_INT, &m, &s);
		show("mrecv", rc, &s, b);

		/* A persistent receive. */
		memset(b, 0, sizeof b);
		preset(&s);
		MPI_Recv_init(b, 5, MPI_INT, 0, 12, MPI_COMM_WORLD, &q[0]);
		MPI_Start(&q[0]);
		rc = MPI_Wait(&q[0], &s);
		show("persistent", rc, &s, b);
		MPI_Request_free(&q[0]);

		memset(b, 0, sizeof b);
		preset(&s);
		rc = MPI_Sendrecv(a, 1, MPI_INT, 0, 13, b, 5, MPI_INT, 0, 13, MPI_COMM_WORLD, &s);
		show("sendrecv", rc, &s, b);
	}
	MPI_Finalize();
	return 0;
}
