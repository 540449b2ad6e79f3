// bind_cxx.cpp: bind.c with Open MPI's C++ bindings (MPI::, libmpi_cxx),
// which are layered on the C MPI_ functions. Same calls, counts, types and
// peers as bind.c.
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
	MPI::Init(argc, argv);
	int rank = MPI::COMM_WORLD.Get_rank();
	(void)MPI::COMM_WORLD.Get_size();
	MPI::Pcontrol(0);
	MPI::COMM_WORLD.Barrier();
	MPI::Pcontrol(1);
	double x = 0, sum = 0;
	for (int i = 0; i < 1000; i++) {
		if (rank == 0) {
			x = i;
			MPI::COMM_WORLD.Send(&x, 1, MPI::DOUBLE, 1, 7); // SEND-LINE
		} else if (rank == 1) {
			MPI::COMM_WORLD.Recv(&x, 1, MPI::DOUBLE, 0, 7);
			sum += x;
		}
	}
	MPI::COMM_WORLD.Barrier();
	int v[4];
	for (int i = 0; i < 4; i++)
		v[i] = rank + i;
	MPI::COMM_WORLD.Allreduce(MPI::IN_PLACE, v, 4, MPI::INT, MPI::SUM);
	MPI::Request req[4];
	MPI::Status st[4];
	double out[2], in[2];
	int other = 1 - rank;
	for (int i = 0; i < 2; i++) {
		out[i] = 10 * rank + i;
		req[i] = MPI::COMM_WORLD.Irecv(&in[i], 1, MPI::DOUBLE, other, 20 + i);
		req[2 + i] = MPI::COMM_WORLD.Isend(&out[i], 1, MPI::DOUBLE, other, 20 + i);
	}
	MPI::Request::Waitall(4, req, st);
	int b[10];
	for (int i = 0; i < 10; i++)
		b[i] = rank == 0 ? i * i : -1;
	MPI::COMM_WORLD.Bcast(b, 10, MPI::INT, 0);
	std::printf("rank %d: sum %.0f v %d %d %d %d in %.0f %.0f src %d tag %d b9 %d\n", rank, sum, v[0], v[1], v[2], v[3],
		    in[0], in[1], st[0].Get_source(), st[1].Get_tag(), b[9]);
	MPI::Finalize();
	return 0;
}
