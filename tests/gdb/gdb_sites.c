/* SPDX-License-Identifier: MIT */
/*
 * gdb_sites.c - a debugger's breakpoint on a site never changes the path
 * the program takes (run by check_gdb.sh under gdb; see there).
 *
 *   gdb_sites before PLUGIN   gdb set a breakpoint on every site function
 *                             before `run` (the library registers sites
 *                             that hold int3 over the compiled jump; the
 *                             plugin's are pending, planted at dlopen):
 *                             every change succeeds, the breakpoints stay
 *   gdb_sites before-prepatched PLUGIN
 *                             the same with both files prepatched
 *                             (`switchyard prepatch`): the breakpoints
 *                             hide each site's initial form, TEST where
 *                             its key is off; a change that needs the
 *                             opcode under one is refused as below
 *   gdb_sites during PLUGIN   gdb plants them at marker_insert(), over
 *                             sites already patched: a change that needs
 *                             the opcode under a breakpoint fails with
 *                             -EBUSY and a message, the others succeed
 *   gdb_sites none PLUGIN     no debugger (a control of the program)
 *   gdb_sites list PLUGIN     each site function's site offset
 * In every mode each site function is called, and its path checked against
 * its key's state, after every change (and every call hits the breakpoint
 * while there is one); at marker_delete() gdb deletes every breakpoint and
 * the paths are checked again, before and after more changes, and every
 * site must end in its canonical form (no jump to the next instruction
 * left behind).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "gdb_sites.h"
#include "sy_test.h"

DEFINE_STATIC_KEY_FALSE(kf);
DEFINE_STATIC_KEY_TRUE(kt);
DEFINE_STATIC_KEY_TRUE(k3);	/* unlikely sites only */
GDB_PATH_FNS
static int (*plugin_path)(void);

GDB_SITE_FN(f_kf_unl_s, static_branch_unlikely, kf, GDB_NONE, GDB_NONE)
GDB_SITE_FN(f_kf_unl_l, static_branch_unlikely, kf, GDB_NONE, GDB_FILLER())
GDB_SITE_FN(f_kf_lik_s, static_branch_likely, kf, GDB_NONE, GDB_NONE)
GDB_SITE_FN(f_kf_lik_l, static_branch_likely, kf, GDB_FILLER(), GDB_NONE)
GDB_SITE_FN(f_kt_unl_s, static_branch_unlikely, kt, GDB_NONE, GDB_NONE)
GDB_SITE_FN(f_kt_unl_l, static_branch_unlikely, kt, GDB_NONE, GDB_FILLER())
GDB_SITE_FN(f_kt_lik_s, static_branch_likely, kt, GDB_NONE, GDB_NONE)
GDB_SITE_FN(f_kt_lik_l, static_branch_likely, kt, GDB_FILLER(), GDB_NONE)
GDB_SITE_FN(f_k3_unl_s, static_branch_unlikely, k3, GDB_NONE, GDB_NONE)
GDB_SITE_FN(f_k3_unl_l, static_branch_unlikely, k3, GDB_NONE, GDB_FILLER())

__attribute__((noinline, used)) void marker_insert(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void marker_delete(void)
{
	__asm__ volatile("" ::: "memory");
}

struct fn {
	void (*f)(void);
	const char *name;
	struct static_key *key;
	int len;
	const unsigned char *site;	/* found by introspection */
	size_t offset;			/* in its function */
};

static struct fn fns[12] = {
	{ f_kf_unl_s, "f_kf_unl_s", &kf.key, 2, NULL, 0 },
	{ f_kf_unl_l, "f_kf_unl_l", &kf.key, 5, NULL, 0 },
	{ f_kf_lik_s, "f_kf_lik_s", &kf.key, 2, NULL, 0 },
	{ f_kf_lik_l, "f_kf_lik_l", &kf.key, 5, NULL, 0 },
	{ f_kt_unl_s, "f_kt_unl_s", &kt.key, 2, NULL, 0 },
	{ f_kt_unl_l, "f_kt_unl_l", &kt.key, 5, NULL, 0 },
	{ f_kt_lik_s, "f_kt_lik_s", &kt.key, 2, NULL, 0 },
	{ f_kt_lik_l, "f_kt_lik_l", &kt.key, 5, NULL, 0 },
	{ f_k3_unl_s, "f_k3_unl_s", &k3.key, 2, NULL, 0 },
	{ f_k3_unl_l, "f_k3_unl_l", &k3.key, 5, NULL, 0 },
	{ NULL, "plugin_short", NULL, 2, NULL, 0 },
	{ NULL, "plugin_long", NULL, 5, NULL, 0 },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))

static struct static_key *plugin_key;
static int (*plugin_set)(int);

static int find_site(const struct switchyard_site_info *s, void *arg)
{
	(void)arg;
	for (size_t i = 0; i < NFNS; i++)
		if (s->function && !strcmp(s->function, fns[i].name)) {
			CHECK_EQ(s->length, fns[i].len);
			fns[i].site = (const unsigned char *)s->addr;
			fns[i].offset = s->offset;
		}
	return 0;
}

static void check_paths(const char *when)
{
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < NFNS; i++) {
			int want = static_key_enabled(fns[i].key), got;

			fns[i].f();
			got = fns[i].key == plugin_key ? plugin_path() : gdb_path;

			if (got != want)
				fprintf(stderr, "%s: %s took the %s path, its key "
					"is %s\n", when, fns[i].name,
					got ? "enabled" : "disabled",
					want ? "enabled" : "disabled");
			CHECK_EQ(got, want);
		}
}

/* How many sites hold int3 (a breakpoint) now. */
static int trapped(void)
{
	int n = 0;

	for (size_t i = 0; i < NFNS; i++)
		n += fns[i].site && fns[i].site[0] == 0xcc;
	return n;
}

static int set(struct static_key *key, int on)
{
	if (key == plugin_key)
		return plugin_set(on);
	return on ? static_key_enable(key) : static_key_disable(key);
}

static struct static_key *const keys[] = { &kf.key, &kt.key, &k3.key, NULL };

/* Flip every key and back, checking the paths after each change. */
static void flip_all(const char *when)
{
	for (int i = 0; keys[i] || plugin_key; i++) {
		struct static_key *k = keys[i] ? keys[i] : plugin_key;
		int was = static_key_enabled(k);

		CHECK_EQ(set(k, !was), 0);
		check_paths(when);
		CHECK_EQ(set(k, was), 0);
		check_paths(when);
		if (!keys[i])
			break;
	}
}

static char last_msg[1024];
static void on_log(enum switchyard_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
	fprintf(stderr, "log: %s\n", msg);
}

/* A change refused because of a breakpoint: -EBUSY, named, nothing done. */
static void refused(struct static_key *k, const char *fn_prefix)
{
	int was = static_key_enabled(k);

	last_msg[0] = 0;
	CHECK_EQ(set(k, !was), -EBUSY);
	CHECK_EQ(static_key_enabled(k), was);
	CHECK(strstr(last_msg, "breakpoint") != NULL);
	CHECK(strstr(last_msg, fn_prefix) != NULL);
	CHECK(strstr(last_msg, ".c:") != NULL);	/* file:line */
	check_paths("refused");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	bool before = !strncmp(mode, "before", 6);
	bool during = !strcmp(mode, "during");
	bool prepatched = !strcmp(mode, "before-prepatched");
	void *h;

	if (argc < 3)
		SKIP("usage: gdb_sites before|during|none PLUGIN.so");
	switchyard_set_log(on_log, NULL);
	h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (!h)
		return sy_test_done("gdb_sites");
	fns[10].f = (void (*)(void))dlsym(h, "plugin_short");
	fns[11].f = (void (*)(void))dlsym(h, "plugin_long");
	plugin_path = (int (*)(void))dlsym(h, "plugin_path");
	plugin_set = (int (*)(int))dlsym(h, "plugin_set");
	plugin_key = (struct static_key *)dlsym(h, "plugin_key");
	fns[10].key = fns[11].key = plugin_key;
	CHECK(fns[10].f && fns[11].f && plugin_set && plugin_key && plugin_path);
	if (!plugin_key)
		return sy_test_done("gdb_sites");

	for (int i = 0; keys[i]; i++)
		switchyard_for_each_site(keys[i], find_site, NULL);
	switchyard_for_each_site(plugin_key, find_site, NULL);
	for (size_t i = 0; i < NFNS; i++) {
		if (!fns[i].site)
			fprintf(stderr, "no site found in %s\n", fns[i].name);
		CHECK(fns[i].site != NULL);
	}
	if (sy_test_failures)
		return sy_test_done("gdb_sites");

	/* `gdb_sites list`: where to break (gcc puts the site first, where
	 * `break f` goes; clang may put an instruction before it) */
	if (!strcmp(mode, "list")) {
		for (size_t i = 0; i < NFNS; i++)
			printf("%s %zu\n", fns[i].name, fns[i].offset);
		return sy_test_done("gdb_sites");
	}
	/* The breakpoints sit where the test means them to. */
	CHECK_EQ(trapped(), before ? (int)NFNS : 0);
	check_paths("start");

	if (during) {
		flip_all("no breakpoint yet");
		marker_insert();
		CHECK_EQ(trapped(), (int)NFNS);
		check_paths("breakpoints planted");
	}
	if (during || prepatched) {
		/* kf, kt: sites of both kinds, one falls through under a
		 * breakpoint planted over TEST, and must jump: refused */
		refused(&kf.key, "f_kf_");
		refused(&kt.key, "f_kt_");
		refused(plugin_key, "plugin_");
		/* k3: its sites jump; falling through needs only the rel */
		CHECK_EQ(static_key_disable(&k3.key), 0);
		check_paths("k3 disabled under breakpoints");
		CHECK_EQ(static_key_enable(&k3.key), 0);
		check_paths("k3 enabled under breakpoints");
		CHECK_EQ(static_key_disable(&k3.key), 0);
		check_paths("k3 disabled under breakpoints");
	} else {
		flip_all("under breakpoints");
		/* leave every key changed, to be seen after the delete */
		for (int i = 0; keys[i]; i++)
			CHECK_EQ(set(keys[i], !static_key_enabled(keys[i])), 0);
		CHECK_EQ(set(plugin_key, 1), 0);
		check_paths("changed under breakpoints");
	}
	CHECK_EQ(trapped(), !strcmp(mode, "none") ? 0 : (int)NFNS);

	marker_delete();
	CHECK_EQ(trapped(), 0);
	check_paths("breakpoints deleted");
	flip_all("after delete");
	/* canonical again: a site that falls through holds TEST */
	for (size_t i = 0; i < NFNS; i++)
		if (fns[i].site[0] != 0xeb && fns[i].site[0] != 0xe9) {
			if (fns[i].site[0] != 0xa8 && fns[i].site[0] != 0xa9)
				fprintf(stderr, "%s: site holds %02x %02x\n",
					fns[i].name, fns[i].site[0],
					fns[i].site[1]);
			CHECK(fns[i].site[0] == 0xa8 || fns[i].site[0] == 0xa9);
		}
	return sy_test_done("gdb_sites");
}
