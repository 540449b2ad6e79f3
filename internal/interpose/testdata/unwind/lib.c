/* lib.c: a shared library of the program's own (ref.c): calls from it and
 * through it, built with or without frame pointers or call-frame
 * information by unwind_test.go. */
#include "probe.h"

static const char *const direct[] = {"lib_direct", "lib_outer", "call_lib", "main", 0};

__attribute__((noinline)) int lib_direct(int x)
{
#ifdef NOCFI
	int n = probe_nobt("lib_direct", direct); /* backtrace() stops here */
#else
	int n = probe("lib_direct", direct);
#endif
	return n + x;
}

__attribute__((noinline)) int lib_mid(int (*cb)(int), int x)
{
	int n = cb(x + 1);
	return n + x;
}

__attribute__((noinline)) int lib_outer(int (*cb)(int), int x)
{
	int n = lib_mid(cb, x) + lib_direct(x);
	return n + 1;
}
