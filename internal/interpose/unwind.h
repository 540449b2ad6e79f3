/*
 * unwind.h: the call-path unwinder (unwind.c; design in docs/callpaths.md).
 *
 * x86-64 Linux. Walks the stack with frame pointers and with the rules of
 * each object's call-frame information (.eh_frame_hdr/.eh_frame), decoded
 * once per return address and kept in a fixed-size table published
 * atomically. Every word read from the stack is checked against the
 * thread's stack bounds first and every return address against the
 * executable segments of the loaded objects, so a corrupt stack ends the
 * walk, never the program.
 *
 * Costs per walk, once a path's return addresses have been seen: no malloc,
 * no lock, one table lookup per frame. The first walk of a thread reads its
 * stack bounds (pthread_getattr_np, which may malloc: not from a signal
 * handler); a return address seen for the first time is decoded under a
 * mutex (no malloc; dl_iterate_phdr when the address is in no known object).
 */
#ifndef MS_UNWIND_H
#define MS_UNWIND_H

#include <stdint.h>

/* Inside libmpiscope only (as MS_HIDDEN in ms.h, which needs mpi.h):
 * neither exported nor interposable, so calls are direct. */
#define MS_UNWIND_API __attribute__((visibility("hidden")))

/* Walks up from an application frame (pc = a return address into the
 * application, sp = the stack pointer value right after that call returns,
 * i.e. the CFA of the frame that made the call, fp = that frame's rbp),
 * mixing frame pointers and cached .eh_frame rules, validated, skipping
 * nothing; writes up to max return addresses to out (out[0] = pc); returns
 * how many. No malloc or lock on addresses already seen. */
MS_UNWIND_API int ms_unwind(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t *out, int max);

/* ms_unwind_hint is ms_unwind that also writes each frame's rule to
 * rules[i] (a word of unwind.c's own), and follows a hint: the frames and
 * rules of an earlier walk (nh of them; call paths pass the last path
 * walked from the same callsite). While the frames found equal the hint's,
 * position by position, their rules are taken from the hint, not looked up:
 * a walk over a path walked before costs its loads and compares. *same is
 * the number of leading frames equal to the hint's (the path is the hint's
 * when *same == nh == the count returned). A rule of 0 in the hint means
 * unknown: looked up. */
#define MS_UNWIND_RULE_FP 0x00000010fff0ff01ull /* the rule of a frame-pointer step (UW_FRAME_RULE) */
MS_UNWIND_API int ms_unwind_hint(uintptr_t pc, uintptr_t sp, uintptr_t fp, uintptr_t *out, uint64_t *rules, int max,
                                 const uintptr_t *hint, const uint64_t *hrule, int nh, int *same);

/* Cold: at MPI_Init. Reads the loaded objects and this thread's stack
 * bounds. Optional: the first walk does the same. */
MS_UNWIND_API void ms_unwind_init(void);

/* MS_UNWIND_CALLER(out, max) walks from the caller of the function it is
 * written in (a wrapper): pc = its return address, sp = its CFA, fp = the
 * caller's rbp as saved by the function's prologue. __builtin_frame_address(0)
 * makes GCC and Clang give the function a frame pointer, so that rbp + 16 is
 * its CFA and [rbp] the caller's rbp. The function must not be inlined. */
#define MS_UNWIND_CALLER(out, max)                                            \
	ms_unwind((uintptr_t)__builtin_return_address(0),                     \
	          (uintptr_t)__builtin_frame_address(0) + 16,                 \
	          *(uintptr_t *)__builtin_frame_address(0), (out), (max))

/* Cold: of up to 256 functions of the main program (from its
 * .eh_frame_hdr), how many keep a frame pointer (their rule at one of
 * seven points through the function is the frame pointer's) of how many
 * could be judged. Both 0 when the
 * program has no .eh_frame_hdr. Call paths choose their default depth from
 * it (callpath.c). */
MS_UNWIND_API void ms_unwind_main_fp(int *fp, int *sampled);

/* What the unwinder did so far (tests, benchmarks, the report's settings). */
typedef struct ms_unwind_stats {
	uint64_t decoded;  /* return addresses decoded (each once) */
	uint64_t cached;   /* of which in the rule table */
	uint64_t fde;      /* of which with an .eh_frame rule (others: frame pointer, end) */
	uint64_t rejected; /* addresses found in no executable segment */
	uint64_t scans;    /* dl_iterate_phdr scans that found a change */
	uint64_t segments; /* executable segments known */
} ms_unwind_stats;

MS_UNWIND_API void ms_unwind_stats_get(ms_unwind_stats *s);

#endif
