/*
 * quiet.c: which threads of the process wake while the application works
 * (any number of ranks). As MPI_Init returns, each rank reads the context
 * switches of every thread of the process (/proc/self/task/<tid>/status),
 * works for about one second (compute, with an MPI_Allreduce every 100 ms
 * and a message to the next rank), reads them again at the end, and also
 * half-way before and after an MPI_Pcontrol(2) (a snapshot, with the
 * argument "pcontrol"), so that what the threads do inside that call is
 * left out. It prints one line per thread:
 *
 *   thread <rank> <tid> <voluntary> <nonvoluntary> <where> <comm>
 *
 * with the switches made while the application ran (a thread started
 * meanwhile: since its start), where the thread waits (the object holding
 * the instruction pointer of its system call, /proc/self/task/<tid>/syscall,
 * at the first sample that finds it in one; else "running" or "-"; "main"
 * for the main thread) and its name; then
 * "threads <rank> <n> <at main>", the number of threads as the work began
 * and at the start of main (before MPI_Init), and "result <rank> <sum>".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXT 256

typedef struct {
	long tid, vol, nonvol;
	char where[256], comm[64];
} thr;

static int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

/* where: the mapping that holds address pc, from /proc/self/maps. */
static void where(unsigned long pc, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	snprintf(out, len, "anon");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char path[512] = "";
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %511s", &lo, &hi, path) >= 2 && pc >= lo && pc < hi) {
			const char *b = strrchr(path, '/');
			snprintf(out, len, "%s", b ? b + 1 : (path[0] ? path : "anon"));
			break;
		}
	}
	if (f)
		fclose(f);
}

static int sample(thr *t, int detail)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)) != NULL && n < MAXT) {
		char p[512], line[512];
		if (e->d_name[0] == '.')
			continue;
		thr *x = &t[n++];
		memset(x, 0, sizeof *x);
		x->tid = atol(e->d_name);
		snprintf(p, sizeof p, "/proc/self/task/%s/status", e->d_name);
		FILE *f = fopen(p, "r");
		while (f && fgets(line, sizeof line, f)) {
			sscanf(line, "voluntary_ctxt_switches: %ld", &x->vol);
			sscanf(line, "nonvoluntary_ctxt_switches: %ld", &x->nonvol);
		}
		if (f)
			fclose(f);
		if (!detail)
			continue;
		snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
		f = fopen(p, "r");
		if (f && fgets(x->comm, sizeof x->comm, f))
			x->comm[strcspn(x->comm, "\n")] = 0;
		if (f)
			fclose(f);
		for (char *c = x->comm; *c; c++)
			if (*c == ' ')
				*c = '_';
		snprintf(x->where, sizeof x->where, "-");
		if (x->tid == (long)getpid()) {
			snprintf(x->where, sizeof x->where, "main");
			continue;
		}
		snprintf(p, sizeof p, "/proc/self/task/%s/syscall", e->d_name);
		f = fopen(p, "r");
		if (f && fgets(line, sizeof line, f)) {
			if (strncmp(line, "running", 7) == 0) {
				snprintf(x->where, sizeof x->where, "running");
			} else {
				/* nr a1 .. a6 sp pc */
				char *tok[9];
				int k = 0;
				for (char *s = strtok(line, " \n"); s && k < 9; s = strtok(NULL, " \n"))
					tok[k++] = s;
				if (k == 9)
					where(strtoul(tok[8], NULL, 16), x->where, sizeof x->where);
			}
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* find: the thread tid in t[0..n), or NULL. */
static thr *find(thr *t, int n, long tid)
{
	for (int i = 0; i < n; i++)
		if (t[i].tid == tid)
			return &t[i];
	return NULL;
}

/* delta adds to *v and *nv the switches of thread tid between samples x
 * and y (from its start when x does not have it). */
static void delta(thr *x, int nx, thr *y, int ny, long tid, long *v, long *nv)
{
	thr *a = find(x, nx, tid), *b = find(y, ny, tid);
	if (b == NULL)
		return;
	*v += b->vol - (a ? a->vol : 0);
	*nv += b->nonvol - (a ? a->nonvol : 0);
}

int main(int argc, char **argv)
{
	static thr a[MAXT], b[MAXT], c[MAXT], d[MAXT];
	int at_main = count_tasks(), rank, size, i, j, nb = 0, nc = 0,
	    pcontrol = argc > 1 && strcmp(argv[1], "pcontrol") == 0;
	double x = 1, sum = 0, acc = 0;
	MPI_Init(&argc, &argv);
	int na = sample(a, 1); /* the second starts as MPI_Init returns */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	double t0 = now();
	for (i = 0; i < 10; i++) {
		double s, v = rank, w = 0;
		while (now() < t0 + 0.1 * (i + 1))
			for (j = 0; j < 1000; j++)
				acc += j * 1e-9;
		MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		sum += s;
		if (i == 4) {
			nb = sample(b, 1);
			if (pcontrol)
				MPI_Pcontrol(2); /* a snapshot: the profiler's Go runtime at work */
			nc = sample(c, 1);
		}
		MPI_Sendrecv(&v, 1, MPI_DOUBLE, (rank + 1) % size, 7, &w, 1, MPI_DOUBLE, (rank + size - 1) % size, 7,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		sum += w - (rank + size - 1) % size;
	}
	int nd = sample(d, 1);
	/* every thread seen, once */
	static thr all[4 * MAXT];
	int n = 0;
	thr *lists[4] = {a, b, c, d};
	int counts[4] = {na, nb, nc, nd};
	for (int k = 0; k < 4; k++)
		for (i = 0; i < counts[k]; i++) {
			thr *t = find(all, n, lists[k][i].tid);
			if (t == NULL)
				all[n++] = lists[k][i];
			else if (strcmp(t->where, "running") == 0 || strcmp(t->where, "-") == 0)
				strcpy(t->where, lists[k][i].where); /* where it waits, from a later sample */
		}
	for (i = 0; i < n; i++) {
		long v = 0, nv = 0;
		delta(a, na, b, nb, all[i].tid, &v, &nv);
		delta(c, nc, d, nd, all[i].tid, &v, &nv);
		printf("thread %d %ld %ld %ld %s %s\n", rank, all[i].tid, v, nv, all[i].where, all[i].comm);
	}
	printf("threads %d %d %d\n", rank, na, at_main);
	printf("result %d %.0f %d\n", rank, sum, acc > 0);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
