//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * analyze.c: the MPI traffic of the analysis in the job (MPISCOPE_ANALYZE=1,
 * analyze.go), on ms_priv through PMPI_ directly, never recorded: the
 * all-to-all exchanges of records (in one step: each rank probes for the
 * others' messages, no counts sent first), the reductions' trees, the
 * critical path's token and the delay analysis' messages; every wait
 * polls, then sleeps (ms_an_pause).
 */
#include "api.h"
#include "lifecycle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#define MS_AN_TOKEN 95             /* the critical path's token and its end */
#define MS_AN_XCHG 97              /* the exchanges' messages (ms_an_post, ms_an_take) */
#define MS_AN_P2P 98               /* the trees' messages (ms_an_send, ms_an_probe_from) */
#define MS_AN_PIECE ((int64_t)1 << 26) /* bytes per message: more go in pieces, the last shorter */

/* The piece size in use (MS_AN_PIECE; MPISCOPE_DEBUG_ANALYZE_PIECE sets a
 * smaller one, the same on every rank, for the tests: analyze.go), and
 * the messages and pieces this rank sent (its timing line). */
int64_t ms_an_piece = MS_AN_PIECE;
int64_t ms_an_msgs, ms_an_pieces;

/* ---- waiting for the others ----
 *
 * A rank of the analysis waits for the others at every exchange; on an
 * oversubscribed node the ranks it waits for need its CPU. MPI's blocking
 * calls poll (Open MPI yields between polls, MPICH spins), and that
 * polling was most of the analysis' CPU at 8 ranks on 2 cores
 * (2026-11-28: 60 of 100 ms per rank). So every wait here polls with the
 * nonblocking call a few times, then sleeps between polls, 8 us at
 * first, twice as long each time, at most MS_AN_SLEEP_MAX: a wait is
 * overshot by at most its own length (and that bound). To measure
 * (MPISCOPE_DEBUG_ANALYZE_WAIT): ms_an_block = 1 makes them the blocking
 * calls, ms_an_sleep_max sets the bound (0: poll without sleeping). */

#define MS_AN_SLEEP_MIN 8000L     /* ns */

/* The polls before the first sleep: 32 (MPISCOPE_DEBUG_ANALYZE_POLLS,
 * analyze.go). */
int ms_an_polls = 32;
int ms_an_block;
long ms_an_sleep_max = 1000000L; /* ns */

/* With MPISCOPE_DEBUG_TIMING=1 (ms_an_timing), what the waits cost this
 * rank: the waits, the polls that found nothing, the sleeps, and the
 * process's CPU time and the wall time inside them (ns), which the timing
 * line gives per phase (analyze.go): the rank's CPU in a phase less its
 * CPU in waits is its own work. */
int ms_an_timing;
int64_t ms_an_nwaits, ms_an_npolls, ms_an_nsleeps, ms_an_wait_cpu, ms_an_wait_wall;

typedef struct {
	int polls;
	long ns;
	int64_t cpu0, wall0;
} ms_an_waiter;

static int64_t ms_an_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void ms_an_wait_begin(ms_an_waiter *w)
{
	w->polls = 0;
	w->ns = 0;
	if (ms_an_timing) {
		ms_an_nwaits++;
		w->cpu0 = ms_an_clock(CLOCK_PROCESS_CPUTIME_ID);
		w->wall0 = ms_an_clock(CLOCK_MONOTONIC);
	}
}

static void ms_an_wait_end(ms_an_waiter *w)
{
	if (ms_an_timing) {
		ms_an_wait_cpu += ms_an_clock(CLOCK_PROCESS_CPUTIME_ID) - w->cpu0;
		ms_an_wait_wall += ms_an_clock(CLOCK_MONOTONIC) - w->wall0;
	}
}

static void ms_an_pause(ms_an_waiter *w)
{
	ms_an_npolls++;
	if (w->polls < ms_an_polls || ms_an_sleep_max <= 0) {
		w->polls++;
		return;
	}
	w->ns = w->ns < MS_AN_SLEEP_MIN ? MS_AN_SLEEP_MIN : w->ns;
	w->ns = w->ns > ms_an_sleep_max ? ms_an_sleep_max : w->ns;
	struct timespec ts = {0, w->ns};
	ms_an_nsleeps++;
	nanosleep(&ts, NULL);
	w->ns *= 2;
}

/* ms_an_waitall completes n requests, one after the other (MPI_Waitall
 * and MPI_Testall with MPICH's MPI_STATUSES_IGNORE make GCC warn of an
 * array of size 0). */
static int ms_an_waitall(int n, MPI_Request *r)
{
	ms_an_waiter w;
	ms_an_wait_begin(&w);
	int rc = MPI_SUCCESS;
	for (int i = 0; i < n && rc == MPI_SUCCESS;) {
		if (ms_an_block) {
			rc = PMPI_Wait(&r[i++], MPI_STATUS_IGNORE);
			continue;
		}
		int done = 0;
		rc = PMPI_Test(&r[i], &done, MPI_STATUS_IGNORE);
		if (done)
			i++;
		else if (rc == MPI_SUCCESS)
			ms_an_pause(&w);
	}
	ms_an_wait_end(&w);
	return rc;
}

/* ms_an_mprobe waits for the next message from src with tag and takes it
 * off the queue (m), telling its size. */
static int ms_an_mprobe(int src, int tag, MPI_Message *m, int *len)
{
	MPI_Status st;
	int rc;
	ms_an_waiter w;
	ms_an_wait_begin(&w);
	if (ms_an_block) {
		rc = PMPI_Mprobe(src, tag, ms_priv, m, &st);
	} else {
		int flag = 0;
		while ((rc = PMPI_Improbe(src, tag, ms_priv, &flag, m, &st)) == MPI_SUCCESS && !flag)
			ms_an_pause(&w);
	}
	ms_an_wait_end(&w);
	if (rc != MPI_SUCCESS)
		return rc;
	return PMPI_Get_count(&st, MPI_BYTE, len);
}

/* ---- messages in pieces ----
 *
 * A message of n bytes goes as n / ms_an_piece + 1 messages, all but the
 * last ms_an_piece long (int counts; the last may be empty), so that the
 * receiver finds its length by probing alone. Between ms_an_post (or
 * ms_an_probe_from, or ms_an_send) and ms_an_take, this rank's sends are
 * in ms_an_sreq and the probed messages in ms_an_ins. */

typedef struct {
	MPI_Message m;
	int src, len;
} ms_an_in;

static MPI_Request *ms_an_sreq;
static int ms_an_nsreq, ms_an_csreq;
static ms_an_in *ms_an_ins;
static int ms_an_nin, ms_an_cin;

static int ms_an_grow(void **p, int *cap, int need, size_t elt)
{
	if (need <= *cap)
		return 1;
	int c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, (size_t)c * elt);
	if (q == NULL)
		return 0;
	*p = q;
	*cap = c;
	return 1;
}

static int ms_an_isend_pieces(const char *b, int64_t n, int dest, int tag)
{
	int64_t off = 0;
	int piece, rc = MPI_SUCCESS;
	ms_an_msgs++;
	do {
		piece = (int)(n - off < ms_an_piece ? n - off : ms_an_piece);
		if (!ms_an_grow((void **)&ms_an_sreq, &ms_an_csreq, ms_an_nsreq + 1, sizeof *ms_an_sreq))
			return MPI_ERR_NO_MEM;
		rc = PMPI_Isend((void *)(b + off), piece, MPI_BYTE, dest, tag, ms_priv, &ms_an_sreq[ms_an_nsreq]);
		if (rc == MPI_SUCCESS)
			ms_an_nsreq++, ms_an_pieces++;
		off += piece;
	} while (rc == MPI_SUCCESS && piece == ms_an_piece);
	return rc;
}

static int ms_an_probe_pieces(int src, int tag, int64_t *n)
{
	int len, rc;
	*n = 0;
	do {
		if (!ms_an_grow((void **)&ms_an_ins, &ms_an_cin, ms_an_nin + 1, sizeof *ms_an_ins))
			return MPI_ERR_NO_MEM;
		ms_an_in *e = &ms_an_ins[ms_an_nin];
		if ((rc = ms_an_mprobe(src, tag, &e->m, &len)) != MPI_SUCCESS)
			return rc;
		e->src = src;
		e->len = len;
		ms_an_nin++;
		*n += len;
	} while (len == ms_an_piece);
	return MPI_SUCCESS;
}

/* ms_an_post is this rank's part of an exchange in one step (no counts
 * sent before): it sends scount[d] bytes at sbuf + soff[d] to every
 * other rank d and waits for every other rank's message, whose sizes it
 * puts in rcount (rcount[me] = 0); ms_an_take then receives them. sbuf
 * is read until ms_an_take returns (the caller pins it). */
int ms_an_post(const char *sbuf, const int64_t *scount, const int64_t *soff, int64_t *rcount)
{
	int size = 1, me = 0, rc = MPI_SUCCESS;
	PMPI_Comm_size(ms_priv, &size);
	PMPI_Comm_rank(ms_priv, &me);
	ms_an_nsreq = ms_an_nin = 0;
	for (int i = 1; i < size && rc == MPI_SUCCESS; i++) {
		int d = (me + i) % size;
		rc = ms_an_isend_pieces(sbuf + soff[d], scount[d], d, MS_AN_XCHG);
	}
	rcount[me] = 0;
	for (int i = 1; i < size && rc == MPI_SUCCESS; i++) {
		int s = (me - i + size) % size;
		rc = ms_an_probe_pieces(s, MS_AN_XCHG, &rcount[s]);
	}
	return rc;
}

/* ms_an_take receives the messages found since ms_an_post (or
 * ms_an_probe_from), rank s's at rbuf + roff[s] (roff NULL: one after the
 * other from rbuf), and completes this rank's sends. */
int ms_an_take(char *rbuf, const int64_t *roff)
{
	int n = ms_an_nin + ms_an_nsreq, rc = MPI_SUCCESS;
	MPI_Request *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
	if (r == NULL)
		return MPI_ERR_NO_MEM;
	int64_t off = 0;
	for (int k = 0; k < ms_an_nin; k++) {
		ms_an_in *e = &ms_an_ins[k];
		if (roff != NULL && (k == 0 || e->src != ms_an_ins[k - 1].src))
			off = roff[e->src];
		int x = PMPI_Imrecv(rbuf + off, e->len, MPI_BYTE, &e->m, &r[k]);
		if (x != MPI_SUCCESS)
			r[k] = MPI_REQUEST_NULL;
		if (rc == MPI_SUCCESS)
			rc = x;
		off += e->len;
	}
	memcpy(r + ms_an_nin, ms_an_sreq, (size_t)ms_an_nsreq * sizeof *r);
	int x = ms_an_waitall(n, r);
	free(r);
	ms_an_nsreq = ms_an_nin = 0;
	return rc == MPI_SUCCESS ? x : rc;
}

/* ms_an_send sends n bytes at b to dest (the trees of InJob's reductions)
 * and waits for its pieces to be sent. */
int ms_an_send(const void *b, int64_t n, int dest)
{
	ms_an_nsreq = 0;
	int rc = ms_an_isend_pieces(b, n, dest, MS_AN_P2P);
	int x = ms_an_waitall(ms_an_nsreq, ms_an_sreq);
	ms_an_nsreq = 0;
	return rc == MPI_SUCCESS ? x : rc;
}

/* ms_an_probe_from waits for ms_an_send's message from src and tells its
 * size; ms_an_take(buf, NULL) receives it. */
int ms_an_probe_from(int src, int64_t *n)
{
	ms_an_nin = 0;
	return ms_an_probe_pieces(src, MS_AN_P2P, n);
}

int ms_an_token_send(int dest, const uint64_t *m)
{
	return PMPI_Send((void *)m, 3, MPI_UINT64_T, dest, MS_AN_TOKEN, ms_priv);
}

int ms_an_token_recv(uint64_t *m)
{
	if (ms_an_block)
		return PMPI_Recv(m, 3, MPI_UINT64_T, MPI_ANY_SOURCE, MS_AN_TOKEN, ms_priv, MPI_STATUS_IGNORE);
	MPI_Request r;
	int rc = PMPI_Irecv(m, 3, MPI_UINT64_T, MPI_ANY_SOURCE, MS_AN_TOKEN, ms_priv, &r);
	return rc == MPI_SUCCESS ? ms_an_waitall(1, &r) : rc;
}

/* ---- the delay analysis' messages: sends that do not wait, received
 * from any rank ---- */

#define MS_AN_DELAY 96

typedef struct {
	MPI_Request req;
	void *buf;
} ms_an_pending;

static ms_an_pending *ms_an_pend;
static int ms_an_npend, ms_an_cpend;

/* ms_an_isend sends a copy of n bytes at b to dest (MPI_Isend), completed
 * by a later ms_an_isend or ms_an_waitsends. */
int ms_an_isend(int dest, const void *b, int n)
{
	/* Free the sends done so far. */
	int k = 0;
	for (int i = 0; i < ms_an_npend; i++) {
		int done = 0;
		int rc = PMPI_Test(&ms_an_pend[i].req, &done, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS)
			return rc;
		if (done) {
			free(ms_an_pend[i].buf);
		} else {
			ms_an_npolls++;
			ms_an_pend[k++] = ms_an_pend[i];
		}
	}
	ms_an_npend = k;
	if (ms_an_npend == ms_an_cpend) {
		int c = ms_an_cpend ? 2 * ms_an_cpend : 64;
		ms_an_pending *p = realloc(ms_an_pend, (size_t)c * sizeof *p);
		if (p == NULL)
			return MPI_ERR_NO_MEM;
		ms_an_pend = p;
		ms_an_cpend = c;
	}
	void *buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf == NULL)
		return MPI_ERR_NO_MEM;
	memcpy(buf, b, (size_t)n);
	ms_an_pending *e = &ms_an_pend[ms_an_npend];
	int rc = PMPI_Isend(buf, n, MPI_BYTE, dest, MS_AN_DELAY, ms_priv, &e->req);
	if (rc != MPI_SUCCESS) {
		free(buf);
		return rc;
	}
	e->buf = buf;
	ms_an_npend++;
	return MPI_SUCCESS;
}

/* ms_an_probe waits for the next message of ms_an_isend from any rank and
 * tells its source and size; ms_an_recv then receives it. */
int ms_an_probe(int *src, int *n)
{
	MPI_Status st;
	int rc;
	ms_an_waiter w;
	ms_an_wait_begin(&w);
	if (ms_an_block) {
		rc = PMPI_Probe(MPI_ANY_SOURCE, MS_AN_DELAY, ms_priv, &st);
	} else {
		int flag = 0;
		while ((rc = PMPI_Iprobe(MPI_ANY_SOURCE, MS_AN_DELAY, ms_priv, &flag, &st)) == MPI_SUCCESS && !flag)
			ms_an_pause(&w);
	}
	ms_an_wait_end(&w);
	if (rc != MPI_SUCCESS)
		return rc;
	*src = st.MPI_SOURCE;
	return PMPI_Get_count(&st, MPI_BYTE, n);
}

/* ms_an_iprobe is ms_an_probe without waiting: *flag 0 when no message
 * has come. */
int ms_an_iprobe(int *flag, int *src, int *n)
{
	MPI_Status st;
	int rc = PMPI_Iprobe(MPI_ANY_SOURCE, MS_AN_DELAY, ms_priv, flag, &st);
	if (rc != MPI_SUCCESS || !*flag)
		return rc;
	*src = st.MPI_SOURCE;
	return PMPI_Get_count(&st, MPI_BYTE, n);
}

int ms_an_recv(int src, void *b, int n)
{
	return PMPI_Recv(b, n, MPI_BYTE, src, MS_AN_DELAY, ms_priv, MPI_STATUS_IGNORE);
}

/* ms_an_waitsends completes this rank's sends. */
int ms_an_waitsends(void)
{
	int rc = MPI_SUCCESS;
	for (int i = 0; i < ms_an_npend; i++) {
		int r = ms_an_waitall(1, &ms_an_pend[i].req);
		if (rc == MPI_SUCCESS)
			rc = r;
		free(ms_an_pend[i].buf);
	}
	ms_an_npend = 0;
	return rc;
}
