/* garbage.c: stack corruption (garbage.S). Each case walks from a frame
 * whose rbp or stack slots hold garbage: the walk stops at the last good
 * frame, with exactly the frames up to there, and never faults. Then walks
 * from random registers over a stack buffer of random words. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"
#include "unwind.h"

void no_cfi_rbp(void (*fn)(void), uintptr_t rbp);
void fake_frame(void (*fn)(void), uintptr_t ra);
void cfi_bad_ra(void (*fn)(void));
void cfi_lying_rbp(void (*fn)(void));
void cfi_huge_cfa(void (*fn)(void));
void honest_rbp(void (*fn)(void));
extern char ret_no_cfi_rbp[], ret_fake_frame[], ret_cfi_bad_ra[], ret_cfi_lying_rbp[], ret_cfi_huge_cfa[],
	ret_honest_rbp[];

static uintptr_t got[64];
static int ngot;
static int failures;

__attribute__((noinline)) static void capture(void)
{
	ngot = MS_UNWIND_CALLER(got, 64);
	__asm__ volatile("" ::: "memory");
}

static void expect(const char *what, int want, const char *first)
{
	if (ngot != want || got[0] != (uintptr_t)first) {
		fprintf(stderr, "%s: %d frames from %#lx, want %d from %p\n", what, ngot, (unsigned long)got[0], want,
		        (void *)first);
		failures++;
	}
}

static void reference(void) { probe("honest rbp", NULL); }

int main(void)
{
	ms_unwind_init();
	pthread_attr_t a;
	void *stk;
	size_t size;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &stk, &size);
	uintptr_t top = (uintptr_t)stk + size;
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	void *heap = malloc(64);
	uintptr_t bad[] = {0, 8, 0x1234, (uintptr_t)heap, here - 4096, here + 3, top - 8, top, ~(uintptr_t)7};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char what[64];
		snprintf(what, sizeof what, "rbp = garbage %zu", i);
		no_cfi_rbp(capture, bad[i]);
		expect(what, 1, ret_no_cfi_rbp);
	}
	fake_frame(capture, 0xdeadbeef);
	expect("fake frame, garbage return address", 1, ret_fake_frame);
	/* Address 0, which an empty slot of uw_fkeys would match (unwind.c:
	 * its slot 0 holds 1), and 2^63, not a user-space address. */
	fake_frame(capture, 0);
	expect("fake frame, return address 0", 1, ret_fake_frame);
	fake_frame(capture, (uintptr_t)1 << 63);
	expect("fake frame, return address 2^63", 1, ret_fake_frame);
	fake_frame(capture, (uintptr_t)ret_fake_frame);
	expect("fake frame looping on itself", 2, ret_fake_frame);
	cfi_bad_ra(capture);
	expect("return address slot holds garbage", 1, ret_cfi_bad_ra);
	cfi_lying_rbp(capture);
	expect("CFA = garbage rbp + 16", 1, ret_cfi_lying_rbp);
	cfi_huge_cfa(capture);
	expect("CFA above the stack", 1, ret_cfi_huge_cfa);
	honest_rbp(capture);
	if (ngot < 4 || got[0] != (uintptr_t)ret_honest_rbp) {
		fprintf(stderr, "rbp as a general register, saved: %d frames, want the whole stack\n", ngot);
		failures++;
	}
	honest_rbp(reference); /* frame for frame with backtrace() */

	/* Random registers over a buffer of random words: stack addresses
	 * (some in the buffer), code addresses, small numbers. */
	uintptr_t buf[512];
	uintptr_t code[] = {(uintptr_t)ret_fake_frame, (uintptr_t)ret_honest_rbp, (uintptr_t)main + 17,
	                    (uintptr_t)capture + 5, (uintptr_t)ret_cfi_bad_ra};
	srand(1);
	long frames = 0;
	for (int iter = 0; iter < 20000; iter++) {
		for (int i = 0; i < 512; i++) {
			switch (rand() % 4) {
			case 0:
				buf[i] = (uintptr_t)&buf[rand() % 512];
				break;
			case 1:
				buf[i] = code[rand() % 5] + (uintptr_t)(rand() % 3);
				break;
			case 2:
				buf[i] = (uintptr_t)rand() * (uintptr_t)rand();
				break;
			default:
				buf[i] = (uintptr_t)&buf[rand() % 512] + (uintptr_t)(rand() % 16);
			}
		}
		uintptr_t out[32];
		uintptr_t sp = (uintptr_t)&buf[rand() % 256];
		uintptr_t fp = rand() % 2 ? buf[rand() % 512] : (uintptr_t)&buf[rand() % 512];
		int n = ms_unwind(code[rand() % 5], sp, fp, out, 32);
		if (n < 1 || n > 32) {
			fprintf(stderr, "random walk %d: %d frames\n", iter, n);
			failures++;
		}
		frames += n;
	}
	printf("random walks: 20000, %ld frames\n", frames);
	free(heap);
	pthread_attr_destroy(&a);
	int st = probe_summary();
	if (failures) {
		printf("FAIL garbage failures=%d\n", failures);
		return 1;
	}
	return st;
}
