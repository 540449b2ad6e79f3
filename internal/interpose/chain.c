//go:build mpiscope_openmpi || mpiscope_mpich

/*
 * chain.c: other PMPI tools stacked below mpiscope (docs/stacking.md).
 *
 * MPISCOPE_STACK=/path/libA.so:/path/libB.so (the launcher's -with) makes
 * mpiscope's MPI_X call libA's MPI_X, libA's PMPI_X calls reach libB's
 * MPI_X, and libB's the MPI library. Tool K is loaded by its shim, a
 * library of ours (lib/<family>/stack/libmpiscope-shim-K.so, generated
 * from mpi.h) whose DT_NEEDED libmpiscope-level-K.so is found through its
 * RUNPATH $ORIGIN: a directory made for the run holds a link to the shim
 * and one named so to the tool. dlopen(shim, RTLD_DEEPBIND) puts the shim
 * first in the tool's lookup scope, so the tool's PMPI_X bind to the
 * shim's, which call what mpiscope_shim_bind gave them: the next tool's
 * MPI_X when it defines one, else the one after, else the MPI library's
 * PMPI_X. All of it at MPI_Init, once; the wrappers do not change (their
 * PMPI_ pointer is pointed at the first level, ms_chain_bind), and
 * mpiscope's own MPI traffic calls PMPI_ directly, past every tool.
 */
#define _GNU_SOURCE
#include "ms.h"
#include "chain.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MS_CHAIN_MAX 8 /* shims built (scripts/build-shim.sh) */
#define MS_CHAIN_WARN 16

MS_HIDDEN void ms_chain_bind(void *const *next); /* zwrap_<family>.c */

static int ms_chain_n;                           /* tools loaded */
static char ms_chain_path[MS_CHAIN_MAX][PATH_MAX]; /* their paths, top first */
static char *ms_chain_warns[MS_CHAIN_WARN];
static int ms_chain_nwarns;

/* The first level's entries of the hand-written functions (NULL: PMPI_). */
static int (*ms_next_init)(int *, char ***);
static int (*ms_next_init_thread)(int *, char ***, int, int *);
static int (*ms_next_finalize)(void);
static int (*ms_next_abort)(MPI_Comm, int);
static int (*ms_next_pcontrol)(int, ...);

int ms_chain_levels(void) { return ms_chain_n; }
const char *ms_chain_level(int i) { return i >= 0 && i < ms_chain_n ? ms_chain_path[i] : NULL; }
int ms_chain_nwarnings(void) { return ms_chain_nwarns; }
const char *ms_chain_warning(int i) { return i >= 0 && i < ms_chain_nwarns ? ms_chain_warns[i] : NULL; }

/* ms_chain_rank0: the launcher says this is rank 0, or says nothing. */
static int ms_chain_rank0(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		if (v != NULL && *v)
			return atoi(v) == 0;
	}
	return 1;
}

/* ms_chain_warn keeps a warning for the report (chain.go) and prints it
 * on rank 0 unless MPISCOPE_QUIET=1. */
static void ms_chain_warn(const char *format, ...)
{
	char buf[PATH_MAX + 256];
	va_list ap;
	va_start(ap, format);
	vsnprintf(buf, sizeof buf, format, ap);
	va_end(ap);
	if (ms_chain_nwarns < MS_CHAIN_WARN)
		ms_chain_warns[ms_chain_nwarns++] = strdup(buf);
	const char *q = getenv("MPISCOPE_QUIET");
	if (ms_chain_rank0() && !(q != NULL && strcmp(q, "1") == 0))
		fprintf(stderr, "mpiscope: warning: %s\n", buf);
}

/* ms_chain_shimdir finds lib/<family>/stack/ beside this libmpiscope.so. */
static int ms_chain_shimdir(char *dir, size_t n)
{
	Dl_info info;
	char real[PATH_MAX];
	if (dladdr((void *)ms_chain_shimdir, &info) == 0 || info.dli_fname == NULL || realpath(info.dli_fname, real) == NULL)
		return 0;
	char *slash = strrchr(real, '/');
	if (slash == NULL)
		return 0;
	*slash = 0;
	snprintf(dir, n, "%s/stack", real);
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof probe, "%s/libmpiscope-shim-1.so", dir);
	return access(probe, R_OK) == 0;
}

/* ms_fn_lookup is the index of name in ms_fn_names (sorted), or -1
 * (cold: the stack's binding, QMPI mode's probe). */
int ms_fn_lookup(const char *name)
{
	int lo = 0, hi = ms_nfuncs - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2, c = strcmp(ms_fn_names[mid], name);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* A level's table for mpiscope_shim_bind: next[i] for ms_fn_names[i]. */
static void *ms_chain_next_of(const char *name, void *ctx)
{
	int i = ms_fn_lookup(name);
	return i < 0 ? NULL : ((void **)ctx)[i];
}

/* ms_chain_fixdata rebinds the tool's references to data it does not
 * define (Open MPI's predefined handles: MPI_COMM_WORLD is
 * &ompi_mpi_comm_world) to the global scope's definition. RTLD_DEEPBIND
 * bound them to the MPI library's own, but a program that names such an
 * object got a copy of it in the executable (a copy relocation), and that
 * copy is the one the MPI library initialized and uses: a tool calling
 * PMPI_Comm_rank(MPI_COMM_WORLD) would pass an empty object. Returns the
 * references rebound. */
typedef struct {
	ElfW(Addr) base;
	uintptr_t r0, r1;
} ms_relro_q;

static int ms_chain_relro_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	ms_relro_q *q = data;
	if (info->dlpi_addr != q->base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
			q->r0 = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			q->r1 = q->r0 + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* ms_chain_relro finds the object's RELRO range (none: 0, 0). */
static void ms_chain_relro(struct link_map *lm, uintptr_t *r0, uintptr_t *r1)
{
	ms_relro_q q = {lm->l_addr, 0, 0};
	dl_iterate_phdr(ms_chain_relro_cb, &q);
	*r0 = q.r0;
	*r1 = q.r1;
}

static int ms_chain_fixdata(struct link_map *lm)
{
#if defined(__x86_64__) || defined(__aarch64__)
#if defined(__x86_64__)
	const unsigned glob = R_X86_64_GLOB_DAT, abs64 = R_X86_64_64;
#else
	const unsigned glob = R_AARCH64_GLOB_DAT, abs64 = R_AARCH64_ABS64;
#endif
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *rela = NULL;
	size_t relasz = 0;
	ElfW(Addr) base = lm->l_addr;
#define MS_ADJ(p) ((ElfW(Addr))(p) < base ? (ElfW(Addr))(p) + base : (ElfW(Addr))(p))
	for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: symtab = (const ElfW(Sym) *)MS_ADJ(d->d_un.d_ptr); break;
		case DT_STRTAB: strtab = (const char *)MS_ADJ(d->d_un.d_ptr); break;
		case DT_RELA: rela = (const ElfW(Rela) *)MS_ADJ(d->d_un.d_ptr); break;
		case DT_RELASZ: relasz = d->d_un.d_val; break;
		}
	}
#undef MS_ADJ
	if (symtab == NULL || strtab == NULL || rela == NULL)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	int n = 0;
	for (size_t i = 0; i < relasz / sizeof *rela; i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(rela[i].r_info);
		size_t si = ELF64_R_SYM(rela[i].r_info);
		if ((type != glob && type != abs64) || si == 0)
			continue;
		const ElfW(Sym) *sym = &symtab[si];
		if (ELF64_ST_TYPE(sym->st_info) != STT_OBJECT || sym->st_shndx != SHN_UNDEF)
			continue;
		void *want = dlsym(RTLD_DEFAULT, strtab + sym->st_name);
		if (want == NULL)
			continue;
		void **slot = (void **)(base + rela[i].r_offset);
		void *val = (char *)want + (type == abs64 ? rela[i].r_addend : 0);
		if (*slot == val)
			continue;
		/* The slot may be in the RELRO part, read-only by now. */
		void *page = (void *)((uintptr_t)slot & ~(uintptr_t)(pg - 1));
		if (mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
			continue;
		*slot = val;
		n++;
		/* Read-only again where RELRO made it so. */
		uintptr_t r0 = 0, r1 = 0;
		ms_chain_relro(lm, &r0, &r1);
		if ((uintptr_t)page >= (r0 & ~(uintptr_t)(pg - 1)) && (uintptr_t)page < r1)
			mprotect(page, (size_t)pg, PROT_READ);
	}
	return n;
#else
	(void)lm;
	return 0;
#endif
}

typedef struct {
	void *shim, *tool;
	struct link_map *lm;
} ms_level;

/* ms_chain_load loads tool path as level k (1-based) from dir: 1 if it
 * defines MPI_ functions, else 0 with a warning (and nothing left loaded
 * that can be unloaded). */
static int ms_chain_load(const char *dir, const char *shimdir, const char *path, int k, ms_level *lv)
{
	char shim[PATH_MAX + 64], link[PATH_MAX + 64], target[PATH_MAX + 64];
	snprintf(shim, sizeof shim, "%s/libmpiscope-shim-%d.so", dir, k);
	snprintf(link, sizeof link, "%s/libmpiscope-level-%d.so", dir, k);
	snprintf(target, sizeof target, "%s/libmpiscope-shim-%d.so", shimdir, k);
	if (symlink(target, shim) != 0 || symlink(path, link) != 0) {
		ms_chain_warn("MPISCOPE_STACK: %s: cannot prepare its level in %s (%s); left out of the stack", path, dir, strerror(errno));
		unlink(shim);
		return 0;
	}
	dlerror();
	lv->shim = dlopen(shim, RTLD_LAZY | RTLD_LOCAL | RTLD_DEEPBIND);
	int ok = 0;
	if (lv->shim == NULL) {
		const char *e = dlerror();
		ms_chain_warn("MPISCOPE_STACK: %s: cannot be loaded (%s); left out of the stack", path, e ? e : "dlopen failed");
		goto out;
	}
	lv->tool = dlopen(link, RTLD_LAZY | RTLD_NOLOAD);
	if (lv->tool == NULL || dlinfo(lv->tool, RTLD_DI_LINKMAP, &lv->lm) != 0) {
		ms_chain_warn("MPISCOPE_STACK: %s: not found after loading; left out of the stack", path);
		goto out;
	}
	int defs = 0;
	for (int i = 0; i < ms_nfuncs; i++) {
		void *p = dlsym(lv->tool, ms_fn_names[i]);
		Dl_info info;
		struct link_map *in = NULL;
		if (p != NULL && dladdr1(p, &info, (void **)&in, RTLD_DL_LINKMAP) != 0 && in == lv->lm)
			defs++;
	}
	if (defs == 0) {
		ms_chain_warn("MPISCOPE_STACK: %s defines no MPI_ function (not a PMPI tool); left out of the stack", path);
		goto out;
	}
	ms_chain_fixdata(lv->lm);
	ok = 1;
out:
	if (!ok) {
		if (lv->tool)
			dlclose(lv->tool);
		if (lv->shim)
			dlclose(lv->shim);
		lv->tool = lv->shim = NULL;
	}
	unlink(shim);
	unlink(link);
	return ok;
}

static ms_level ms_chain_lv[MS_CHAIN_MAX]; /* the levels loaded, top first */
static void **ms_chain_next;               /* ms_chain_link's table */

/* ms_chain_link binds every level from next's last row (what the last
 * tool calls: the MPI library's PMPI_X, or the piggyback channel's
 * handlers) up: next[k]: what level k calls (k = 0: mpiscope, k = n: the
 * last tool). A tool that does not define MPI_X leaves the call to the
 * level below it. */
static void ms_chain_link(void **next, int n)
{
	for (int k = n; k >= 1; k--) {
		void **below = next + (size_t)k * ms_nfuncs, **above = next + (size_t)(k - 1) * ms_nfuncs;
		for (int i = 0; i < ms_nfuncs; i++) {
			void *p = dlsym(ms_chain_lv[k - 1].tool, ms_fn_names[i]);
			Dl_info info;
			struct link_map *in = NULL;
			if (p != NULL && dladdr1(p, &info, (void **)&in, RTLD_DL_LINKMAP) != 0 && in == ms_chain_lv[k - 1].lm)
				above[i] = p;
			else
				above[i] = below[i];
		}
		void (*bind)(void *(*)(const char *, void *), void *) =
			(void (*)(void *(*)(const char *, void *), void *))dlsym(ms_chain_lv[k - 1].shim, "mpiscope_shim_bind");
		if (bind != NULL)
			bind(ms_chain_next_of, below);
	}
	ms_chain_bind(next);
}

MS_HIDDEN void ms_pb_bottom(void **row); /* zwrap_<family>.c */

/* ms_chain_pb puts the piggyback channel's handlers below the last tool
 * (piggyback.go, once the ranks agreed on the channel): the tools then
 * see the application's calls as written, and the messages leave with our
 * header whatever the tools made of them. 0: no stack. */
int ms_chain_pb(void)
{
	if (ms_chain_n == 0 || ms_chain_next == NULL)
		return 0;
	ms_pb_bottom(ms_chain_next + (size_t)ms_chain_n * ms_nfuncs);
	ms_chain_link(ms_chain_next, ms_chain_n);
	return 1;
}

/* ms_chain_setup reads MPISCOPE_STACK, loads the tools and binds every
 * level; once, at the first MPI_Init or MPI_Init_thread. */
static int ms_chain_done; /* ms_chain_setup ran */

static void ms_chain_setup(void)
{
	if (__atomic_exchange_n(&ms_chain_done, 1, __ATOMIC_SEQ_CST))
		return;
	const char *env = getenv("MPISCOPE_STACK");
	if (env == NULL || *env == 0)
		return;
	const char *en = getenv("MPISCOPE_ENABLE");
	if (en != NULL && strcmp(en, "never") == 0)
		return; /* passes every call on untouched: the MPI library's PMPI_ */
	char shimdir[PATH_MAX];
	if (!ms_chain_shimdir(shimdir, sizeof shimdir)) {
		ms_chain_warn("MPISCOPE_STACK: no stacking shims beside this libmpiscope (lib/<family>/stack/; a static link has none); "
			      "the stack is ignored");
		return;
	}
	char dir[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/mpiscope-stack-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		snprintf(dir, sizeof dir, "/tmp/mpiscope-stack-XXXXXX");
		if (mkdtemp(dir) == NULL) {
			ms_chain_warn("MPISCOPE_STACK: cannot create a directory in %s (%s); the stack is ignored", dir, strerror(errno));
			return;
		}
	}
	ms_level *lv = ms_chain_lv;
	dev_t devs[MS_CHAIN_MAX];
	ino_t inos[MS_CHAIN_MAX];
	int n = 0;
	char *list = strdup(env);
	for (char *save = NULL, *tok = strtok_r(list, ":,", &save); tok != NULL; tok = strtok_r(NULL, ":,", &save)) {
		char real[PATH_MAX];
		struct stat st;
		if (realpath(tok, real) == NULL || stat(real, &st) != 0) {
			ms_chain_warn("MPISCOPE_STACK: %s: %s; left out of the stack", tok, strerror(errno));
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			ms_chain_warn("MPISCOPE_STACK: %s: not a file; left out of the stack", tok);
			continue;
		}
		int dup = 0;
		for (int i = 0; i < n; i++)
			dup |= devs[i] == st.st_dev && inos[i] == st.st_ino;
		if (dup) {
			ms_chain_warn("MPISCOPE_STACK: %s is already in the stack (a library loads once); left out the second time", tok);
			continue;
		}
		if (n == MS_CHAIN_MAX) {
			ms_chain_warn("MPISCOPE_STACK: more than %d tools; %s and the ones after it are left out", MS_CHAIN_MAX, tok);
			break;
		}
		memset(&lv[n], 0, sizeof lv[n]);
		if (!ms_chain_load(dir, shimdir, real, n + 1, &lv[n]))
			continue;
		devs[n] = st.st_dev;
		inos[n] = st.st_ino;
		snprintf(ms_chain_path[n], PATH_MAX, "%s", real);
		n++;
	}
	free(list);
	rmdir(dir);
	if (n == 0)
		return;
	/* next[k]: what level k calls (ms_chain_link); the last tool calls
	 * the MPI library. */
	void **next = calloc((size_t)(n + 1) * (size_t)ms_nfuncs, sizeof *next);
	if (next == NULL)
		return;
	for (int i = 0; i < ms_nfuncs; i++) {
		char pname[128];
		snprintf(pname, sizeof pname, "P%s", ms_fn_names[i]);
		next[(size_t)n * ms_nfuncs + i] = dlsym(RTLD_DEFAULT, pname);
	}
	ms_chain_link(next, n);
	ms_chain_next = next;
	int i;
	if ((i = ms_fn_lookup("MPI_Init")) >= 0)
		ms_next_init = (int (*)(int *, char ***))next[i];
	if ((i = ms_fn_lookup("MPI_Init_thread")) >= 0)
		ms_next_init_thread = (int (*)(int *, char ***, int, int *))next[i];
	if ((i = ms_fn_lookup("MPI_Finalize")) >= 0)
		ms_next_finalize = (int (*)(void))next[i];
	if ((i = ms_fn_lookup("MPI_Abort")) >= 0)
		ms_next_abort = (int (*)(MPI_Comm, int))next[i];
	if ((i = ms_fn_lookup("MPI_Pcontrol")) >= 0)
		ms_next_pcontrol = (int (*)(int, ...))next[i];
	ms_chain_n = n;
	/* next stays: the shims and the wrappers hold its addresses' values,
	 * not the table, but it is small and lives as long as the run. */
}

/* The Fortran entries (zfwrap_<family>.c): MPI_INIT and MPI_INIT_THREAD
 * reach the stack here, through the C MPI_Init/MPI_Init_thread of level 1
 * (with no arguments, as MPI allows); without a stack the entry calls the
 * implementation's Fortran function as before (0). */
int ms_chain_f_init(void *required, void *provided, void *ierr)
{
	ms_chain_setup();
	int rc;
	if (required == NULL) {
		if (ms_next_init == NULL)
			return 0;
		rc = ms_next_init(NULL, NULL);
	} else {
		if (ms_next_init_thread == NULL)
			return 0;
		int prov = 0;
		rc = ms_next_init_thread(NULL, NULL, (int)*(MPI_Fint *)required, &prov);
		*(MPI_Fint *)provided = (MPI_Fint)prov;
	}
	if (ierr != NULL)
		*(MPI_Fint *)ierr = (MPI_Fint)rc;
	return 1;
}

int ms_chain_f_finalize(void *ierr)
{
	if (ms_next_finalize == NULL)
		return 0;
	int rc = ms_next_finalize();
	if (ierr != NULL)
		*(MPI_Fint *)ierr = (MPI_Fint)rc;
	return 1;
}

int ms_chain_Init(int *argc, char ***argv)
{
	ms_chain_setup();
	if (ms_next_init != NULL)
		return ms_next_init(argc, argv);
	return PMPI_Init(argc, argv);
}

int ms_chain_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	ms_chain_setup();
	if (ms_next_init_thread != NULL)
		return ms_next_init_thread(argc, argv, required, provided);
	return PMPI_Init_thread(argc, argv, required, provided);
}

int ms_chain_Finalize(void)
{
	if (ms_next_finalize != NULL)
		return ms_next_finalize();
	return PMPI_Finalize();
}

int ms_chain_Abort(MPI_Comm comm, int errorcode)
{
	if (ms_next_abort != NULL)
		return ms_next_abort(comm, errorcode);
	return PMPI_Abort(comm, errorcode);
}

int ms_chain_f_pcontrol(int level)
{
	if (ms_next_pcontrol != NULL)
		return ms_next_pcontrol(level, (void *)NULL);
	return PMPI_Pcontrol(level);
}

int ms_chain_Pcontrol(int level, va_list ap)
{
	if (ms_next_pcontrol != NULL) {
		void *arg = va_arg(ap, void *);
		return ms_next_pcontrol(level, arg);
	}
	return PMPI_Pcontrol(level);
}
