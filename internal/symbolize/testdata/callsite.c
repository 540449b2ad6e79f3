/*
 * Fixture for the symbolize tests. The test builds it with gcc at test time
 * (see buildFixtures in fixture_test.go), e.g.:
 *
 *   gcc -g -O0 -fPIC -shared -o libcallsite.so libcallsite.c
 *   gcc -g -O0 -pie -fPIE -o callsite_pie callsite.c -L. -lcallsite -Wl,-rpath,$PWD
 *   gcc -g -O2 ... (same, optimized)
 *   gcc -g -O0 -no-pie -fno-pie ... (non-PIE)
 *
 * It records return addresses of calls on lines marked "@site:NAME" (the
 * test finds the line numbers by searching for the markers), prints them as
 * "site NAME 0xADDR", then prints "maps" and a copy of /proc/self/maps.
 */
#include <stdio.h>

extern void *lib_call(void);

static void *recorded;
static volatile int sink;

/* Records its own return address, i.e. the callsite in its caller. */
__attribute__((noinline)) void record(void)
{
	recorded = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void *direct_caller(void)
{
	record(); /* @site:direct */
	sink++;   /* keep the call above from being a tail call */
	return recorded;
}

static inline __attribute__((always_inline)) void inlined_helper(void)
{
	record(); /* @site:inlined */
	sink++;
}

__attribute__((noinline)) void *inline_host(void)
{
	sink++;
	inlined_helper(); /* @call:inlined_helper */
	sink++;
	return recorded;
}

int main(void)
{
	char buf[4096];
	size_t n;
	FILE *f;

	printf("site direct %p\n", direct_caller());
	printf("site inlined %p\n", inline_host());
	printf("site lib %p\n", lib_call());
	printf("maps\n");
	fflush(stdout);
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}
