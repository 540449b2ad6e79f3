/*
 * session.c: the MPI-4 sessions model, no MPI_Init (2 ranks): a communicator
 * from the "mpi://WORLD" process set, 40 messages of 8 bytes from rank 0 to 1.
 * "session abort": then rank 1 calls MPI_Abort (code 3) while rank 0 waits
 * in MPI_Recv for a message that never comes.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	MPI_Session s;
	MPI_Group g;
	MPI_Comm c;
	int rank, i;
	double d = 2.5;
	MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
	MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
	MPI_Comm_create_from_group(g, "mpiscope.test", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c);
	MPI_Comm_rank(c, &rank);
	for (i = 0; i < 40; i++) {
		if (rank == 0)
			MPI_Send(&d, 1, MPI_DOUBLE, 1, 0, c);
		else if (rank == 1)
			MPI_Recv(&d, 1, MPI_DOUBLE, 0, 0, c, MPI_STATUS_IGNORE);
	}
	if (argc > 1 && strcmp(argv[1], "abort") == 0) {
		if (rank == 1)
			MPI_Abort(c, 3);
		MPI_Recv(&d, 1, MPI_DOUBLE, 1, 99, c, MPI_STATUS_IGNORE);
	}
	MPI_Comm_free(&c);
	MPI_Group_free(&g);
	MPI_Session_finalize(&s);
	if (rank == 1)
		printf("session got %g\n", d);
	return 0;
}
