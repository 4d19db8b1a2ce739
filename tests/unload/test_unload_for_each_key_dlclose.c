/* SPDX-License-Identifier: MIT */
/*
 * test_unload_for_each_key_dlclose - a switchyard_for_each_key() callback
 * dlclose()s a library whose key has not been listed yet.
 *
 *   test_unload_for_each_key_dlclose LIBLISTED
 *
 * LIBLISTED's key listed_key (3 sites) holds two references. Keys are
 * listed in address order, this executable's first; the callback for
 * this executable's key closes the library. The walk must finish and
 * return 0, and still deliver listed_key as snapshotted under the lock:
 * its name, its object, enabled, count 2, 3 sites. A later walk no longer
 * lists it.
 */
#include <dlfcn.h>

#include "sy_test.h"

DEFINE_STATIC_KEY_FALSE(walk_key);

__attribute__((noinline)) static int walk_site(void)
{
	return static_branch_unlikely(&walk_key);
}

static void *lib;
static const struct static_key *listed;	/* dangling once lib is closed */

struct walk {
	int calls, closed_at, listed_at, listed_before;
	char name[128], object[512];
	int enabled, count;
	size_t sites;
};

static int on_key(const struct switchyard_key_info *k, void *arg)
{
	struct walk *w = arg;

	w->calls++;
	if (k->key == listed) {
		if (!lib && w->closed_at)
			w->listed_at = w->calls;
		else
			w->listed_before = 1;
		snprintf(w->name, sizeof(w->name), "%s", k->name ? k->name : "");
		snprintf(w->object, sizeof(w->object), "%s",
			 k->object ? k->object : "");
		w->enabled = k->enabled;
		w->count = k->count;
		w->sites = k->sites;
	}
	if (k->key == &walk_key.key && lib) {
		CHECK_EQ(dlclose(lib), 0);
		lib = NULL;
		w->closed_at = w->calls;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct walk w = { 0 };

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBLISTED\n", argv[0]);
		return 2;
	}
	if (!SY_TEST_HAVE_SITES)
		SKIP("no patched sites in this build (fallback mode)");
	CHECK_EQ(walk_site(), 0);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	int (*inc)(void) = (int (*)(void))dlsym(lib, "listed_inc");
	int (*site)(void) = (int (*)(void))dlsym(lib, "listed_site_1");

	listed = (const struct static_key *)dlsym(lib, "listed_key");
	if (!inc || !site || !listed) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	if ((const void *)listed < (const void *)&walk_key)
		SKIP("the library's key lies below the executable's (unusual "
		     "layout): it would be listed first");
	CHECK_EQ(inc(), 0);
	CHECK_EQ(inc(), 0);
	CHECK_EQ(site(), 1);

	CHECK_EQ(switchyard_for_each_key(on_key, &w), 0);
	printf("%d keys listed; the library closed in callback %d, its key "
	       "listed in callback %d as %s (%s): enabled %d, count %d, %zu "
	       "sites\n",
	       w.calls, w.closed_at, w.listed_at, w.name, w.object, w.enabled,
	       w.count, w.sites);
	CHECK(w.closed_at > 0);
	CHECK_EQ(w.listed_before, 0);
	CHECK(w.listed_at > w.closed_at);
	CHECK(!strcmp(w.name, "listed_key"));
	CHECK(strstr(w.object, "libunload_listed") != NULL);
	CHECK_EQ(w.enabled, 1);
	CHECK_EQ(w.count, 2);
	CHECK_EQ(w.sites, 3);

	/* gone from the next walk; this executable's key still there */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(switchyard_for_each_key(on_key, &w), 0);
	CHECK_EQ(w.listed_at + w.listed_before, 0);
	CHECK_EQ(static_branch_enable(&walk_key), 0);
	CHECK_EQ(walk_site(), 1);
	CHECK_EQ(static_branch_disable(&walk_key), 0);
	CHECK_EQ(walk_site(), 0);
	return sy_test_done("test_unload_for_each_key_dlclose");
}
