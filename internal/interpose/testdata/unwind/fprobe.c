/* fprobe.c: the C leaf of ref.f90's chain. */
#include "probe.h"

/* "*": MAIN__, a local symbol that dladdr does not name. */
static const char *const chain[] = {"probe_f", "level3_", "level2_", "level1_", "*", "main", 0};

__attribute__((noinline)) int probe_f(void)
{
	volatile int n = probe("fortran chain", chain);
	return n;
}
