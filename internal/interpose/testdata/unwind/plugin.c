/* plugin.c: a library that ref.c opens with dlopen after the unwinder has
 * read the loaded objects: its addresses are unknown until it reads them
 * again. */
#include "probe.h"

static const char *const chain[] = {"plugin_entry", "main", 0};

__attribute__((noinline)) int plugin_entry(int x)
{
	volatile int n = probe("a library opened with dlopen", chain);
	return n + x;
}
