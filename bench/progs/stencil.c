/*
 * stencil.c: a 2D Jacobi solver shaped like an application, for the
 * analysis in the job (runbench -only analyzejob), where scale.c does
 * nothing but MPI calls. The ranks form a non-periodic 2D Cartesian grid
 * (MPI_Dims_create, MPI_Cart_create); each holds a side x side block of
 * the global grid (Laplace's equation, the global top edge held at 1).
 * Per iteration every rank
 *   - exchanges its block's edges with its neighbours (no message to
 *     MPI_PROC_NULL: 1 to 4 neighbours): one MPI_Irecv and one MPI_Isend
 *     per neighbour, rows sent in place, columns packed, one MPI_Waitall;
 *   - computes the Jacobi update of its block (5-point stencil) and the
 *     sum of the squared changes;
 *   - every `check` iterations, MPI_Allreduce of that sum (the residual).
 * Before the loop rank 0 broadcasts the parameters (MPI_Bcast) and all
 * ranks meet in an MPI_Barrier; after it an MPI_Reduce gathers the ranks'
 * timings and an MPI_Barrier precedes MPI_Finalize. So per rank, with n
 * neighbours, N iterations and the residual every C:
 *   MPI_Irecv n*N, MPI_Isend n*N (side doubles each), MPI_Waitall N,
 *   MPI_Allreduce floor(N/C), MPI_Bcast 1, MPI_Reduce 1, MPI_Barrier 2.
 *
 * Usage: stencil [iterations [side [check]]] (defaults 500, 128, 10).
 * Rank 0 prints
 *   STENCIL <ranks> <px> <py> <side> <iterations> <compute CPU us> <compute us> <iteration us> <residual>
 * (the computation's thread CPU time and wall time per iteration, the
 * largest over the ranks; the loop's wall time per iteration on rank 0;
 * the last residual: the sum over the grid of the squared changes),
 * and, as scale.c, the wall time of MPI_Finalize:
 *   FINALIZE <ranks> <ms>
 */
#include "bench.h"

#include <string.h>

static double thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	/* Rank 0 reads the parameters and broadcasts them, as a code reads
	 * its input file. */
	long par[3] = {bench_iters(argc, argv, 500), argc > 2 ? atol(argv[2]) : 128, argc > 3 ? atol(argv[3]) : 10};
	MPI_Bcast(par, 3, MPI_LONG, 0, MPI_COMM_WORLD);
	long iters = par[0], check = par[2];
	int n = (int)par[1];
	if (n < 2 || n > 8192 || check < 1) {
		if (rank == 0)
			fprintf(stderr, "stencil: side %d (2 to 8192), check %ld (at least 1)\n", n, check);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
	MPI_Dims_create(size, 2, dims);
	MPI_Comm cart;
	MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
	MPI_Cart_coords(cart, rank, 2, coords);
	int north, south, west, east;
	MPI_Cart_shift(cart, 0, 1, &north, &south);
	MPI_Cart_shift(cart, 1, 1, &west, &east);

	/* The block with a halo of one point: (n + 2) x (n + 2), row-major. */
	size_t w = (size_t)n + 2;
	double *u = calloc(w * w, sizeof *u), *v = calloc(w * w, sizeof *v);
	double *col = malloc(4 * (size_t)n * sizeof *col); /* west out, east out, west in, east in */
	if (!u || !v || !col) {
		fprintf(stderr, "stencil: out of memory (side %d)\n", n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (coords[0] == 0) /* the global top edge */
		for (size_t j = 0; j < w; j++)
			u[j] = v[j] = 1.0;
	double *wout = col, *eout = col + n, *win = col + 2 * n, *ein = col + 3 * n;

	MPI_Barrier(MPI_COMM_WORLD);
	double cpu = 0, comp = 0, res = 0;
	double t0 = bench_now();
	for (long it = 0; it < iters; it++) {
		MPI_Request rq[8];
		int k = 0;
		if (north != MPI_PROC_NULL)
			MPI_Irecv(&u[1], n, MPI_DOUBLE, north, 0, cart, &rq[k++]);
		if (south != MPI_PROC_NULL)
			MPI_Irecv(&u[(n + 1) * w + 1], n, MPI_DOUBLE, south, 1, cart, &rq[k++]);
		if (west != MPI_PROC_NULL)
			MPI_Irecv(win, n, MPI_DOUBLE, west, 2, cart, &rq[k++]);
		if (east != MPI_PROC_NULL)
			MPI_Irecv(ein, n, MPI_DOUBLE, east, 3, cart, &rq[k++]);
		/* Tags name the direction of travel: a row sent north arrives
		 * as its receiver's south halo (tag 1), and so on. */
		if (north != MPI_PROC_NULL)
			MPI_Isend(&u[w + 1], n, MPI_DOUBLE, north, 1, cart, &rq[k++]);
		if (south != MPI_PROC_NULL)
			MPI_Isend(&u[n * w + 1], n, MPI_DOUBLE, south, 0, cart, &rq[k++]);
		if (west != MPI_PROC_NULL) {
			for (int i = 0; i < n; i++)
				wout[i] = u[(i + 1) * w + 1];
			MPI_Isend(wout, n, MPI_DOUBLE, west, 3, cart, &rq[k++]);
		}
		if (east != MPI_PROC_NULL) {
			for (int i = 0; i < n; i++)
				eout[i] = u[(i + 1) * w + n];
			MPI_Isend(eout, n, MPI_DOUBLE, east, 2, cart, &rq[k++]);
		}
		MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);

		double c0 = thread_cpu_ns(), w0 = bench_now();
		if (west != MPI_PROC_NULL)
			for (int i = 0; i < n; i++)
				u[(i + 1) * w] = win[i];
		if (east != MPI_PROC_NULL)
			for (int i = 0; i < n; i++)
				u[(i + 1) * w + n + 1] = ein[i];
		double d2 = 0;
		for (int i = 1; i <= n; i++) {
			const double *up = &u[(i - 1) * w], *mid = &u[i * w], *dn = &u[(i + 1) * w];
			double *out = &v[i * w];
			for (int j = 1; j <= n; j++) {
				double x = 0.25 * (up[j] + dn[j] + mid[j - 1] + mid[j + 1]);
				double d = x - mid[j];
				d2 += d * d;
				out[j] = x;
			}
		}
		double *t = u;
		u = v;
		v = t;
		comp += bench_now() - w0;
		cpu += thread_cpu_ns() - c0;

		if ((it + 1) % check == 0) {
			double g;
			MPI_Allreduce(&d2, &g, 1, MPI_DOUBLE, MPI_SUM, cart);
			res = g;
		}
	}
	double t1 = bench_now();
	double mine[2] = {cpu / iters / 1e3, comp / iters / 1e3}, most[2];
	MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, cart);
	MPI_Comm_free(&cart);
	free(u);
	free(v);
	free(col);
	if (rank == 0) {
		printf("STENCIL %d %d %d %d %ld %.3f %.3f %.3f %.6e\n", size, dims[0], dims[1], n, iters, most[0], most[1],
		       (t1 - t0) / iters / 1e3, res);
		fflush(stdout);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double f0 = bench_now();
	MPI_Finalize();
	double f1 = bench_now();
	if (rank == 0) {
		printf("FINALIZE %d %.3f\n", size, (f1 - f0) / 1e6);
		fflush(stdout);
	}
	return 0;
}
