/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_unload - a plugin's deferred key has its final decrement
 * queued when the plugin is dlclose()d.
 *
 *   test_deferred_unload_linked PLUGIN        this executable links
 *       libswitchyard: only the plugin, which holds the key and its queued
 *       work, goes away; the worker must not touch them afterwards.
 *   test_deferred_unload_plugin_only PLUGIN   this executable does not
 *       link libswitchyard (nor include its headers): the plugin pulls it
 *       in, so dlclose() may unload libswitchyard too; it must not be
 *       unmapped under its own worker thread.
 *   test_deferred_unload_nopatch, test_deferred_unload_plugin_only_nopatch
 *       the same with the plugin (and the linked executable) in fallback
 *       mode (SWITCHYARD_NO_PATCHING): no site table, so the plugin's
 *       queued work is dropped by the destructor <switchyard.h> gives every
 *       translation unit there. That destructor is what _nopatch tests
 *       (libswitchyard stays: without it, a plugin built with
 *       SY__NO_DSO_GLUE, the worker reads the unmapped work: SIGSEGV);
 *       in _plugin_only_nopatch libswitchyard goes with the plugin, whose
 *       work is dropped with the whole queue.
 *
 * Three rounds: dlopen the plugin, queue its key's final decrement (due in
 * 100 ms), dlclose it, wait 300 ms. The process must survive; the linked
 * variant then checks that keys and the deferred worker still work.
 */
#include <dlfcn.h>

#ifdef SY_LINKED
#include "sy_test.h"
#else
#include "sy_check.h"	/* no <switchyard.h>: nothing links the library */
#endif
#include "sy_watchdog.h"

#ifdef SY_LINKED
DEFINE_STATIC_KEY_DEFERRED_FALSE(exe_dkey, 1);

__attribute__((noinline)) static int exe_site(void)
{
	return static_branch_unlikely(&exe_dkey.key);
}
#ifdef SWITCHYARD_NO_PATCHING
#define NAME "test_deferred_unload_nopatch"
#else
#define NAME "test_deferred_unload_linked"
#endif
#elif defined(SWITCHYARD_NO_PATCHING)	/* only the plugin's build matters */
#define NAME "test_deferred_unload_plugin_only_nopatch"
#else
#define NAME "test_deferred_unload_plugin_only"
#endif

static int switchyard_loaded(void)
{
	void *h = dlopen("libswitchyard.so." SY_SOVERSION, RTLD_NOW | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PLUGIN\n", argv[0]);
		return 2;
	}
	sy_watchdog_arm(30, "the rounds did not finish in 30 s");
#ifdef SY_LINKED
	CHECK(switchyard_loaded());
#else
	/* the scenario: only the plugin brings the library in */
	CHECK(!switchyard_loaded());
#endif
	for (int round = 0; round < 3; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
			return 1;
		}
		int (*site)(void) = (int (*)(void))sym(h, "deferred_plugin_site");
		int (*count)(void) = (int (*)(void))sym(h, "deferred_plugin_count");
		int (*queue)(void) = (int (*)(void))sym(h, "deferred_plugin_queue");

		CHECK(switchyard_loaded());
		CHECK_EQ(count(), 0);
		CHECK_EQ(site(), 0);
		CHECK_EQ(queue(), 0);
		/* the final decrement is queued, due in 100 ms */
		CHECK_EQ(count(), 1);
		CHECK_EQ(site(), 1);
		CHECK_EQ(dlclose(h), 0);
		printf("round %d: plugin closed with its decrement queued; "
		       "libswitchyard %s\n", round,
		       switchyard_loaded() ? "still loaded" : "unloaded");
		fflush(stdout);
		sy_sleep_ms(300);	/* well past the decrement's deadline */
	}
#ifdef SY_LINKED
	/* the worker and the keys still work */
	CHECK_EQ(static_branch_deferred_inc(&exe_dkey), 0);
	CHECK_EQ(exe_site(), 1);
	CHECK_EQ(static_branch_slow_dec_deferred(&exe_dkey), 0);
	/* the worker's decrement, due in 1 ms (the count drops before the
	 * site is written) */
	for (int i = 0; i < 5000 && (static_key_count(&exe_dkey.key.key) ||
				     exe_site()); i++)
		sy_sleep_ms(1);
	CHECK_EQ(static_key_count(&exe_dkey.key.key), 0);
	CHECK_EQ(exe_site(), 0);
	CHECK_EQ(static_key_deferred_flush(&exe_dkey), 0);
	sy_test_check_sites(&exe_dkey.key.key);
#endif
	sy_watchdog_disarm();
	return sy_test_done(NAME);
}
