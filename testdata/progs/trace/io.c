/*
 * io.c: MPI-IO on 2 ranks, one file opened on MPI_COMM_WORLD, every kind
 * of access. Each rank writes: MPI_File_write_at, MPI_File_write_at_all,
 * MPI_File_iwrite_at + MPI_Wait (8 doubles, 64 bytes each, at its own
 * offset), MPI_File_write_shared and MPI_File_write_ordered (2 doubles, 16
 * bytes each); then reads: MPI_File_read_at, MPI_File_read_at_all,
 * MPI_File_iread_at + MPI_Wait, MPI_File_read_all_begin/_end (64 bytes
 * each), MPI_File_read_shared and MPI_File_read_ordered (16 bytes each)
 * after MPI_File_seek_shared to 0. Per rank: 5 writes of 224 bytes in all,
 * 6 reads of 288 bytes, 3 of the 11 nonblocking or split.
 */
#include <mpi.h>

int main(int argc, char **argv)
{
	int rank;
	double buf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, in[8];
	MPI_File fh;
	MPI_Request r;
	MPI_Status st;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_File_open(MPI_COMM_WORLD, "io.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
	MPI_Offset off = rank * 3 * 64;
	MPI_File_write_at(fh, off, buf, 8, MPI_DOUBLE, &st);
	MPI_File_write_at_all(fh, off + 64, buf, 8, MPI_DOUBLE, &st);
	MPI_File_iwrite_at(fh, off + 128, buf, 8, MPI_DOUBLE, &r);
	MPI_Wait(&r, &st);
	MPI_File_write_shared(fh, buf, 2, MPI_DOUBLE, &st);
	MPI_File_write_ordered(fh, buf, 2, MPI_DOUBLE, &st);
	MPI_File_read_at(fh, off, in, 8, MPI_DOUBLE, &st);
	MPI_File_read_at_all(fh, off + 64, in, 8, MPI_DOUBLE, &st);
	MPI_File_iread_at(fh, off + 128, in, 8, MPI_DOUBLE, &r);
	MPI_Wait(&r, &st);
	MPI_File_read_all_begin(fh, in, 8, MPI_DOUBLE);
	MPI_File_read_all_end(fh, in, &st);
	MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
	MPI_File_read_shared(fh, in, 2, MPI_DOUBLE, &st);
	MPI_File_read_ordered(fh, in, 2, MPI_DOUBLE, &st);
	MPI_File_close(&fh);
	MPI_Finalize();
	return 0;
}
