/*
 * pass.c: a pass-through PMPI tool (each wrapper only calls PMPI_), for
 * measuring what a level of the stack costs (docs/stacking.md, "Cost").
 */
#include <mpi.h>

int MPI_Comm_rank(MPI_Comm c, int *r) { return PMPI_Comm_rank(c, r); }
int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) { return PMPI_Send(b, n, t, d, tag, c); }
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st) { return PMPI_Recv(b, n, t, s, tag, c, st); }
