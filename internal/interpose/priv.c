//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * priv.c: mpiscope's own MPI traffic, on ms_priv (a duplicate of
 * MPI_COMM_WORLD made at MPI_Init, freed at MPI_Finalize: lifecycle.c)
 * and always through PMPI_ directly, never recorded: the collectives Go
 * uses to merge the profile and the trace, and the clock synchronization
 * of traces with rank 0.
 */
#define _GNU_SOURCE
#include "api.h"
#include "lifecycle.h"

#include <stdlib.h>
#include <time.h>

MPI_Comm ms_priv = MPI_COMM_NULL; /* our own duplicate of MPI_COMM_WORLD */

/* ---- for Go: collectives (api.h) ---- */

int ms_priv_bcast(void *buf, int len, int root)
{
	return PMPI_Bcast(buf, len, MPI_BYTE, root, ms_priv);
}

#define MS_CHUNK (1 << 30)

int ms_priv_send(const void *buf, int64_t len, int dest)
{
	int rc = PMPI_Send(&len, 1, MPI_INT64_T, dest, 1, ms_priv);
	for (int64_t off = 0; rc == MPI_SUCCESS && off < len; off += MS_CHUNK) {
		int n = (int)(len - off < MS_CHUNK ? len - off : MS_CHUNK);
		rc = PMPI_Send((const char *)buf + off, n, MPI_BYTE, dest, 2, ms_priv);
	}
	return rc;
}

/* ms_priv_recv returns a malloc'd buffer (freed by the caller) and its length. */
void *ms_priv_recv(int src, int64_t *len)
{
	*len = 0;
	if (PMPI_Recv(len, 1, MPI_INT64_T, src, 1, ms_priv, MPI_STATUS_IGNORE) != MPI_SUCCESS || *len < 0)
		return NULL;
	char *buf = malloc(*len > 0 ? (size_t)*len : 1);
	if (buf == NULL) {
		/* Still take the messages off the wire, chunk by chunk. */
		char scratch[4096];
		for (int64_t off = 0; off < *len; off += MS_CHUNK) {
			MPI_Status st;
			PMPI_Probe(src, 2, ms_priv, &st);
			int n = 0;
			PMPI_Get_count(&st, MPI_BYTE, &n);
			char *tmp = malloc((size_t)n);
			PMPI_Recv(tmp ? tmp : scratch, tmp ? n : 0, MPI_BYTE, src, 2, ms_priv, MPI_STATUS_IGNORE);
			free(tmp);
		}
		return NULL;
	}
	for (int64_t off = 0; off < *len; off += MS_CHUNK) {
		int n = (int)(*len - off < MS_CHUNK ? *len - off : MS_CHUNK);
		PMPI_Recv(buf + off, n, MPI_BYTE, src, 2, ms_priv, MPI_STATUS_IGNORE);
	}
	return buf;
}

int ms_priv_barrier(void) { return PMPI_Barrier(ms_priv); }

/* ms_priv_agree: for each of n flags (n <= 8), whether every rank's
 * want[i] is nonzero (all[i]) and whether some rank's is (any[i]), in one
 * allreduce on our communicator. Without it (no communicator, or the
 * allreduce failed) every all[i] and any[i] is 0 and it returns 0. */
int ms_priv_agree(int n, const int *want, int *all, int *any)
{
	int in[16], out[16];
	if (n < 0 || n > 8)
		return 0;
	for (int i = 0; i < n; i++) {
		in[2 * i] = want[i] ? 1 : 0;     /* min: 1 when every rank wants it */
		in[2 * i + 1] = want[i] ? 0 : 1; /* min: 0 when some rank wants it */
		all[i] = any[i] = 0;
	}
	if (ms_priv == MPI_COMM_NULL || PMPI_Allreduce(in, out, 2 * n, MPI_INT, MPI_MIN, ms_priv) != MPI_SUCCESS)
		return 0;
	for (int i = 0; i < n; i++) {
		all[i] = out[2 * i];
		any[i] = out[2 * i + 1] == 0;
	}
	return 1;
}

/* ms_trace_any tells whether mine is nonzero on any rank (whether any rank
 * has a trace to convert). */
int ms_trace_any(int mine)
{
	int any = 0;
	if (PMPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, ms_priv) != MPI_SUCCESS)
		return 0;
	return any;
}

/* Clock samples (ms_trace_sync): messages on ms_priv. */
#define MS_SYNC_PING 91 /* child to parent: u64 its clock, u64 1 = stop */
#define MS_SYNC_PONG 92 /* parent to child: u64 its clock */
#define MS_SYNC_GO 93   /* parent to child: its turn */
#define MS_SYNC_OFF 94  /* parent to child: i64 its offset to rank 0, i64 uncertainty (ns) */
#define MS_SYNC_SPIN_NS 100000

int ms_trace_sync_pings; /* pings this rank answered in its last ms_trace_sync */

/* ms_sync_recv receives one message of the clock ping-pong: it polls
 * without pause for up to 100 us (an answer that comes at once is read at
 * once: the timing of a round depends on it), then with 10 us sleeps in
 * between, leaving the CPU to the ranks that measure when the node has
 * more ranks than cores (a rank waiting for its turn, a partner that was
 * descheduled). */
static int ms_sync_recv(void *buf, int n, MPI_Datatype dt, int src, int tag)
{
	MPI_Request rq;
	if (PMPI_Irecv(buf, n, dt, src, tag, ms_priv, &rq) != MPI_SUCCESS)
		return -1;
	uint64_t t0 = ms_mono_ns();
	for (;;) {
		int done = 0;
		if (PMPI_Test(&rq, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (done)
			return 0;
		if (ms_mono_ns() - t0 > MS_SYNC_SPIN_NS) {
			struct timespec ts = {0, 10000};
			nanosleep(&ts, NULL);
		}
	}
}

static inline uint64_t ms_sync_now(void) { return ms_mono_ns() + (uint64_t)ms_trace_skew; }

/* ms_sync_child measures this rank's clock against its parent's and
 * composes the result with the parent's offset to rank 0. Each round
 * (a ping at local time a, the parent's clock b, the answer at c) bounds
 * the offset: b - c <= offset <= b - a. The bounds of all rounds are
 * intersected: the estimate is the middle of the interval, its width the
 * uncertainty (a round trip's worth: one round gives width c - a). The
 * rank makes at least rounds rounds and stops once the width is at most
 * good_ns or has not shrunk by an eighth in rounds rounds, after maxr at
 * most. Should the intervals not meet (clocks that moved apart during the
 * measurement), the quickest round is kept, as before. */
static int ms_sync_child(int parent, int rounds, int maxr, uint64_t good_ns, uint64_t *local, int64_t *offset,
			 uint64_t *width)
{
	uint64_t go = 0;
	if (ms_sync_recv(&go, 1, MPI_UINT64_T, parent, MS_SYNC_GO) != 0)
		return -1;
	int64_t lo = INT64_MIN, hi = INT64_MAX, obest = 0;
	uint64_t best = UINT64_MAX, lbest = 0, wlast = UINT64_MAX;
	int stale = 0;
	for (int k = 0; k < maxr; k++) {
		uint64_t a[2] = {ms_sync_now(), 0}, b = 0;
		if (PMPI_Send(a, 2, MPI_UINT64_T, parent, MS_SYNC_PING, ms_priv) != MPI_SUCCESS ||
		    ms_sync_recv(&b, 1, MPI_UINT64_T, parent, MS_SYNC_PONG) != 0)
			return -1;
		uint64_t c = ms_sync_now();
		int64_t l = (int64_t)(b - c), h = (int64_t)(b - a[0]);
		if (l > lo)
			lo = l;
		if (h < hi)
			hi = h;
		if (c - a[0] < best) {
			best = c - a[0];
			lbest = a[0] + best / 2;
			obest = (int64_t)(b - lbest);
		}
		uint64_t w = lo <= hi ? (uint64_t)(hi - lo) : best;
		if (wlast == UINT64_MAX || w < wlast - wlast / 8) {
			stale = 0;
			wlast = w;
		} else {
			stale++;
		}
		if (k + 1 >= rounds && (w <= good_ns || stale >= rounds))
			break;
	}
	uint64_t stop[2] = {0, 1};
	int64_t up[2] = {0, 0};
	if (PMPI_Send(stop, 2, MPI_UINT64_T, parent, MS_SYNC_PING, ms_priv) != MPI_SUCCESS ||
	    ms_sync_recv(up, 2, MPI_INT64_T, parent, MS_SYNC_OFF) != 0)
		return -1;
	*local = lbest;
	if (lo <= hi) {
		*offset = lo + (hi - lo) / 2 + up[0];
		*width = (uint64_t)(hi - lo) + (uint64_t)up[1];
	} else {
		*offset = obest + up[0];
		*width = best + (uint64_t)up[1];
	}
	return 0;
}

/* ms_sync_serve answers child's pings until its stop, then sends it this
 * rank's offset to rank 0 and its uncertainty. */
static int ms_sync_serve(int child, int64_t offset, uint64_t width)
{
	uint64_t go = 0;
	if (PMPI_Send(&go, 1, MPI_UINT64_T, child, MS_SYNC_GO, ms_priv) != MPI_SUCCESS)
		return -1;
	for (;;) {
		uint64_t x[2];
		if (ms_sync_recv(x, 2, MPI_UINT64_T, child, MS_SYNC_PING) != 0)
			return -1;
		if (x[1])
			break;
		ms_trace_sync_pings++;
		x[0] = ms_sync_now();
		if (PMPI_Send(x, 1, MPI_UINT64_T, child, MS_SYNC_PONG, ms_priv) != MPI_SUCCESS)
			return -1;
	}
	int64_t up[2] = {offset, (int64_t)width};
	return PMPI_Send(up, 2, MPI_INT64_T, child, MS_SYNC_OFF, ms_priv) == MPI_SUCCESS ? 0 : -1;
}

/* ms_trace_sync measures this rank's clock offset to rank 0's over a
 * binomial tree, all pairs of a step at once: in step j, each rank r with
 * 2^j <= r < 2^(j+1) measures against r - 2^j, which measured in an
 * earlier step (rank 0 is the reference), and adds that rank's offset. So
 * a sync takes ceil(log2 P) steps of a few rounds, not P - 1 ranks one
 * after the other, and the uncertainty (the width returned in rtt, which
 * plays a round trip's part) sums the widths along the rank's path to
 * rank 0. All ranks must call it. */
int ms_trace_sync(int rounds, int maxr, uint64_t good_ns, uint64_t *local, int64_t *offset, uint64_t *rtt)
{
	int rank = 0, size = 1;
	PMPI_Comm_rank(ms_priv, &rank);
	PMPI_Comm_size(ms_priv, &size);
	*offset = 0;
	*rtt = 0;
	*local = ms_sync_now();
	ms_trace_sync_pings = 0;
	int d = 1;
	if (rank > 0) {
		int top = 1;
		while (top <= rank / 2)
			top <<= 1;
		if (ms_sync_child(rank - top, rounds, maxr, good_ns, local, offset, rtt) != 0)
			return -1;
		d = top << 1;
	}
	for (; d < size && rank + d < size; d <<= 1)
		if (ms_sync_serve(rank + d, *offset, *rtt) != 0)
			return -1;
	return 0;
}
