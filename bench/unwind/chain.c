/* chain.c: the unwinder's benchmark (runbench -only unwind; main.c).
 * A chain of 20 functions whose last one walks its stack again and again
 * with ms_unwind; runbench builds it with and without frame pointers and
 * without call-frame information. */
#include <stdint.h>

#include "unwind.h"

int bench_walks(int max, long n); /* main.c */

/* walk_once: a wrapper's place: MS_UNWIND_CALLER walks from its caller. */
__attribute__((noinline)) int walk_once(uintptr_t *out, int max) { return MS_UNWIND_CALLER(out, max); }

volatile int chain_sink;
#define LINK(name, next)                                                                  \
	__attribute__((noinline)) int name(int max, long n)                               \
	{                                                                                  \
		int r = next(max, n);                                                      \
		chain_sink += r; /* not a tail call */                                    \
		return r;                                                                  \
	}
LINK(f20, bench_walks)
LINK(f19, f20)
LINK(f18, f19)
LINK(f17, f18)
LINK(f16, f17)
LINK(f15, f16)
LINK(f14, f15)
LINK(f13, f14)
LINK(f12, f13)
LINK(f11, f12)
LINK(f10, f11)
LINK(f9, f10)
LINK(f8, f9)
LINK(f7, f8)
LINK(f6, f7)
LINK(f5, f6)
LINK(f4, f5)
LINK(f3, f4)
LINK(f2, f3)
LINK(f1, f2)
