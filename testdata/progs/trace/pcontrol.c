/* pcontrol.c: tracing windows (Pcontrol 6/-6), a flush (2) and markers (5);
 * run without MPISCOPE_TRACE. argv[1] is the job directory: rank 0 prints
 * its trace file's size before and after the flush. */
#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>

static long fsize(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

int main(int argc, char **argv)
{
	int rank;
	char path[4096];
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(path, sizeof path, "%s/trace/0/r0.mst", argc > 1 ? argv[1] : ".");
	MPI_Barrier(MPI_COMM_WORLD); /* not traced */
	MPI_Pcontrol(6);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(5, "in window");
	long before = fsize(path);
	MPI_Pcontrol(2);
	long after = fsize(path);
	if (rank == 0)
		printf("flush %ld %ld\n", before, after);
	MPI_Pcontrol(-6);
	MPI_Barrier(MPI_COMM_WORLD); /* not traced */
	MPI_Pcontrol(5, "outside");  /* not traced */
	MPI_Pcontrol(6);
	MPI_Allreduce(MPI_IN_PLACE, &rank, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Pcontrol(-6);
	MPI_Barrier(MPI_COMM_WORLD); /* not traced */
	MPI_Finalize();
	return 0;
}
