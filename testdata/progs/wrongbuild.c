/*
 * wrongbuild.c: a program whose output depends on every kind of handle
 * passing through intact (2 ranks): communicators (predefined, duplicated,
 * split), datatypes (predefined, derived), operations (predefined, user),
 * requests, statuses, an error handler, a call with arguments on the stack
 * (MPI_Sendrecv) and MPI_Pcontrol. Run with a libmpiscope built for the
 * other MPI family, it must print the same as without it.
 */
#include <mpi.h>
#include <stdio.h>

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *t)
{
	(void)t;
	for (int i = 0; i < *len; i++) {
		double a = ((double *)in)[i], b = ((double *)inout)[i];
		a = a < 0 ? -a : a;
		b = b < 0 ? -b : b;
		((double *)inout)[i] = a > b ? a : b;
	}
}

int main(int argc, char **argv)
{
	int rank, size, i, flag = 0, count = -1, err, cls = 0, len = 0;
	char name[MPI_MAX_OBJECT_NAME];
	MPI_Init(&argc, &argv);
	MPI_Pcontrol(1);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	MPI_Comm dup, split;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_name(dup, "dup");
	MPI_Comm_get_name(dup, name, &len);
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
	int srank, ssize;
	MPI_Comm_rank(split, &srank);
	MPI_Comm_size(split, &ssize);

	MPI_Datatype pair;
	MPI_Type_contiguous(2, MPI_DOUBLE, &pair);
	MPI_Type_commit(&pair);
	int tsize;
	MPI_Type_size(pair, &tsize);

	double v[2] = {rank + 1, -(rank + 1) * 10.0}, s[2], m[2];
	MPI_Allreduce(v, s, 2, MPI_DOUBLE, MPI_SUM, dup);
	MPI_Op op;
	MPI_Op_create(maxabs, 1, &op);
	MPI_Allreduce(v, m, 2, MPI_DOUBLE, op, MPI_COMM_WORLD);
	MPI_Op_free(&op);

	double got[2] = {0, 0};
	MPI_Status st;
	MPI_Sendrecv(v, 1, pair, (rank + 1) % size, 5, got, 1, pair, (rank + size - 1) % size, 5, dup, &st);
	MPI_Get_count(&st, pair, &count);

	MPI_Request rq[2];
	int out = rank * 100, in = -1;
	MPI_Irecv(&in, 1, MPI_INT, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &rq[0]);
	MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD, &rq[1]);
	MPI_Status sts[2];
	MPI_Waitall(2, rq, sts);
	MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE);

	MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
	err = MPI_Send(v, 1, MPI_DOUBLE, size + 5, 0, dup); /* invalid rank: an error returned */
	MPI_Error_class(err, &cls);

	long total = 0;
	for (i = 0; i < 100; i++) {
		int x = i, y = 0;
		MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, 0, split);
		MPI_Bcast(&y, 1, MPI_INT, 0, split);
		total += y;
	}
	MPI_Barrier(MPI_COMM_WORLD);

	printf("rank %d of %d: name %s, split %d of %d, type %d bytes, sum %.0f %.0f, maxabs %.0f %.0f, "
	       "got %.0f %.0f (%d), in %d, flag %d, error %s, total %ld\n",
	       rank, size, name, srank, ssize, tsize, s[0], s[1], m[0], m[1], got[0], got[1], count, in, flag,
	       cls == MPI_ERR_RANK ? "MPI_ERR_RANK" : "other", total);
	MPI_Type_free(&pair);
	MPI_Comm_free(&split);
	MPI_Comm_free(&dup);
	MPI_Finalize();
	return 0;
}
