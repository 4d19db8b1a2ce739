/* SPDX-License-Identifier: MIT */
/*
 * test_dso.c - keys and sites across shared objects.
 *
 *   test_dso LIBDYN local|global [cycles]
 *
 * shared_key is defined in libkey.so and used by this executable, by
 * libkey.so itself, by libuser.so (library <-> library) and by libdyn.so,
 * opened with dlopen (RTLD_LOCAL or RTLD_GLOBAL) while the key is enabled:
 * its constructor must already see its site patched. Every site's path is
 * checked after every change; libdyn.so is closed and keys flipped again
 * (nothing may be written into the unmapped object); then `cycles`
 * dlopen/dlclose rounds run while another thread flips the key.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "sy_test.h"
#include "dso.h"

/* Defined here, used by libuser.so too (executable -> library). */
DSO_API DEFINE_STATIC_KEY_TRUE(exe_key);

__attribute__((noinline)) static int exe_key_site(void)
{
	return static_branch_likely(&exe_key);
}

static void test_exe_key(void)
{
	CHECK(exe_key_site() && libuser_exe_key_site());
	CHECK_EQ(static_branch_disable(&exe_key), 0);
	CHECK(!exe_key_site() && !libuser_exe_key_site());
	CHECK_EQ(static_branch_enable(&exe_key), 0);
	CHECK(exe_key_site() && libuser_exe_key_site());
	sy_test_check_sites(&exe_key.key);
}

enum { EXE_SITE_LINE = __LINE__ + 3 };	/* the line of the site below */
__attribute__((noinline)) static int exe_site(void)
{
	return static_branch_unlikely(&shared_key);
}

static void *dyn;
static int (*dyn_site)(void);
static int *dyn_ctor_site, *dyn_ctor_key;

static void check_all(int want)
{
	CHECK_EQ(static_key_enabled(&shared_key), want);
	CHECK_EQ(exe_site(), want);
	CHECK_EQ(libkey_site(), want);
	CHECK_EQ(libuser_site(), want);
	if (dyn)
		CHECK_EQ(dyn_site(), want);
	sy_test_check_sites(&shared_key.key);	/* this executable's */
}

static void open_dyn(const char *path, int mode)
{
	dyn = dlopen(path, RTLD_NOW | mode);
	if (!dyn) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
	dyn_site = (int (*)(void))dlsym(dyn, "libdyn_site");
	dyn_ctor_site = (int *)dlsym(dyn, "libdyn_ctor_site");
	dyn_ctor_key = (int *)dlsym(dyn, "libdyn_ctor_key");
	if (!dyn_site || !dyn_ctor_site || !dyn_ctor_key) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		exit(1);
	}
}

static void close_dyn(void)
{
	CHECK_EQ(dlclose(dyn), 0);
	dyn = NULL;
	dyn_site = NULL;
}

/* ---- introspection -------------------------------------------------------- */

struct seen {
	int shared, hidden, own;
	size_t shared_sites;
	int sites, in_exe, in_libkey, in_libuser, in_libdyn, jumping;
};

static int on_key(const struct switchyard_key_info *k, void *arg)
{
	struct seen *s = arg;

	if (!strcmp(k->name, "shared_key")) {
		s->shared++;
		s->shared_sites = k->sites;
		CHECK(strstr(k->object, "libkey") != NULL);
		CHECK_EQ(k->enabled, static_key_enabled(&shared_key));
		CHECK_EQ(k->count, static_key_count(&shared_key.key));
		CHECK(k->key == &shared_key.key);
	} else if (!strcmp(k->name, "libkey_hidden")) {
		s->hidden++;	/* hidden: named from .symtab, not dladdr */
		CHECK(strstr(k->object, "libkey") != NULL);
	} else if (!strcmp(k->name, "libdyn_own_key")) {
		s->own++;
		CHECK(strstr(k->object, "libdyn") != NULL);
	}
	return 0;
}

static int on_site(const struct switchyard_site_info *site, void *arg)
{
	struct seen *s = arg;
	const char *fn = site->function ? site->function : "";

	s->sites++;
	s->jumping += site->jumps;
#if defined(__aarch64__)
	CHECK_EQ(site->length, 4);	/* one word: NOP or B */
#else
	CHECK(site->length == 2 || site->length == 5);
#endif
	CHECK_EQ(site->likely, 0);
	if (!strcmp(fn, "exe_site")) {
		s->in_exe++;
		/* file:line from the debug information (built with -g) */
		CHECK(site->file && strstr(site->file, "test_dso.c"));
		CHECK_EQ(site->line, EXE_SITE_LINE);
	} else if (!strcmp(fn, "libkey_site")) {
		s->in_libkey++;
		CHECK(site->file && strstr(site->file, "libkey.c"));
		CHECK(site->line > 0);
	}
	else if (!strcmp(fn, "libuser_site"))
		s->in_libuser++;
	/* clang inlines libdyn_site() into libdyn's constructor too: a
	 * second site of the key, which must follow it like the first */
	else if (!strcmp(fn, "libdyn_site") || !strcmp(fn, "libdyn_ctor"))
		s->in_libdyn++;
	else
		fprintf(stderr, "site %p in %s (%s+%zu)\n", site->addr,
			site->object, fn, site->offset);
	return 0;
}

static void test_introspection(const char *path, int mode)
{
	struct seen s = { 0 };
	int (*dyn_sites_of)(const void *);
	int exe_n, dyn_n;

	open_dyn(path, mode);
	/* The sites of shared_key, from the tables: this executable's (exe_site
	 * only), libdyn's (libdyn_site, and clang's copy of it inlined into
	 * the constructor), libkey's and libuser's (one each: their sites are
	 * in exported functions that nothing in their object calls). */
	dyn_sites_of = (int (*)(const void *))dlsym(dyn, "libdyn_sites_of");
	CHECK(dyn_sites_of != NULL);
	exe_n = sy_test_check_sites(&shared_key.key);
	dyn_n = dyn_sites_of ? dyn_sites_of(&shared_key) : 0;
	CHECK_EQ(exe_n, SY_TEST_HAVE_SITES);
	CHECK(dyn_n >= 1);
	CHECK_EQ(static_branch_enable(&shared_key), 0);
	CHECK_EQ(switchyard_for_each_key(on_key, &s), 0);
	CHECK_EQ(s.shared, 1);
	CHECK_EQ(s.hidden, 1);
	CHECK_EQ(s.own, 1);
	CHECK_EQ(s.shared_sites, exe_n + 1 + 1 + dyn_n);
	CHECK_EQ(switchyard_for_each_site(&shared_key.key, on_site, &s), 0);
	CHECK_EQ(s.sites, s.shared_sites);
	CHECK_EQ(s.jumping, s.sites);	/* enabled, unlikely: all jump */
	CHECK(s.in_exe == exe_n && s.in_libkey == 1 && s.in_libuser == 1 &&
	      s.in_libdyn == dyn_n);
	CHECK_EQ(s.in_exe + s.in_libkey + s.in_libuser + s.in_libdyn, s.sites);
	CHECK_EQ(static_branch_disable(&shared_key), 0);
	/* every site falls through again, libdyn's copies included */
	memset(&s, 0, sizeof(s));
	CHECK_EQ(switchyard_for_each_site(&shared_key.key, on_site, &s), 0);
	CHECK_EQ(s.sites, exe_n + 1 + 1 + dyn_n);
	CHECK_EQ(s.jumping, 0);
	close_dyn();
	/* gone with its object */
	memset(&s, 0, sizeof(s));
	CHECK_EQ(switchyard_for_each_key(on_key, &s), 0);
	CHECK_EQ(s.own, 0);
	CHECK_EQ(s.shared_sites, exe_n + 1 + 1);
	CHECK_EQ(switchyard_for_each_site(&shared_key.key, on_site, &s), 0);
	CHECK_EQ(s.sites, exe_n + 1 + 1);
	CHECK_EQ(s.jumping, 0);
}

/* ---- a table that outlives the object defining its key ------------------ */

int sy__register_jump_table(struct sy_test_entry *start, struct sy_test_entry *stop);
int sy__unregister_jump_table(struct sy_test_entry *start, struct sy_test_entry *stop);

/*
 * The dynamic linker keeps a key's object loaded while objects bound to it
 * are (a symbol binding is a dependency), so the only way to get there is a
 * table that names the key without a binding: built by hand here. When the
 * defining object goes, the registry must report the orphaned site and
 * never write it again, not even when a new object reuses the address.
 */
static void test_orphans(const char *path, int mode)
{
#if defined(__aarch64__)
	/* b +8 (data only); disabled, a NOP */
	static unsigned char code[16] __attribute__((aligned(4))) = {
		0x02, 0x00, 0x00, 0x14 };
	static const unsigned char off[4] = { 0x1f, 0x20, 0x03, 0xd5 };
	const int to = 8;
#else
	/* jmp +5 (data only); disabled, TEST8 */
	static unsigned char code[16] = { 0xeb, 0x05 };
	static const unsigned char off[2] = { 0xa8, 0x05 };
	const int to = 7;
#endif
	static struct sy_test_entry fake[1] __attribute__((aligned(16)));
	unsigned char before[sizeof(off)];

	open_dyn(path, mode);
	void *own = dlsym(dyn, "libdyn_own_key");
	CHECK(own != NULL);
	fake[0].code = (int)((intptr_t)code - (intptr_t)&fake[0].code);
	fake[0].target = (int)((intptr_t)(code + to) - (intptr_t)&fake[0].target);
	fake[0].key = (uintptr_t)own;
	switchyard_set_log(sy_test_log, NULL);
	sy_test_log_all[0] = 0;
	CHECK_EQ(sy__register_jump_table(fake, fake + 1), 0);
	CHECK(!memcmp(code, off, sizeof(off)));	/* disabled key */
	close_dyn();
	CHECK(strstr(sy_test_log_all, "is being unloaded") != NULL);
	memcpy(before, code, sizeof(before));
	/* A new object, perhaps at the same address: the dead site stays. */
	open_dyn(path, mode);
	own = dlsym(dyn, "libdyn_own_key");
	CHECK_EQ(static_branch_enable((struct static_key_false *)own), 0);
	CHECK(!memcmp(before, code, sizeof(before)));
	CHECK_EQ(static_branch_disable((struct static_key_false *)own), 0);
	CHECK(!memcmp(before, code, sizeof(before)));
	close_dyn();
	/* Unregistering a table of the executable kills nothing: the
	 * executable's keys (shared_key's copy among them) stay. */
	CHECK_EQ(sy__unregister_jump_table(fake, fake + 1), 0);
	switchyard_set_log(NULL, NULL);
	{
		struct seen s = { 0 };

		CHECK_EQ(switchyard_for_each_key(on_key, &s), 0);
		CHECK_EQ(s.shared_sites, 3);
	}
	CHECK_EQ(static_branch_enable(&shared_key), 0);
	check_all(1);
	CHECK_EQ(static_branch_disable(&shared_key), 0);
	check_all(0);
}

/* ---- dlopen/dlclose cycles while another thread flips ------------------ */

static atomic_bool stop;
static _Atomic unsigned seq;
static _Atomic int state;

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int on = !static_key_enabled(&shared_key);

		atomic_fetch_add(&seq, 1);	/* odd: changing */
		if (on ? static_branch_enable(&shared_key)
		       : static_branch_disable(&shared_key))
			sy_test_failures++;
		atomic_store(&state, on);
		atomic_fetch_add(&seq, 1);
		/* leave stable windows in which dlopen can be checked */
		for (int i = 0; i < 3000 && !atomic_load(&stop); i++)
			__asm__ volatile("" ::: "memory");
		usleep(100);
	}
	return NULL;
}

static void cycles(const char *path, int mode, long n)
{
	pthread_t t;
	long checked = 0, wrong = 0;
	struct switchyard_stats a, b;

	switchyard_get_stats(&a);
	atomic_store(&state, static_key_enabled(&shared_key));
	pthread_create(&t, NULL, flipper, NULL);
	for (long i = 0; i < n; i++) {
		unsigned s1 = atomic_load(&seq);
		int st = atomic_load(&state);

		open_dyn(path, mode);
		int ctor = __atomic_load_n(dyn_ctor_site, __ATOMIC_RELAXED);
		int now = dyn_site();
		unsigned s2 = atomic_load(&seq);

		if (s1 == s2 && !(s1 & 1)) {
			checked++;
			wrong += ctor != st || now != st;
		}
		close_dyn();
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	switchyard_get_stats(&b);
	printf("%ld dlopen/dlclose cycles while flipping: %ld checked, %ld "
	       "wrong; objects %llu -> %llu\n", n, checked, wrong,
	       (unsigned long long)a.objects, (unsigned long long)b.objects);
	CHECK_EQ(wrong, 0);
	CHECK(n < 100 || checked > 0);
	CHECK_EQ(b.objects, a.objects);	/* every libdyn table went away */
	CHECK_EQ(b.sites, a.sites);
}

/* Two threads open and close libdyn concurrently while the flipper runs:
 * registration and unregistration race with each other and with changes. */
struct par_arg {
	const char *path;
	int mode;
	long n;
	long bad;
};

static void *par_cycles(void *argp)
{
	struct par_arg *a = argp;

	for (long i = 0; i < a->n; i++) {
		void *h = dlopen(a->path, RTLD_NOW | a->mode);
		int (*site)(void) = h ? (int (*)(void))dlsym(h, "libdyn_site") : NULL;

		if (!site) {
			a->bad++;
			continue;
		}
		int v = site();
		if (v != 0 && v != 1)
			a->bad++;
		dlclose(h);
	}
	return NULL;
}

static void parallel_cycles(const char *path, int mode, long n)
{
	pthread_t f, t[2];
	struct par_arg a[2] = { { path, mode, n / 2, 0 }, { path, mode, n / 2, 0 } };
	struct switchyard_stats s0, s1;

	switchyard_get_stats(&s0);
	atomic_store(&stop, false);
	pthread_create(&f, NULL, flipper, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, par_cycles, &a[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop, true);
	pthread_join(f, NULL);
	switchyard_get_stats(&s1);
	CHECK_EQ(a[0].bad + a[1].bad, 0);
	CHECK_EQ(s1.objects, s0.objects);
	CHECK_EQ(s1.sites, s0.sites);
	/* every remaining site agrees with its key */
	check_all(static_key_enabled(&shared_key));
	printf("%ld dlopen/dlclose cycles from 2 threads while flipping: ok\n", n);
}

int main(int argc, char **argv)
{
	const char *path = argv[1];
	int mode = argc > 2 && !strcmp(argv[2], "global") ? RTLD_GLOBAL : RTLD_LOCAL;
	long ncycles = argc > 3 ? atol(argv[3]) : 0;
	struct switchyard_stats st;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LIBDYN local|global [cycles]\n", argv[0]);
		return 2;
	}
	check_all(0);
	CHECK_EQ(static_branch_enable(&shared_key), 0);
	check_all(1);
	test_exe_key();

	/* Opened while enabled: its constructor already sees the jump. */
	open_dyn(path, mode);
	CHECK_EQ(*dyn_ctor_key, 1);
	CHECK_EQ(*dyn_ctor_site, 1);
	check_all(1);
	CHECK_EQ(static_branch_disable(&shared_key), 0);
	check_all(0);
	CHECK_EQ(static_branch_inc(&shared_key), 0);
	check_all(1);
	CHECK_EQ(static_branch_dec(&shared_key), 0);
	check_all(0);

	/* libdyn's own key, reached through dlsym. */
	{
		struct static_key_false *own = dlsym(dyn, "libdyn_own_key");
		int (*own_site)(void) = (int (*)(void))dlsym(dyn, "libdyn_own_site");

		CHECK(own && own_site);
		if (own && own_site) {
			CHECK_EQ(own_site(), 0);
			CHECK_EQ(static_branch_enable(own), 0);
			CHECK_EQ(own_site(), 1);
			CHECK_EQ(static_branch_disable(own), 0);
			CHECK_EQ(own_site(), 0);
		}
	}

	/* Closed: its sites are gone, flips never touch its memory. */
	switchyard_get_stats(&st);
	close_dyn();
	{
		struct switchyard_stats after;

		switchyard_get_stats(&after);
		CHECK_EQ(after.objects, st.objects - 1);
	}
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(static_branch_enable(&shared_key), 0);
		check_all(1);
		CHECK_EQ(static_branch_disable(&shared_key), 0);
		check_all(0);
	}

	/* A hidden key, changed from inside its library. */
	CHECK_EQ(libkey_hidden_site(), 1);
	CHECK_EQ(libkey_set_hidden(0), 0);
	CHECK_EQ(libkey_hidden_site(), 0);
	CHECK_EQ(libkey_set_hidden(1), 0);
	CHECK_EQ(libkey_hidden_site(), 1);

	/* the library's static call, updated from here: one instance, in
	 * every variant (-Bsymbolic ones reach it through the GOT) */
	CHECK_EQ(static_call(shared_sc)(), 1);
	CHECK_EQ(libkey_sc_site(), 1);
	CHECK_EQ(static_call_update(shared_sc, libkey_sc_b), 0);
	CHECK_EQ(static_call(shared_sc)(), 2);
	CHECK_EQ(libkey_sc_site(), 2);
	CHECK_EQ(static_call_update(shared_sc, libkey_sc_a), 0);
	CHECK_EQ(libkey_sc_site(), 1);

	test_introspection(path, mode);
	test_orphans(path, mode);
	if (ncycles) {
		cycles(path, mode, ncycles);
		parallel_cycles(path, mode, ncycles);
	}
	return sy_test_done(mode == RTLD_GLOBAL ? "dso (RTLD_GLOBAL)" : "dso (RTLD_LOCAL)");
}
