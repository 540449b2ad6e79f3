/*
 * refwrap.c: the reference wrapper of the benchmark (runbench's refwrap
 * and stack configurations): a minimal PMPI tool that times each call of
 * the functions the benchmark programs make with two
 * clock_gettime(CLOCK_MONOTONIC) reads and adds it to one counter record
 * per function (calls and nanoseconds): what a plain timing wrapper
 * costs, to compare mpiscope's profile mode with. Built as a shared
 * library (mpicc -O2 -shared -fPIC); preloaded alone, or stacked below
 * mpiscope (MPISCOPE_STACK) as an unmodified PMPI tool.
 *
 * REFWRAP=off at start: every wrapper only calls its PMPI_ function (a
 * level that is off). At MPI_Finalize rank 0 prints
 *   REFWRAP <name> <calls counted>
 * on stderr, so that a run shows the level was there and saw its calls
 * (REFWRAP_NAME, set when compiled, tells two builds apart).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef REFWRAP_NAME
#define REFWRAP_NAME "refwrap"
#endif

enum { F_SEND, F_RECV, F_ISEND, F_IRECV, F_WAITALL, F_ALLREDUCE, F_COMM_RANK, F_IPROBE, F_TEST, F_BARRIER, F_N };
static struct { uint64_t calls, ns; } ref_count[F_N];
static int ref_off;

static inline uint64_t ref_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* REF(f, ret, name, params, args): MPI_name, which only calls PMPI_name
 * when off (a tail call, no frame), else ref_name, which times and counts
 * the call. */
#define REF(f, name, params, args)                                        \
	static __attribute__((noinline)) int ref_##name params            \
	{                                                                 \
		uint64_t t0_ = ref_now();                                 \
		int rc_ = PMPI_##name args;                               \
		ref_count[f].ns += ref_now() - t0_;                       \
		ref_count[f].calls++;                                     \
		return rc_;                                               \
	}                                                                 \
	int MPI_##name params                                             \
	{                                                                 \
		if (__builtin_expect(ref_off, 0))                         \
			return PMPI_##name args;                          \
		return ref_##name args;                                   \
	}

static void ref_start(void)
{
	const char *e = getenv("REFWRAP");
	ref_off = e != NULL && strcmp(e, "off") == 0;
}

int MPI_Init(int *argc, char ***argv)
{
	ref_start();
	return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int req, int *prov)
{
	ref_start();
	return PMPI_Init_thread(argc, argv, req, prov);
}

int MPI_Finalize(void)
{
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	uint64_t n = 0;
	for (int i = 0; i < F_N; i++)
		n += ref_count[i].calls;
	if (rank == 0)
		fprintf(stderr, "REFWRAP %s %llu\n", REFWRAP_NAME, (unsigned long long)n);
	return PMPI_Finalize();
}

REF(F_SEND, Send, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m), (b, c, d, p, t, m))
REF(F_RECV, Recv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Status *s), (b, c, d, p, t, m, s))
REF(F_ISEND, Isend, (const void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r), (b, c, d, p, t, m, r))
REF(F_IRECV, Irecv, (void *b, int c, MPI_Datatype d, int p, int t, MPI_Comm m, MPI_Request *r), (b, c, d, p, t, m, r))
REF(F_WAITALL, Waitall, (int n, MPI_Request *r, MPI_Status *s), (n, r, s))
REF(F_ALLREDUCE, Allreduce, (const void *a, void *b, int c, MPI_Datatype d, MPI_Op o, MPI_Comm m), (a, b, c, d, o, m))
REF(F_COMM_RANK, Comm_rank, (MPI_Comm m, int *r), (m, r))
REF(F_IPROBE, Iprobe, (int p, int t, MPI_Comm m, int *f, MPI_Status *s), (p, t, m, f, s))
REF(F_TEST, Test, (MPI_Request *r, int *f, MPI_Status *s), (r, f, s))
REF(F_BARRIER, Barrier, (MPI_Comm m), (m))
