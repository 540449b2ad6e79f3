/*
 * ends.c: one MPI program, several ways to end (mpiscope's crash-safety
 * tests, internal/mpitest/safety_test.go). Usage: ends MODE DIR
 *
 * Every mode first makes, on every rank, exactly 3 MPI_Barrier and 2
 * MPI_Allreduce (one int each) on MPI_COMM_WORLD, then writes DIR/pid.<rank>
 * (its process id) and:
 *   abort   the last rank calls MPI_Abort(MPI_COMM_WORLD, 3); the others
 *           wait in MPI_Recv for a message that never comes.
 *   exit    every rank calls exit(0) without MPI_Finalize.
 *   wait    rank 0 waits in MPI_Recv (tag 7) from rank 1; the others wait
 *           (outside MPI) for the file DIR/go, then rank 1 sends rank 0 one
 *           int; everyone makes one more MPI_Barrier and finalizes.
 *   chain   like wait, but a SIGTERM handler installed before MPI_Init
 *           (it only sets a flag) also ends the wait for DIR/go.
 *   usr1    like wait, with the application's own SIGUSR1 handler
 *           installed before MPI_Init (it counts the signals).
 * Rank 0 prints one line at the end (wait, chain, usr1).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got_term, got_usr1;

static void on_term(int sig) { (void)sig; got_term = 1; }
static void on_usr1(int sig) { (void)sig; got_usr1++; }

static void write_pid(const char *dir, int rank)
{
	char path[4096], tmp[4096];
	snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
	snprintf(tmp, sizeof tmp, "%s/.pid.%d", dir, rank);
	FILE *f = fopen(tmp, "w");
	if (f == NULL) {
		perror(tmp);
		return;
	}
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	rename(tmp, path); /* appears complete */
}

/* wait_go waits (outside MPI) up to 60 s for DIR/go or a SIGTERM flag. */
static void wait_go(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/go", dir);
	for (int i = 0; i < 6000 && !got_term; i++) {
		if (access(path, F_OK) == 0)
			return;
		usleep(10000);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: ends abort|exit|wait|chain|usr1 DIR\n");
		return 2;
	}
	const char *mode = argv[1], *dir = argv[2];
	if (strcmp(mode, "chain") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, NULL);
	}
	if (strcmp(mode, "usr1") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_usr1;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGUSR1, &sa, NULL);
	}
	MPI_Init(&argc, &argv);
	int rank, size, one = 1, sum = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < 3; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < 2; i++)
		MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	write_pid(dir, rank);
	int x = 0;
	if (strcmp(mode, "abort") == 0) {
		if (rank == size - 1)
			MPI_Abort(MPI_COMM_WORLD, 3);
		MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return 1;
	}
	if (strcmp(mode, "exit") == 0)
		exit(0);
	if (rank == 0) {
		MPI_Recv(&x, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	} else {
		wait_go(dir);
		if (rank == 1) {
			x = 42;
			MPI_Send(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ends %s: %d ranks, sum %d, got %d, usr1 %d\n", mode, size, sum, x, (int)got_usr1);
	MPI_Finalize();
	return 0;
}
