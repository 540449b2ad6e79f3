//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * compensate.c: overhead compensation and the testing-only busy delay
 * (compensate.h). Cold, except ms_comp_enter, which runs in every
 * recorded call while one of them is on.
 */
#include "api.h"
#include "compensate.h"
#include "piggyback.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

int ms_comp_active; /* (ms_comp_on, ms.h, is defined in core.c) */
double ms_comp_out_ns, ms_comp_in_ns, ms_comp_coll_ns;
static uint64_t ms_comp_busy_ns; /* MPISCOPE_TEST_DELAY_NS on this rank, 0 none */

/* Totals since the start or the last reset (Pcontrol(3)), read by Go. */
int64_t ms_comp_sub[MS_MAXFUNCS]; /* ns subtracted from each function's MPI time */
uint64_t ms_comp_calls;           /* calls that paid ms_comp_out_ns */
double ms_comp_d0;                /* ms_pb_delay at the start or the reset */
uint32_t ms_comp_epoch;           /* the reset epoch these totals belong to */
double ms_comp_samples[3];        /* calibration medians, ns: PMPI_Sendrecv, our handler, the wrapper */

extern MPI_Comm ms_priv; /* priv.c */
int ms_pb_MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, int rcount,
		       MPI_Datatype rdt, int src, int rtag, MPI_Comm comm, MPI_Status *st, unsigned fn, void *pc);
MS_HIDDEN void ms_pb_wclear(void);
MS_HIDDEN void ms_thread_clear(ms_thread *t);

/* ms_comp_setup (Go, at MPI_Init, before ms_comp_start): comp: every rank
 * agreed on compensation; busy_ns: the test delay on this rank. */
void ms_comp_setup(int comp, int64_t busy_ns)
{
	ms_comp_active = comp;
	ms_comp_busy_ns = busy_ns > 0 ? (uint64_t)busy_ns : 0;
}

static void ms_comp_reset(void)
{
	memset(ms_comp_sub, 0, sizeof ms_comp_sub);
	ms_comp_calls = 0;
	ms_comp_d0 = ms_pb_delay;
	ms_comp_epoch = MS_EPOCH();
}

void ms_comp_enter(void)
{
	if (ms_comp_busy_ns) {
		/* The rank is held for the time set, reading the clock; it
		 * yields the core between reads, so that on a node with more
		 * ranks than cores the delay holds this rank, not the others
		 * (it stands for a tool's time, not for its use of the CPU). */
		const uint64_t t0 = ms_mono_ns();
		while (ms_mono_ns() - t0 < ms_comp_busy_ns)
			sched_yield();
	}
	if (ms_comp_active) {
		if (__builtin_expect(ms_comp_epoch != MS_EPOCH(), 0))
			ms_comp_reset(); /* Pcontrol(3) since the last call */
		ms_pb_delay += ms_comp_out_ns;
		__atomic_add_fetch(&ms_comp_calls, 1, __ATOMIC_RELAXED);
	}
}

void ms_comp_add(unsigned fn, void *pc, double dd)
{
	ms_pb_delay += dd;
	if (pc != NULL && fn < MS_MAXFUNCS)
		__atomic_add_fetch(&ms_comp_sub[fn], (int64_t)(dd >= 0 ? dd + 0.5 : dd - 0.5), __ATOMIC_RELAXED);
}

double ms_comp_recv(int64_t t, double sd, int64_t te, unsigned fn, void *pc)
{
	/* Measured wait w = max(0, t - te); uninstrumented, the receive was
	 * entered at te - d and the send at t - sd: w0 = max(0, (t - sd) -
	 * (te - d)). The receive ends w - w0 later than it would have
	 * (earlier when negative): that is the change of the delay. */
	const double w = t > te ? (double)(t - te) : 0;
	double w0 = ((double)t - sd) - ((double)te - ms_pb_delay);
	if (w0 < 0)
		w0 = 0;
	ms_comp_add(fn, pc, w - w0 + ms_comp_in_ns);
	return w0;
}

/* ms_comp_read: for Go (compensate.go, compFields) the calibrated costs,
 * the delay since the start or reset, the calls, whether the totals are
 * of the current epoch, and the calibration's medians. */
void ms_comp_read(double *v)
{
	v[0] = ms_comp_out_ns;
	v[1] = ms_comp_in_ns;
	v[2] = ms_comp_coll_ns;
	v[3] = ms_pb_delay - ms_comp_d0;
	v[4] = (double)ms_comp_calls;
	v[5] = ms_comp_epoch == MS_EPOCH();
	v[6] = ms_comp_samples[0];
	v[7] = ms_comp_samples[1];
	v[8] = ms_comp_samples[2];
}

/* ---- calibration ---- */

static int ms_comp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double ms_comp_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, ms_comp_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MS_COMP_MAXN 2001
#define MS_COMP_MINN 31
#define MS_COMP_BUDGET_NS 60000000ull /* the point-to-point samples take at most this long, beyond MS_COMP_MINN */
#define MS_COMP_COLLN 31
#define MS_COMP_TAG 32766

static double ms_comp_tp[MS_COMP_MAXN], ms_comp_th[MS_COMP_MAXN], ms_comp_tw[MS_COMP_MAXN];

/* ms_comp_start, at MPI_Init once the clock is chosen and before the gate
 * opens (lifecycle.c): turns the hook on, and with compensation on,
 * calibrates (every rank: one collective part). The cost of a wrapper is
 * the median, over interleaved samples, of an 8-byte MPI_Sendrecv to
 * this rank through the wrapper minus the same through our handler
 * (the header's part inside the call, ms_comp_in_ns: the handler minus
 * PMPI_Sendrecv, halved: two sides), the busy delay included. The
 * calibration's own records are then cleared. */
void ms_comp_start(void)
{
	if (!ms_comp_active && !ms_comp_busy_ns)
		return;
	ms_comp_on = 1;
	ms_gate_set(MS_G_NOTSC, 1); /* every wrapper takes its slow path (ms_enter) */
	if (!ms_comp_active || ms_priv == MPI_COMM_NULL)
		return;
	const uint32_t was = MS_LOAD(ms_gate) & MS_G_OFF;
	ms_gate_set(MS_G_OFF, 0);
	char sb[8] = {0}, rb[8];
	int me = ms_world_rank, n = 0;
	const uint64_t start = ms_mono_ns();
	for (; n < MS_COMP_MAXN && (n < MS_COMP_MINN || ms_mono_ns() - start < MS_COMP_BUDGET_NS); n++) {
		uint64_t a = ms_mono_ns();
		PMPI_Sendrecv(sb, 8, MPI_BYTE, me, MS_COMP_TAG, rb, 8, MPI_BYTE, me, MS_COMP_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		uint64_t b = ms_mono_ns();
		ms_pb_MPI_Sendrecv(sb, 8, MPI_BYTE, me, MS_COMP_TAG, rb, 8, MPI_BYTE, me, MS_COMP_TAG, MPI_COMM_WORLD,
				   MPI_STATUS_IGNORE, 0, NULL);
		uint64_t c = ms_mono_ns();
		MPI_Sendrecv(sb, 8, MPI_BYTE, me, MS_COMP_TAG, rb, 8, MPI_BYTE, me, MS_COMP_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		uint64_t d = ms_mono_ns();
		ms_comp_tp[n] = (double)(b - a);
		ms_comp_th[n] = (double)(c - b);
		ms_comp_tw[n] = (double)(d - c);
	}
	const double tp = ms_comp_median(ms_comp_tp, n), th = ms_comp_median(ms_comp_th, n), tw = ms_comp_median(ms_comp_tw, n);
	ms_comp_samples[0] = tp;
	ms_comp_samples[1] = th;
	ms_comp_samples[2] = tw;
	ms_comp_in_ns = th > tp ? (th - tp) / 2 : 0;
	ms_comp_out_ns = tw > th ? tw - th : 0;
	/* The extra reduction before a collective: the same as ms_pb_coll's,
	 * on our communicator, after a barrier (every rank makes the same
	 * number of calls). */
	struct { double t; int r; } in[4] = {{0, me}, {0, me}, {0, me}, {0, me}}, out[4];
	PMPI_Barrier(ms_priv);
	for (int i = 0; i < MS_COMP_COLLN; i++) {
		uint64_t a = ms_mono_ns();
		PMPI_Allreduce(in, out, 4, MPI_DOUBLE_INT, MPI_MAXLOC, ms_priv);
		ms_comp_tp[i] = (double)(ms_mono_ns() - a);
	}
	ms_comp_coll_ns = ms_comp_median(ms_comp_tp, MS_COMP_COLLN);
	ms_gate_set(MS_G_OFF, was != 0);
	if (ms_tls != NULL)
		ms_thread_clear(ms_tls);
	ms_pb_wclear();
	ms_pb_delay = 0;
	ms_comp_reset();
}
