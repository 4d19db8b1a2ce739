/* Test (c): backtrace() from inside the static-call target must include the caller and main.
 * Also the gdb target for test (d). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <string.h>
#include "sc.h"

int bt_seen_caller, bt_seen_main, bt_depth;
char bt_trace[512];

__attribute__((noinline)) long bt_callee(long x)
{
	void *pcs[32];
	int n = backtrace(pcs, 32);
	bt_depth = n; bt_trace[0] = 0;
	for (int i = 0; i < n; i++) {
		Dl_info di;
		const char *s = dladdr(pcs[i], &di) && di.dli_sname ? di.dli_sname : "?";
		if (!strcmp(s, "bt_caller")) bt_seen_caller++;
		if (!strcmp(s, "main")) bt_seen_main++;
		if (strlen(bt_trace) + strlen(s) + 4 < sizeof bt_trace) { strcat(bt_trace, s); strcat(bt_trace, " < "); }
	}
	return x * 2;
}
#if defined(SY_SC_TRAMP) && SY_SC_TRAMP
SY_TRAMP_DECLARE(bt_callee, long, (long));
SY_TRAMP_DEFINE(bt_callee, bt_callee);
#endif

volatile long sink;
__attribute__((noinline)) long bt_caller(long x)
{
	volatile long a = x + 1, b = x + 2;
	long r = SY_SC_CALL1(bt_callee, x);   /* SITE_LINE */
	sink = r + a;                         /* AFTER_LINE */
	sink += b;
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	long r = bt_caller(argc + 20);
	int ok = r == 2 * (argc + 20) && bt_seen_caller == 1 && bt_seen_main == 1;
	printf("  backtrace: %s\n", bt_trace);
	printf("t_bt: %s (caller seen %d, main seen %d)\n", ok ? "PASS" : "FAIL", bt_seen_caller, bt_seen_main);
	return !ok;
}
