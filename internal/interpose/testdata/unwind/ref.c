/* ref.c: call chains known by construction, each checked at its leaf
 * against backtrace() (probe.c): plain chains, recursion to depth 6, a
 * frame of variable size (alloca), a frame that realigns the stack, a
 * callback from libc (qsort), a shared library of the program's own
 * (lib.c), a library opened with dlopen (plugin.c, argument 1), a signal
 * handler, and the same path walked again and again with
 * no rule decoded after its first walk. unwind_test.go builds it with and
 * without frame pointers, and mixed. Define NOCFI when lib.c has no
 * call-frame information (backtrace() cannot walk it). */
#include <alloca.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "unwind.h"

int lib_outer(int (*cb)(int), int x);

volatile int sink;
#define KEEP(x) (sink += (x), sink) /* keeps the call out of tail position */

static const char *const chain3[] = {"a3", "a2", "a1", "main", 0};
static const char *const *a3_names = chain3;
__attribute__((noinline)) int a3(int x) { return KEEP(probe("chain3", a3_names) + x); }
__attribute__((noinline)) int a2(int x) { return KEEP(a3(x + 1)); }
__attribute__((noinline)) int a1(int x) { return KEEP(a2(x + 1)); }

static const char *const rec6[] = {"rec", "rec", "rec", "rec", "rec", "rec", "main", 0};
__attribute__((noinline)) int rec(int n)
{
	if (n == 1)
		return KEEP(probe("recursion", rec6));
	return KEEP(rec(n - 1) + 1);
}

static const char *const va[] = {"vla", "main", 0};
__attribute__((noinline)) int vla(int n)
{
	char *p = alloca((size_t)n); /* a frame of variable size: rbp-based CFA without frame pointers too */
	memset(p, n, (size_t)n);
	return KEEP(probe("alloca", va) + p[n / 2]);
}

static const char *const al[] = {"aligned", "main", 0};
__attribute__((noinline)) int aligned(int n)
{
	char buf[256] __attribute__((aligned(128))); /* the stack realigned: a CFA expression */
	memset(buf, n, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
	return KEEP(probe("realigned", al) + buf[n]);
}

static int cmp(const void *a, const void *b)
{
	static int once;
	if (!once++)
		probe("qsort callback", NULL);
	return *(const int *)a - *(const int *)b;
}

static const char *const cb[] = {"from_lib", "lib_mid", "lib_outer", "call_lib", "main", 0};
__attribute__((noinline)) int from_lib(int x)
{
#ifdef NOCFI
	return KEEP(probe_nobt("callback from the library", cb) + x);
#else
	return KEEP(probe("callback from the library", cb) + x);
#endif
}
__attribute__((noinline)) int call_lib(int x) { return KEEP(lib_outer(from_lib, x)); }

static volatile int in_handler;
static void handler(int sig)
{
	(void)sig;
	/* A signal frame ends the walk: the handler's caller is the
	 * trampoline it returns to (__restore_rt), and that is all. */
	uintptr_t f[32];
	int n = MS_UNWIND_CALLER(f, 32);
	in_handler = n;
}

static const char *const loop[] = {"a3", "a2", "a1", "repeat", "main", 0};
__attribute__((noinline)) int repeat(int times)
{
	int s = 0;
	for (int i = 0; i < times; i++)
		s += a1(i);
	return KEEP(s);
}

int main(int argc, char **argv)
{
	ms_unwind_init();
	a1(1);
	rec(6);
	vla(100);
	vla(1000);
	aligned(3);
	int v[] = {5, 3, 9, 1};
	qsort(v, 4, sizeof v[0], cmp);
	call_lib(2);
	/* The same path again: nothing left to decode. */
	a3_names = loop;
	ms_unwind_stats before, after;
	static volatile int two = 2;
	for (int i = 0; i < two; i++) { /* one call site in main */
		if (i == 1)
			ms_unwind_stats_get(&before);
		repeat(i ? 100 : 1);
	}
	ms_unwind_stats_get(&after);
	if (after.decoded != before.decoded) {
		fprintf(stderr, "decoded %llu rules on paths already walked\n",
		        (unsigned long long)(after.decoded - before.decoded));
		probe_failures++;
	}
	/* A library opened now: its addresses are found by reading the
	 * loaded objects again, once. */
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*entry)(int) = h ? (int (*)(int))dlsym(h, "plugin_entry") : NULL;
		if (!entry) {
			fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
			probe_failures++;
		} else {
			ms_unwind_stats_get(&before);
			entry(1);
			ms_unwind_stats_get(&after);
			if (after.scans != before.scans + 1) {
				fprintf(stderr, "dlopen: %llu scans of the loaded objects, want 1\n",
				        (unsigned long long)(after.scans - before.scans));
				probe_failures++;
			}
		}
	}
	signal(SIGUSR1, handler);
	raise(SIGUSR1);
	if (in_handler != 1) {
		fprintf(stderr, "in a signal handler: %d frames, want 1 (the handler's caller: the trampoline)\n", in_handler);
		probe_failures++;
	}
	return probe_summary();
}
