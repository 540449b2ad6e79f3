/*
 * session_wait.c: the sessions model (MPICH), waiting for a signal
 * (internal/trace/e2e_end_test.go). Usage: session_wait DIR. Each rank
 * makes 3 MPI_Barrier on a communicator from "mpi://WORLD", writes
 * DIR/pid.<rank>, waits (outside MPI) up to 60 s for DIR/go, makes one
 * more MPI_Barrier and finalizes its session.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: session_wait DIR\n");
		return 2;
	}
	MPI_Session s;
	MPI_Group g;
	MPI_Comm c;
	int rank;
	char path[4096], tmp[4096];
	MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
	MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
	MPI_Comm_create_from_group(g, "mpiscope.wait", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c);
	MPI_Comm_rank(c, &rank);
	for (int i = 0; i < 3; i++)
		MPI_Barrier(c);
	snprintf(path, sizeof path, "%s/pid.%d", argv[1], rank);
	snprintf(tmp, sizeof tmp, "%s/.pid.%d", argv[1], rank);
	FILE *f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		rename(tmp, path);
	}
	snprintf(path, sizeof path, "%s/go", argv[1]);
	for (int i = 0; i < 6000 && access(path, F_OK) != 0; i++)
		usleep(10000);
	MPI_Barrier(c);
	MPI_Comm_free(&c);
	MPI_Group_free(&g);
	MPI_Session_finalize(&s);
	if (rank == 0)
		printf("session_wait done\n");
	return 0;
}
