/* SPDX-License-Identifier: MIT */
/*
 * test_oom_index - an allocation that libswitchyard makes while it
 * registers a library fails.
 *
 *   test_oom_index LIBINTER
 *
 * LIBINTER has 1,000 sites of two alternating keys, so its table needs an
 * index (about 4 bytes per site). This executable interposes malloc,
 * calloc and realloc; while LIBINTER is being dlopen()ed, and only then,
 * the k-th allocation of at least 4,000 bytes whose caller lies in
 * libswitchyard's text fails (k = 1, 2, ... until the dlopen makes fewer
 * than k such allocations; k = 0 is the run without a failure). After each
 * dlopen every site must still follow its key: 0 sites jump with both keys
 * off, 500 after enabling inter_a, 0 after disabling it, the same for
 * inter_b; every change returns 0.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>

#include "sy_test.h"

#define MIN_SIZE 4000	/* 1,000 sites x 4 bytes */

/*
 * The allocator behind ours: glibc's, or a sanitizer's when its runtime is
 * a shared library loaded after this executable (gcc's libasan/libtsan),
 * found with dlsym(RTLD_NEXT). dlsym() itself may allocate before the
 * pointers are known: those few requests come from a static arena (never
 * freed: free() of such a pointer would go to the real allocator, so the
 * arena is only used before real_malloc is set, by dlsym's own lookups).
 * A sanitizer linked statically into the executable (clang's default)
 * would define malloc twice: the build refuses that, so such builds skip.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SY_STATIC_SANITIZER 1	/* clang: runtime linked in */
#endif
#endif

#if defined(__SANITIZE_THREAD__) && !defined(SY_STATIC_SANITIZER)
#define SY_TSAN_INIT 1	/* gcc's TSan */
#endif

#ifdef SY_STATIC_SANITIZER
int main(void)
{
	SKIP("clang links the sanitizer's malloc into the executable: no "
	     "interposition (gcc's ASan build runs this test)");
}
#elif defined(SY_TSAN_INIT)
int main(void)
{
	/* The scenario is single-threaded: ASan is the sanitizer that
	 * matters for it, and runs it. */
	SKIP("ThreadSanitizer initialises through dlsym(), which would "
	     "re-enter this test's malloc before TSan can serve it");
}
#else
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static char arena[4096] __attribute__((aligned(16)));
static size_t arena_used;
static int resolving;

static void *arena_alloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (arena_used + n > sizeof(arena))
		return NULL;
	p = arena + arena_used;
	arena_used += n;
	return p;
}

static void resolve(void)
{
	if (real_malloc || resolving)
		return;
	resolving = 1;
	real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	resolving = 0;
}

static uintptr_t sy_lo, sy_hi;	/* libswitchyard's text */
static int armed, fail_nth, big_seen;
static size_t failed_size;

/* Fail this allocation? The caller's return address tells whose it is. */
static int inject(size_t n, void *caller)
{
	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED) || n < MIN_SIZE ||
	    (uintptr_t)caller < sy_lo || (uintptr_t)caller >= sy_hi)
		return 0;
	if (++big_seen != fail_nth)
		return 0;
	failed_size = n;
	return 1;
}

void *malloc(size_t n)
{
	resolve();
	if (!real_malloc)
		return arena_alloc(n);
	return inject(n, __builtin_return_address(0)) ? NULL : real_malloc(n);
}

void *calloc(size_t m, size_t n)
{
	resolve();
	if (!real_calloc)
		return n && m > SIZE_MAX / n ? NULL : arena_alloc(m * n);
	if (n && m <= SIZE_MAX / n && inject(m * n, __builtin_return_address(0)))
		return NULL;
	return real_calloc(m, n);
}

void *realloc(void *p, size_t n)
{
	resolve();
	return inject(n, __builtin_return_address(0)) ? NULL : real_realloc(p, n);
}

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libswitchyard"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			sy_lo = info->dlpi_addr + ph->p_vaddr;
			sy_hi = sy_lo + ph->p_memsz;
		}
	}
	return 1;
}

static int jumping(int (*const *tab)(void))
{
	int n = 0;

	for (int i = 0; i < 500; i++)
		n += tab[i]();
	return n;
}

/* One dlopen with the k-th big allocation failing. 0: none was made. */
static int round_k(const char *path, int k)
{
	big_seen = 0;
	fail_nth = k;
	failed_size = 0;
	__atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	__atomic_store_n(&armed, 0, __ATOMIC_RELAXED);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
	if (k && !failed_size) {
		CHECK_EQ(dlclose(h), 0);
		return 0;
	}
	struct static_key_false *ka = dlsym(h, "inter_a"), *kb = dlsym(h, "inter_b");
	int (*const *ta)(void) = (int (*const *)(void))dlsym(h, "inter_tab_a");
	int (*const *tb)(void) = (int (*const *)(void))dlsym(h, "inter_tab_b");

	if (!ka || !kb || !ta || !tb) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		exit(1);
	}
	int before = sy_test_failures;

	CHECK_EQ(jumping(ta), 0);
	CHECK_EQ(jumping(tb), 0);
	CHECK_EQ(static_branch_enable(ka), 0);
	CHECK_EQ(jumping(ta), 500);
	CHECK_EQ(jumping(tb), 0);
	CHECK_EQ(static_branch_disable(ka), 0);
	CHECK_EQ(jumping(ta), 0);
	CHECK_EQ(jumping(tb), 0);
	CHECK_EQ(static_branch_enable(kb), 0);
	CHECK_EQ(jumping(ta), 0);
	CHECK_EQ(jumping(tb), 500);
	CHECK_EQ(static_branch_disable(kb), 0);
	CHECK_EQ(jumping(ta), 0);
	CHECK_EQ(jumping(tb), 0);
	if (k)
		printf("allocation %d of >= %d bytes (%zu bytes) failed during "
		       "the dlopen: sites %s\n", k, MIN_SIZE, failed_size,
		       sy_test_failures == before ? "follow their keys" :
						    "WRONG");
	CHECK_EQ(dlclose(h), 0);
	return 1;
}

int main(int argc, char **argv)
{
	int k;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBINTER\n", argv[0]);
		return 2;
	}
	if (!SY_TEST_HAVE_SITES)
		SKIP("no patched sites in this build (fallback mode)");
	dl_iterate_phdr(find_text, NULL);
	if (!sy_lo)
		SKIP("libswitchyard is not a shared object here");
	round_k(argv[1], 0);
	for (k = 1; k < 64 && round_k(argv[1], k); k++)
		;
	printf("libswitchyard made %d allocations of >= %d bytes registering "
	       "1,000 sites\n", k - 1, MIN_SIZE);
	if (k == 1)
		printf("(nothing to fail: the scenario was not exercised)\n");
	return sy_test_done("test_oom_index");
}
#endif /* !SY_STATIC_SANITIZER */
