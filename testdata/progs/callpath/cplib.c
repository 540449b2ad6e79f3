/* cplib.c: the shared library of calltree.c (libcplib.so). */
#include <mpi.h>

volatile int cp_lib_sink;

__attribute__((noinline)) void cp_lib_bcast(int *v)
{
	MPI_Bcast(v, 1, MPI_INT, 0, MPI_COMM_WORLD);
	cp_lib_sink++;
}
