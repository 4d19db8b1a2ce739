/* SPDX-License-Identifier: MIT */
/*
 * driver.c - a C program that loads a Rust cdylib with a static key and a
 * static call (libswitchyard_plugin_sc_tests.so, argv[1]) with dlopen,
 * three times: the key's site and the call's site work before the first
 * call (registered before dlopen returned), follow their changes, and
 * dlclose then dlopen starts from the definitions again. Prints "ok" and
 * exits 0, else says what failed and exits 1.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FAIL(...)                                                              \
	do {                                                                   \
		fprintf(stderr, "driver: round %d: ", round);                  \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		return 1;                                                      \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: driver PLUGIN.so\n");
		return 2;
	}
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		bool (*unlikely)(void);
		int (*set)(bool);
		uint64_t (*call)(uint64_t);
		int (*update)(uint32_t);
		int (*patched)(void);

		if (!h)
			FAIL("dlopen: %s", dlerror());
		*(void **)&unlikely = dlsym(h, "plugin_key_unlikely");
		*(void **)&set = dlsym(h, "plugin_key_set");
		*(void **)&call = dlsym(h, "plugin_sc_call");
		*(void **)&update = dlsym(h, "plugin_sc_update");
		*(void **)&patched = dlsym(h, "plugin_sc_patched");
		if (!unlikely || !set || !call || !update || !patched)
			FAIL("a symbol is missing: %s", dlerror());
		/* before any change: the definitions (false; double) */
		if (unlikely())
			FAIL("the key's site jumps before any change");
		if (patched() != 1)
			FAIL("the call's site is not patched after dlopen");
		if (call(3) != 6)
			FAIL("call(3) = %llu, want 6", (unsigned long long)call(3));
		if (set(true) || !unlikely())
			FAIL("enable: the site does not jump");
		if (set(false) || unlikely())
			FAIL("disable: the site still jumps");
		if (update(1) || call(3) != 9)
			FAIL("update to square: call(3) = %llu",
			     (unsigned long long)call(3));
		if (update(2) || call(3) != 0)
			FAIL("update to RET0: call(3) = %llu",
			     (unsigned long long)call(3));
		if (update(3))
			FAIL("update to NULL refused");
		(void)call(3);	/* no call; the value is unspecified */
		/* left changed: the next load must start afresh */
		if (set(true) || update(1))
			FAIL("the last changes were refused");
		if (dlclose(h))
			FAIL("dlclose: %s", dlerror());
	}
	puts("ok");
	return 0;
}
