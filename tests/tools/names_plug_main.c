/* SPDX-License-Identifier: MIT */
/*
 * names_plug_main.c - a program and the plugin it dlopen()s
 * (names_plug.c) that both define a file-local key "trace" and a static
 * call "hook" (test_names_live.sh plugin): the key's listed name changes
 * when the plugin loads ("trace", then "names_plug:trace"); a qualified
 * name must select the same key before and after.
 *
 * usage: names_plug PLUGIN.so. Prints "ready PID", then the states
 * ("exe=0 plug=- hook=1 plug_hook=-", "-": not loaded) at start and for
 * every line on its standard input; the line "load" first dlopen()s the
 * plugin. Exits when its standard input closes.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

DEFINE_STATIC_CALL(hook, one);
SWITCHYARD_STATIC_CALL_TARGET(hook, one);
SWITCHYARD_STATIC_CALL_TARGET(hook, two);

static __attribute__((noinline)) int exe_trace(void)
{
	return static_branch_unlikely(&trace) ? 1 : 0;
}

static __attribute__((noinline)) int exe_hook(void)
{
	return static_call(hook)();
}

int main(int argc, char **argv)
{
	int (*plug_trace)(void) = NULL, (*plug_hook)(void) = NULL;
	char line[64] = "";

	if (argc != 2) {
		fprintf(stderr, "usage: names_plug PLUGIN.so\n");
		return 2;
	}
	printf("ready %d\n", (int)getpid());
	do {
		if (!strcmp(line, "load\n") && !plug_trace) {
			void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

			if (!h) {
				fprintf(stderr, "dlopen: %s\n", dlerror());
				return 1;
			}
			*(void **)&plug_trace = dlsym(h, "names_plug_trace");
			*(void **)&plug_hook = dlsym(h, "names_plug_hook");
			if (!plug_trace || !plug_hook) {
				fprintf(stderr, "dlsym: %s\n", dlerror());
				return 1;
			}
		}
		if (plug_trace)
			printf("exe=%d plug=%d hook=%d plug_hook=%d\n",
			       exe_trace(), plug_trace(), exe_hook(),
			       plug_hook());
		else
			printf("exe=%d plug=- hook=%d plug_hook=-\n",
			       exe_trace(), exe_hook());
		fflush(stdout);
	} while (fgets(line, sizeof(line), stdin));
	return 0;
}
