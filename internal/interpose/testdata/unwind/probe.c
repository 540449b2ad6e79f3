/* probe.c: ms_unwind against glibc's backtrace() (probe.h). Built with
 * frame pointers like a wrapper of the library: MS_UNWIND_CALLER. */
#define _GNU_SOURCE
#include "probe.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>

#include "unwind.h"

int probe_failures, probe_checks;

static const char *name_of(uintptr_t pc)
{
	Dl_info di;
	if (dladdr((void *)(pc - 1), &di) && di.dli_sname)
		return di.dli_sname;
	return "?";
}

static void dump(const char *what, const uintptr_t *f, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %s[%d] %#lx %s\n", what, i, (unsigned long)f[i], name_of(f[i]));
}

static int check_names(const char *where, const uintptr_t *ours, int n, const char *const *names)
{
	for (int i = 0; names && names[i]; i++) {
		if (i >= n || (strcmp(names[i], "*") != 0 && strcmp(name_of(ours[i]), names[i]) != 0)) {
			fprintf(stderr, "%s: frame %d is %s, want %s\n", where, i, i < n ? name_of(ours[i]) : "(none)", names[i]);
			dump("ours", ours, n);
			probe_failures++;
			return 0;
		}
	}
	return 1;
}

__attribute__((noinline)) int probe(const char *where, const char *const *names)
{
	uintptr_t ours[128];
	int n = MS_UNWIND_CALLER(ours, 128);
	void *bt[129];
	int m = backtrace(bt, 129);
	probe_checks++;
	/* bt[0] is the return address into probe; bt[1] = ours[0]. */
	int same = m - 1 == n;
	for (int i = 0; same && i < n; i++)
		same = (uintptr_t)bt[i + 1] == ours[i];
	if (!same) {
		fprintf(stderr, "%s: ms_unwind gave %d frames, backtrace %d\n", where, n, m - 1);
		dump("ours", ours, n);
		dump("backtrace", (const uintptr_t *)bt + 1, m - 1);
		probe_failures++;
	} else if (!check_names(where, ours, n, names)) {
		return n;
	}
	/* Truncated walks give the first frames of the whole one. */
	for (int max = 1; max < n; max += 3) {
		uintptr_t part[128];
		int k = MS_UNWIND_CALLER(part, max);
		if (k != max || memcmp(part + 1, ours + 1, (size_t)(k - 1) * sizeof part[0]) != 0) {
			fprintf(stderr, "%s: max %d gave %d frames\n", where, max, k);
			probe_failures++;
			break;
		}
	}
	__asm__ volatile("" ::: "memory");
	return n;
}

__attribute__((noinline)) int probe_nobt(const char *where, const char *const *names)
{
	uintptr_t ours[128];
	int n = MS_UNWIND_CALLER(ours, 128);
	probe_checks++;
	check_names(where, ours, n, names);
	__asm__ volatile("" ::: "memory");
	return n;
}

int probe_summary(void)
{
	ms_unwind_stats s;
	ms_unwind_stats_get(&s);
	if (probe_failures) {
		printf("FAIL failures=%d checks=%d\n", probe_failures, probe_checks);
		return 1;
	}
	printf("PASS checks=%d decoded=%llu fde=%llu\n", probe_checks, (unsigned long long)s.decoded, (unsigned long long)s.fde);
	return 0;
}
