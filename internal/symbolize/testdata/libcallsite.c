/*
 * Shared-library half of the symbolize fixture; see callsite.c.
 *   gcc -g -O0 -fPIC -shared -o libcallsite.so libcallsite.c
 */
static volatile int lib_sink;

__attribute__((noinline)) void *lib_capture(void)
{
	void *ra = __builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
	return ra;
}

__attribute__((noinline)) void *lib_call(void)
{
	void *ra;

	lib_sink++;
	ra = lib_capture(); /* @site:lib */
	lib_sink++;
	return ra;
}
