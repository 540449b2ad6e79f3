/*
 * nbcoll.c: nonblocking (and, with MPI 4, persistent) collectives on
 * every kind of communicator a program creates, 4 ranks: MPI_COMM_WORLD,
 * MPI_Comm_split (even and odd ranks), MPI_Comm_dup, MPI_Comm_create (ranks
 * 0-2; rank 3 gets MPI_COMM_NULL) and MPI_Intercomm_merge of the
 * intercommunicator between the split halves. On each communicator a rank
 * belongs to: MPI_Ibcast of 1 double from root 0 + MPI_Wait; MPI_Iallreduce
 * of 1 double and MPI_Ibarrier + MPI_Waitall; MPI_Barrier; with MPI 4,
 * MPI_Allreduce_init of 1 double started and waited twice. Memberships:
 * ranks 0-2 five each, rank 3 four: 19.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm split, dup, created, inter, merged;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &split);
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Group wg, g3;
	int r3[3] = {0, 1, 2};
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_incl(wg, 3, r3, &g3);
	MPI_Comm_create(MPI_COMM_WORLD, g3, &created);
	MPI_Intercomm_create(split, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
	MPI_Intercomm_merge(inter, rank % 2, &merged);
	MPI_Comm comms[5] = {MPI_COMM_WORLD, split, dup, created, merged};
	for (int i = 0; i < 5; i++) {
		MPI_Comm c = comms[i];
		if (c == MPI_COMM_NULL)
			continue;
		double x = 1, y = 0;
		MPI_Request r[2];
		MPI_Ibcast(&x, 1, MPI_DOUBLE, 0, c, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		MPI_Iallreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c, &r[0]);
		MPI_Ibarrier(c, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		MPI_Barrier(c);
#if MPI_VERSION >= 4
		MPI_Request p;
		MPI_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c, MPI_INFO_NULL, &p);
		for (int k = 0; k < 2; k++) {
			MPI_Start(&p);
			MPI_Wait(&p, MPI_STATUS_IGNORE);
		}
		MPI_Request_free(&p);
#endif
	}
	MPI_Comm_free(&merged);
	MPI_Comm_free(&inter);
	if (created != MPI_COMM_NULL)
		MPI_Comm_free(&created);
	MPI_Group_free(&g3);
	MPI_Group_free(&wg);
	MPI_Comm_free(&dup);
	MPI_Comm_free(&split);
	MPI_Finalize();
	return 0;
}
