//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * analyze.c: the MPI traffic of the analysis in the job (MPISCOPE_ANALYZE=1,
 * analyze.go), on ms_priv through PMPI_ directly, never recorded: the
 * all-to-all exchanges of records and the critical path's token.
 */
#include "api.h"
#include "lifecycle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MS_AN_TOKEN 95             /* the critical path's token and its end */
#define MS_AN_CHUNK ((int64_t)1 << 26) /* bytes per destination and round */

/* ms_an_counts tells every rank how many bytes this one sends it. */
int ms_an_counts(const int64_t *send, int64_t *recv)
{
	return PMPI_Alltoall((void *)send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, ms_priv);
}

/* ms_an_alltoallv sends scount[d] bytes at sbuf + soff[d] to each rank d
 * and receives rcount[s] bytes at rbuf + roff[s] from each rank s, in
 * rounds of at most MS_AN_CHUNK bytes per pair (int counts), as many
 * rounds as the largest pair needs (agreed by all). */
int ms_an_alltoallv(const char *sbuf, const int64_t *scount, const int64_t *soff, char *rbuf, const int64_t *rcount,
		    const int64_t *roff)
{
	int size = 1;
	PMPI_Comm_size(ms_priv, &size);
	int64_t most = 0;
	for (int i = 0; i < size; i++) {
		if (scount[i] > most)
			most = scount[i];
		if (rcount[i] > most)
			most = rcount[i];
	}
	int64_t rounds = (most + MS_AN_CHUNK - 1) / MS_AN_CHUNK, all = 0;
	int rc = PMPI_Allreduce(&rounds, &all, 1, MPI_INT64_T, MPI_MAX, ms_priv);
	if (rc != MPI_SUCCESS)
		return rc;
	int *sc = malloc(4 * sizeof(int) * (size_t)size);
	if (sc == NULL)
		return MPI_ERR_NO_MEM;
	int *sd = sc + size, *rcn = sd + size, *rd = rcn + size;
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
