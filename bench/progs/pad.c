/*
 * pad.c: BENCH_PAD bytes of code, linked before a benchmark program so that
 * the program's functions (its loops, their call sites) sit BENCH_PAD bytes
 * further on, with their instructions unchanged. runbench -layouts builds
 * the programs at several such shifts and rotates through them round by
 * round: on some CPUs a call's cost moves by several nanoseconds with the
 * address of the code that makes it (branch prediction is indexed by
 * address), with no library as with one, and a figure taken at a single
 * layout can be that layout's luck.
 *
 * Build: mpicc -DBENCH_PAD=736 -o prog pad.c prog.c (pad.c first).
 */
#ifndef BENCH_PAD
#error "define BENCH_PAD (bytes, a multiple of 16)"
#endif
#if BENCH_PAD % 16 != 0
#error "BENCH_PAD must be a multiple of 16 (the alignment of the program's functions)"
#endif
#define BENCH_STR_(x) #x
#define BENCH_STR(x) BENCH_STR_(x)

/* Never called: no prologue, no alignment, exactly BENCH_PAD bytes of text,
 * so the next object's functions move by BENCH_PAD. */
__asm__(".text\n"
	".globl bench_pad\n"
	".type bench_pad, @function\n"
	"bench_pad:\n"
	".fill " BENCH_STR(BENCH_PAD) ",1,0x90\n"
	".size bench_pad, " BENCH_STR(BENCH_PAD) "\n");
