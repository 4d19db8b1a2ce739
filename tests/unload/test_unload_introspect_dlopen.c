/* SPDX-License-Identifier: MIT */
/*
 * test_unload_introspect_dlopen - switchyard_for_each_key() in a loop in
 * one thread while another dlopen()s and dlclose()s a library with sites.
 *
 *   test_unload_introspect_dlopen LIBMANY [seconds]   (default 2)
 *
 * Both threads must keep making progress: the test fails as soon as either
 * has not completed a loop for 20 s (not less: a loaded machine is slow,
 * not hung; a lock-order inversion between the
 * patch lock and the dynamic linker's lock hangs both). Every walk must
 * return 0 and list this executable's key with its site.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "sy_test.h"
#include "sy_watchdog.h"

DEFINE_STATIC_KEY_FALSE(intro_key);

__attribute__((noinline)) static int intro_site(void)
{
	return static_branch_unlikely(&intro_key);
}

static const char *lib;
static atomic_bool stop;
static _Atomic unsigned long walks, cycles, bad_walks, dl_errors;

static int on_key(const struct switchyard_key_info *k, void *arg)
{
	int *seen = arg;

	if (k->key == &intro_key.key)
		*seen += k->sites == 1 && k->count == 0 && !k->enabled;
	return 0;
}

static void *introspector(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int seen = 0;

		if (switchyard_for_each_key(on_key, &seen) || seen != 1)
			atomic_fetch_add(&bad_walks, 1);
		atomic_fetch_add(&walks, 1);
	}
	return NULL;
}

static void *loader(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (!h || dlclose(h))
			atomic_fetch_add(&dl_errors, 1);
		atomic_fetch_add(&cycles, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2;
	pthread_t a, b;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBMANY [seconds]\n", argv[0]);
		return 2;
	}
	lib = argv[1];
	CHECK_EQ(intro_site(), 0);
	CHECK_EQ(pthread_create(&a, NULL, introspector, NULL), 0);
	CHECK_EQ(pthread_create(&b, NULL, loader, NULL), 0);

	struct sy_progress p[] = {
		{ "switchyard_for_each_key() walks", &walks, 0, 0 },
		{ "dlopen/dlclose cycles", &cycles, 0, 0 },
	};
	sy_watch_progress(p, 2, secs, 20);
	atomic_store(&stop, 1);
	sy_watchdog_arm(20, "threads did not stop within 20 s");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	sy_watchdog_disarm();
	printf("%lu walks, %lu dlopen/dlclose cycles in %.1f s\n",
	       atomic_load(&walks), atomic_load(&cycles), secs);
	CHECK_EQ(atomic_load(&bad_walks), 0);
	CHECK_EQ(atomic_load(&dl_errors), 0);
	return sy_test_done("test_unload_introspect_dlopen");
}
