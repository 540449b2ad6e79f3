//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * analyze.c: the MPI traffic of the analysis in the job (MPISCOPE_ANALYZE=1,
 * analyze.go), on ms_priv through PMPI_ directly, never recorded: the
 * all-to-all exchanges of records, the critical path's token and the
 * delay analysis' messages.
 */
#include "api.h"
#include "lifecycle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MS_AN_TOKEN 95             /* the critical path's token and its end */
#define MS_AN_CHUNK ((int64_t)1 << 26) /* bytes per destination and round */

/* ms_an_counts tells every rank how many bytes this one sends it, and
 * the rounds of MS_AN_CHUNK bytes the largest pair of the job needs (each
 * rank sends its largest count along: every count received is one sent,
 * so all ranks find the same largest), in one MPI_Alltoall. */
int ms_an_counts(const int64_t *send, int64_t *recv, int64_t *rounds)
{
	int size = 1;
	PMPI_Comm_size(ms_priv, &size);
	int64_t *s2 = malloc(4 * sizeof(int64_t) * (size_t)size);
	if (s2 == NULL)
		return MPI_ERR_NO_MEM;
	int64_t *r2 = s2 + 2 * size, most = 0;
	for (int i = 0; i < size; i++)
		most = send[i] > most ? send[i] : most;
	for (int i = 0; i < size; i++) {
		s2[2 * i] = send[i];
		s2[2 * i + 1] = most;
	}
	int rc = PMPI_Alltoall(s2, 2, MPI_INT64_T, r2, 2, MPI_INT64_T, ms_priv);
	most = 0;
	for (int i = 0; rc == MPI_SUCCESS && i < size; i++) {
		recv[i] = r2[2 * i];
		most = r2[2 * i + 1] > most ? r2[2 * i + 1] : most;
	}
	*rounds = (most + MS_AN_CHUNK - 1) / MS_AN_CHUNK;
	free(s2);
	return rc;
}

/* ms_an_alltoallv sends scount[d] bytes at sbuf + soff[d] to each rank d
 * and receives rcount[s] bytes at rbuf + roff[s] from each rank s, in
 * rounds of at most MS_AN_CHUNK bytes per pair (int counts): all rounds,
 * as many as the largest pair of the job needs (ms_an_counts). */
int ms_an_alltoallv(const char *sbuf, const int64_t *scount, const int64_t *soff, char *rbuf, const int64_t *rcount,
		    const int64_t *roff, int64_t all)
{
	int size = 1, rc = MPI_SUCCESS;
	PMPI_Comm_size(ms_priv, &size);
	if (all == 0)
		return MPI_SUCCESS; /* nothing anywhere: every rank knows */
	int *sc = malloc(4 * sizeof(int) * (size_t)size);
	if (sc == NULL)
		return MPI_ERR_NO_MEM;
	int *sd = sc + size, *rcn = sd + size, *rd = rcn + size;
	/* One round whose offsets fit an int: straight from and to the
	 * caller's buffers, no copy. */
	int64_t stot = 0, rtot = 0;
	for (int i = 0; i < size; i++) {
		stot = soff[i] + scount[i] > stot ? soff[i] + scount[i] : stot;
		rtot = roff[i] + rcount[i] > rtot ? roff[i] + rcount[i] : rtot;
	}
	if (all == 1 && stot <= INT32_MAX && rtot <= INT32_MAX) {
		for (int i = 0; i < size; i++) {
			sc[i] = (int)scount[i];
			sd[i] = (int)soff[i];
			rcn[i] = (int)rcount[i];
			rd[i] = (int)roff[i];
		}
		rc = PMPI_Alltoallv((void *)sbuf, sc, sd, MPI_BYTE, rbuf, rcn, rd, MPI_BYTE, ms_priv);
		free(sc);
		return rc;
	}
	/* Displacements are relative to each round's base pointers. */
	for (int64_t k = 0; k < all && rc == MPI_SUCCESS; k++) {
		int64_t from = k * MS_AN_CHUNK;
		for (int i = 0; i < size; i++) {
			int64_t s = scount[i] - from, r = rcount[i] - from;
			sc[i] = (int)(s <= 0 ? 0 : s > MS_AN_CHUNK ? MS_AN_CHUNK : s);
			rcn[i] = (int)(r <= 0 ? 0 : r > MS_AN_CHUNK ? MS_AN_CHUNK : r);
		}
		/* One call per round; the pieces sit at soff[i] + from, which
		 * need not fit an int: pack them into a round buffer. */
		int64_t st = 0, rt = 0;
		for (int i = 0; i < size; i++) {
			sd[i] = (int)st;
			st += sc[i];
			rd[i] = (int)rt;
			rt += rcn[i];
		}
		char *sb = malloc(st > 0 ? (size_t)st : 1), *rb = malloc(rt > 0 ? (size_t)rt : 1);
		if (sb == NULL || rb == NULL) {
			free(sb);
			free(rb);
			free(sc);
			return MPI_ERR_NO_MEM;
		}
		for (int i = 0; i < size; i++)
			if (sc[i] > 0)
				memcpy(sb + sd[i], sbuf + soff[i] + from, (size_t)sc[i]);
		rc = PMPI_Alltoallv(sb, sc, sd, MPI_BYTE, rb, rcn, rd, MPI_BYTE, ms_priv);
		for (int i = 0; rc == MPI_SUCCESS && i < size; i++)
			if (rcn[i] > 0)
				memcpy(rbuf + roff[i] + from, rb + rd[i], (size_t)rcn[i]);
		free(sb);
		free(rb);
	}
	free(sc);
	return rc;
}

int ms_an_token_send(int dest, const uint64_t *m)
{
	return PMPI_Send((void *)m, 3, MPI_UINT64_T, dest, MS_AN_TOKEN, ms_priv);
}

int ms_an_token_recv(uint64_t *m)
{
	return PMPI_Recv(m, 3, MPI_UINT64_T, MPI_ANY_SOURCE, MS_AN_TOKEN, ms_priv, MPI_STATUS_IGNORE);
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
		if (done)
			free(ms_an_pend[i].buf);
		else
			ms_an_pend[k++] = ms_an_pend[i];
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
	int rc = PMPI_Probe(MPI_ANY_SOURCE, MS_AN_DELAY, ms_priv, &st);
	if (rc != MPI_SUCCESS)
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
		int r = PMPI_Wait(&ms_an_pend[i].req, MPI_STATUS_IGNORE);
		if (rc == MPI_SUCCESS)
			rc = r;
		free(ms_an_pend[i].buf);
	}
	ms_an_npend = 0;
	return rc;
}
