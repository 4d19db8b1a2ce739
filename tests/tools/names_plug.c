/* SPDX-License-Identifier: MIT */
/*
 * names_plug.c - the plugin names_plug_main.c dlopen()s: a file-local key
 * "trace" and a static call "hook", named as the program's are.
 */
#include <switchyard.h>

static DEFINE_STATIC_KEY_FALSE(trace);

static int one(void)
{
	return 1;
}

static int two(void)
{
	return 2;
}

/* hidden: the program's hook is another call, never this one */
__attribute__((visibility("hidden"))) DEFINE_STATIC_CALL(hook, one);
SWITCHYARD_STATIC_CALL_TARGET(hook, one);
SWITCHYARD_STATIC_CALL_TARGET(hook, two);

__attribute__((visibility("default"))) int names_plug_trace(void);
__attribute__((visibility("default"))) int names_plug_hook(void);

__attribute__((visibility("default"))) int names_plug_trace(void)
{
	return static_branch_unlikely(&trace) ? 1 : 0;
}

__attribute__((visibility("default"))) int names_plug_hook(void)
{
	return static_call(hook)();
}
