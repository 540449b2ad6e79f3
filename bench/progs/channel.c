/*
 * channel.c: the piggyback channel's benchmarks (runbench's channel
 * section), on 2 ranks.
 *
 *   channel pingpong N   ping-pong of 8 B to 1 MiB (MPI_BYTE), then an 8-byte
 *                        MPI_Allreduce loop: BENCH lines, ns per message
 *                        (a round trip is two messages; an allreduce
 *                        counts as one message per rank);
 *   channel stage N      no library: PMPI-level cost of the two ways the
 *                        header can travel with a small contiguous
 *                        message, per round trip: dtype_<size> (a cached
 *                        struct datatype [header, user buffer] from
 *                        MPI_BOTTOM, as the channel does) and
 *                        stage_<size> (header and data copied into one
 *                        staging buffer sent as MPI_PACKED), besides
 *                        plain_<size> (the message without header).
 */
#define BENCH_REPS 7
#include "bench.h"
#include <string.h>

#define HDR 24

static char buf[1 << 20], stage[(1 << 20) + HDR];
static char hdr[HDR];

static void pingpong(int rank, long n)
{
	const int sizes[] = {8, 64, 256, 1024, 16384, 65536, 1 << 20};
	for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int len = sizes[k];
		long it = len >= 65536 ? n / 20 + 1 : n;
		double best = 1e30;
		for (int rep = 0; rep < BENCH_REPS; rep++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = bench_now();
			for (long i = 0; i < it; i++) {
				if (rank == 0) {
					MPI_Send(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
					MPI_Recv(buf, len, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(buf, len, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
				}
			}
			double t = (bench_now() - t0) / it / 2;
			if (t < best)
				best = t;
		}
		char name[32];
		snprintf(name, sizeof name, "pingpong_%d", len);
		bench_report(rank, name, best, 1);
	}
	double best = 1e30;
	for (int rep = 0; rep < BENCH_REPS; rep++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = bench_now();
		for (long i = 0; i < n; i++) {
			double x = i, y;
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		}
		double t = (bench_now() - t0) / n;
		if (t < best)
			best = t;
	}
	bench_report(rank, "allreduce_8", best, 1);
}

/* One round trip of len bytes, three ways, at the PMPI level. */
static void stagebench(int rank, long n)
{
	const int sizes[] = {8, 64, 256, 1024, 4096, 16384};
	const int peer = 1 - rank;
	for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int len = sizes[k];
		MPI_Datatype dt;
		MPI_Aint a[2];
		int bl[2] = {HDR, len};
		MPI_Datatype ts[2] = {MPI_BYTE, MPI_BYTE};
		PMPI_Get_address(hdr, &a[0]);
		PMPI_Get_address(buf, &a[1]);
		PMPI_Type_create_struct(2, bl, a, ts, &dt);
		PMPI_Type_commit(&dt);
		double best[3] = {1e30, 1e30, 1e30};
		for (int rep = 0; rep < BENCH_REPS; rep++) {
			for (int way = 0; way < 3; way++) {
				PMPI_Barrier(MPI_COMM_WORLD);
				double t0 = bench_now();
				for (long i = 0; i < n; i++) {
					for (int turn = 0; turn < 2; turn++) {
						if (turn == rank) {
							if (way == 0) {
								PMPI_Send(buf, len, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
							} else if (way == 1) {
								PMPI_Send(MPI_BOTTOM, 1, dt, peer, 0, MPI_COMM_WORLD);
							} else {
								memcpy(stage, hdr, HDR);
								memcpy(stage + HDR, buf, (size_t)len);
								PMPI_Send(stage, len + HDR, MPI_PACKED, peer, 0, MPI_COMM_WORLD);
							}
						} else {
							/* The receiver uses the datatype in both
							 * ways with a header: it must land in the
							 * user's buffer. */
							if (way == 0)
								PMPI_Recv(buf, len, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
							else
								PMPI_Recv(MPI_BOTTOM, 1, dt, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
						}
					}
				}
				double t = (bench_now() - t0) / n / 2;
				if (t < best[way])
					best[way] = t;
			}
		}
		PMPI_Type_free(&dt);
		const char *names[3] = {"plain", "dtype", "stage"};
		for (int way = 0; way < 3; way++) {
			char name[32];
			snprintf(name, sizeof name, "%s_%d", names[way], len);
			bench_report(rank, name, best[way], 1);
		}
	}
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || argc < 2) {
		if (rank == 0)
			fprintf(stderr, "channel: pingpong|stage [N], on exactly 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	long n = argc > 2 ? atol(argv[2]) : 20000;
	if (strcmp(argv[1], "stage") == 0)
		stagebench(rank, n);
	else
		pingpong(rank, n);
	MPI_Finalize();
	return 0;
}
