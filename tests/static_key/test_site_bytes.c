/* SPDX-License-Identifier: MIT */
/*
 * test_site_bytes.c - read the bytes of sites at run time: on x86-64
 * TEST8 <-> JMP8 and TEST32 <-> JMP32 (a8/eb rel8, a9/e9 rel32: only the
 * first byte changes), on AArch64 NOP <-> B (d503201f, 14000000 | imm26:
 * one word, every site alike, the record's long bit never set); jumps that
 * land on the recorded target, and toggling back restores every byte
 * exactly.
 */
#include <stdbool.h>
#include <stdint.h>

#include "sy_test.h"

#if !SY_TEST_HAVE_SITES
int main(void)
{
	SKIP("no patched sites in this build (fallback mode)");
}
#else

DEFINE_STATIC_KEY_FALSE(k_near);
DEFINE_STATIC_KEY_FALSE(k_far);
DEFINE_STATIC_KEY_TRUE(k_true);

volatile int sink;

/* Out-of-line code right behind the function: JMP8 reaches it. */
__attribute__((noinline)) static void near_site(void)
{
	if (static_branch_unlikely(&k_near))
		sink++;
}

/* 300 bytes of straight-line code between the site and the out-of-line
 * block, which the compiler lays out after it: only JMP32 reaches. */
__attribute__((noinline)) static void far_site(void)
{
	if (static_branch_unlikely(&k_far))
		sink += 2;
	__asm__ volatile(".skip 300, 0x90");
}

__attribute__((noinline)) static int true_site(void)
{
	if (static_branch_likely(&k_true))
		return 1;
	return 0;
}

static struct sy_test_entry *site_of(struct static_key *key)
{
	for (struct sy_test_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++)
		if ((e->key & ~3ul) == (uintptr_t)key)
			return e;
	return NULL;
}


/* The site's length, as the registry recorded it (bit 1 of the key field). */
static bool is_long(const struct sy_test_entry *e)
{
	return e->key & 2;
}

#if defined(__aarch64__)
#define SITE_LEN(e) ((void)(e), 4)

/* One aligned word: NOP, or B whose imm26 lands on the recorded target. */
static void check_site(struct sy_test_entry *e, bool jumps)
{
	const unsigned char *p = sy_test_code(e);
	long d = (long)(sy_test_target(e) - p);
	uint32_t w;

	memcpy(&w, p, 4);
	CHECK(!is_long(e));
	CHECK_EQ((uintptr_t)p & 3, 0);
	CHECK(d >= -(1l << 27) && d < (1l << 27) && !(d & 3));
	CHECK_EQ(w, jumps ? 0x14000000u | ((uint32_t)(d >> 2) & 0x03ffffffu)
			  : 0xd503201fu);
}
#define check_short check_site
#define check_long check_site
#else
#define SITE_LEN(e) (is_long(e) ? 5 : 2)

static void check_long(struct sy_test_entry *e, bool jumps);

static void check_short(struct sy_test_entry *e, bool jumps)
{
	const unsigned char *p = sy_test_code(e);

	if (is_long(e)) {
		check_long(e, jumps);
		return;
	}
	CHECK_EQ(p[0], jumps ? 0xeb : 0xa8);
	CHECK(p + 2 + (signed char)p[1] == sy_test_target(e));
}

static void check_long(struct sy_test_entry *e, bool jumps)
{
	const unsigned char *p = sy_test_code(e);

	if (!is_long(e)) {
		check_short(e, jumps);
		return;
	}
	int32_t rel;

	CHECK_EQ(p[0], jumps ? 0xe9 : 0xa9);
	memcpy(&rel, p + 1, 4);
	CHECK(p + 5 + rel == sy_test_target(e));
}
#endif

int main(void)
{
	struct sy_test_entry *en = site_of(&k_near.key);
	struct sy_test_entry *ef = site_of(&k_far.key);
	struct sy_test_entry *et = site_of(&k_true.key);
	size_t n = (size_t)(__stop_sy_jump_entries - __start_sy_jump_entries);
	unsigned char before[64][5];
	struct switchyard_stats st;

	CHECK(en && ef && et);
	if (!en || !ef || !et)
		return sy_test_done("site_bytes");
	CHECK(n <= 64);
	for (size_t i = 0; i < n && i < 64; i++)
		memcpy(before[i], sy_test_code(&__start_sy_jump_entries[i]), 5);

	/* Disabled at start: NOPs of the size the assembler chose. */
	check_short(en, false);
	check_long(ef, false);
	CHECK_EQ(switchyard_get_stats(&st), 0);
#if defined(__aarch64__)
	/* One length: a B reaches 128 MiB, the 300 bytes too. */
	CHECK(st.sites_long == 0 && st.sites_short >= 3);
#elif defined(__OPTIMIZE__)
	/* Optimised, the out-of-line block of far_site() is laid out after
	 * the 300 bytes; at -O0 it follows the site (and clang does not relax
	 * branches at -O0: every site is long). */
	CHECK(!is_long(en));
	CHECK(is_long(ef));
	CHECK(st.sites_short >= 1 && st.sites_long >= 1);
#endif

	near_site();
	far_site();
	CHECK_EQ(sink, 0);
	CHECK_EQ(static_branch_enable(&k_near), 0);
	check_short(en, true);
	check_long(ef, false);
	near_site();
	CHECK_EQ(sink, 1);
	CHECK_EQ(static_branch_enable(&k_far), 0);
	check_long(ef, true);
	far_site();
	CHECK_EQ(sink, 3);

	/* likely on a TRUE key: NOP while enabled, JMP when disabled */
	CHECK_EQ(true_site(), 1);
	CHECK(sy_test_site_jumps(et) == 0);
	CHECK_EQ(static_branch_disable(&k_true), 0);
	CHECK(sy_test_site_jumps(et) == 1);
	CHECK_EQ(true_site(), 0);

	/* Flip everything many times, end where we started: every byte of
	 * every site is what it was. */
	for (int i = 0; i < 100; i++) {
		static_branch_disable(&k_near);
		static_branch_disable(&k_far);
		static_branch_enable(&k_true);
		static_branch_enable(&k_near);
		static_branch_enable(&k_far);
		static_branch_disable(&k_true);
	}
	CHECK_EQ(static_branch_disable(&k_near), 0);
	CHECK_EQ(static_branch_disable(&k_far), 0);
	CHECK_EQ(static_branch_enable(&k_true), 0);
	check_short(en, false);
	check_long(ef, false);
	for (size_t i = 0; i < n && i < 64; i++) {
		const struct sy_test_entry *e = &__start_sy_jump_entries[i];
		size_t len = SITE_LEN(e);

		CHECK(!memcmp(before[i], sy_test_code(e), len));
	}
	near_site();
	far_site();
	CHECK_EQ(sink, 3);
	return sy_test_done("site_bytes");
}
#endif
