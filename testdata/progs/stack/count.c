/*
 * count.c: a small PMPI tool of the kind users stack below mpiscope
 * (docs/stacking.md): it counts the calls of a few MPI functions and, at
 * MPI_Finalize, writes them to $STACK_OUT/count.<rank>.txt, one
 * "MPI_X calls" line each, and the MPI_Pcontrol levels it received
 * ("pcontrol LEVEL [name]"). It calls only PMPI_. Build:
 *   mpicc -shared -fPIC -o libcount.so count.c
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

enum { F_INIT, F_INIT_THREAD, F_FINALIZE, F_COMM_RANK, F_COMM_SIZE, F_SEND, F_RECV, F_ISEND, F_IRECV, F_WAIT, F_BARRIER, F_ALLREDUCE, F_BCAST, F_PCONTROL, NF };
static const char *const names[NF] = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait", "MPI_Barrier", "MPI_Allreduce", "MPI_Bcast", "MPI_Pcontrol"};
static long counts[NF];
static char pc[4096];
static int npc;

int MPI_Init(int *argc, char ***argv) { counts[F_INIT]++; return PMPI_Init(argc, argv); }
int MPI_Init_thread(int *argc, char ***argv, int req, int *prov) { counts[F_INIT_THREAD]++; return PMPI_Init_thread(argc, argv, req, prov); }
int MPI_Comm_rank(MPI_Comm c, int *r) { counts[F_COMM_RANK]++; return PMPI_Comm_rank(c, r); }
int MPI_Comm_size(MPI_Comm c, int *s) { counts[F_COMM_SIZE]++; return PMPI_Comm_size(c, s); }
int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) { counts[F_SEND]++; return PMPI_Send(b, n, t, d, tag, c); }
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st) { counts[F_RECV]++; return PMPI_Recv(b, n, t, s, tag, c, st); }
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r) { counts[F_ISEND]++; return PMPI_Isend(b, n, t, d, tag, c, r); }
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r) { counts[F_IRECV]++; return PMPI_Irecv(b, n, t, s, tag, c, r); }
int MPI_Wait(MPI_Request *r, MPI_Status *st) { counts[F_WAIT]++; return PMPI_Wait(r, st); }
int MPI_Barrier(MPI_Comm c) { counts[F_BARRIER]++; return PMPI_Barrier(c); }
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) { counts[F_ALLREDUCE]++; return PMPI_Allreduce(s, r, n, t, op, c); }
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) { counts[F_BCAST]++; return PMPI_Bcast(b, n, t, root, c); }

/* Levels 4 and 5 carry a name (mpiscope's regions and events). */
int MPI_Pcontrol(const int level, ...)
{
	counts[F_PCONTROL]++;
	const char *name = NULL;
	if (level == 4 || level == 5) {
		va_list ap;
		va_start(ap, level);
		name = va_arg(ap, const char *);
		va_end(ap);
	}
	if (npc < (int)sizeof pc - 128)
		npc += snprintf(pc + npc, sizeof pc - npc, "pcontrol %d%s%s\n", level, name ? " " : "", name ? name : "");
	return PMPI_Pcontrol(level);
}

int MPI_Finalize(void)
{
	counts[F_FINALIZE]++;
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	const char *dir = getenv("STACK_OUT");
	char path[4096];
	snprintf(path, sizeof path, "%s/count.%d.txt", dir ? dir : ".", rank);
	FILE *f = fopen(path, "w");
	if (f != NULL) {
		for (int i = 0; i < NF; i++)
			if (counts[i])
				fprintf(f, "%s %ld\n", names[i], counts[i]);
		fputs(pc, f);
		fclose(f);
	}
	return PMPI_Finalize();
}
