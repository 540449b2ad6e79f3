/* probe.h: the reference check of the unwinder tests (probe.c). */
#ifndef PROBE_H
#define PROBE_H
#ifdef __cplusplus
extern "C" {
#endif
/* probe compares ms_unwind's frames, walked from probe's caller, with
 * glibc's backtrace() taken in the same frame, frame for frame, and, when
 * names is not NULL, the names of the first frames (a NULL-terminated
 * list, "*" for any; dladdr, so the program is linked with -rdynamic) with what the
 * program's construction says. Returns the number of frames; a mismatch
 * is printed and counted in probe_failures. */
int probe(const char *where, const char *const *names);
/* probe_nobt: the same without backtrace() (code it cannot walk). */
int probe_nobt(const char *where, const char *const *names);
extern int probe_failures, probe_checks;
/* probe_summary prints "PASS checks=N" or "FAIL ..." and returns the exit status. */
int probe_summary(void);
#ifdef __cplusplus
}
#endif
#endif
