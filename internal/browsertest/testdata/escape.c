/* escape.c: region names, user event texts and (compiled from a directory
 * whose name holds them) file paths with markup, quotes and bytes that are
 * not UTF-8. The HTML report must show them as text. */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Pcontrol(4, "<script>window.pwned=1</script>\"'\xff");
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Pcontrol(5, "<img src=x onerror=\"window.pwned=2\">'\xfe");
	MPI_Pcontrol(-4);
	MPI_Finalize();
	return 0;
}
