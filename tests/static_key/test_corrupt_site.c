/* SPDX-License-Identifier: MIT */
/*
 * test_corrupt_site.c - a site holding unexpected bytes (x86-64: an int3
 * pair; AArch64: a UDF word) is refused, reported with its address, the
 * expected and the found bytes, and nothing is written: not that site, not
 * the key's other sites, not the key's count.
 * Malformed tables handed to the registry are rejected.
 *
 * The message's file:line comes from the debug information, which a
 * Release build (no -g) does not have: it is asserted when this program
 * has a line table, and its absence (nothing invented) otherwise. The key
 * and the function+offset (symbol table) hold in every build type.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sy_test.h"

#if !SY_TEST_HAVE_SITES
int main(void)
{
	SKIP("no patched sites in this build (fallback mode)");
}
#else

/* The registry's entry points (exported for the per-object glue). */
int sy__register_jump_table(struct sy_test_entry *start,
			    struct sy_test_entry *stop);
int sy__unregister_jump_table(struct sy_test_entry *start,
			      struct sy_test_entry *stop);

DEFINE_STATIC_KEY_FALSE(kc);
volatile int sink;

__attribute__((noinline)) static void site_a(void)
{
	if (static_branch_unlikely(&kc))
		sink++;
}

__attribute__((noinline)) static void site_b(void)
{
	if (static_branch_unlikely(&kc))
		sink += 10;
}

/*
 * Whether this program carries a DWARF line table (.debug_line): what the
 * library reads file:line from. Read from the file, not guessed from the
 * build type: CFLAGS may add -g to any of them, or strip a Debug build.
 * 1 yes, 0 no, -1 unreadable.
 */
static int have_line_table(void)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *names = NULL;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), r = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
			   (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	names = calloc(1, sh[eh.e_shstrndx].sh_size + 1);
	if (!names || pread(fd, names, sh[eh.e_shstrndx].sh_size,
			    (off_t)sh[eh.e_shstrndx].sh_offset) !=
			      (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	r = 0;
	for (int i = 0; i < eh.e_shnum; i++)
		if (sh[i].sh_name < sh[eh.e_shstrndx].sh_size &&
		    !strcmp(names + sh[i].sh_name, ".debug_line") &&
		    sh[i].sh_type != SHT_NOBITS && sh[i].sh_size)
			r = 1;
out:
	free(names);
	free(sh);
	close(fd);
	return r;
}

/* Test-only write to code, outside the library. */
static void poke_code(const unsigned char *addr, const void *bytes, size_t n)
{
	int fd = open("/proc/self/mem", O_RDWR);

	if (fd < 0 || pwrite(fd, bytes, n, (off_t)(uintptr_t)addr) != (ssize_t)n)
		SKIP("cannot write code through /proc/self/mem");
	close(fd);
}

int main(void)
{
	struct sy_test_entry *sites[2];
	unsigned char saved[2][5], now[2][5];
	int n = 0, lines = have_line_table();

	for (struct sy_test_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++)
		if ((e->key & ~3ul) == (uintptr_t)&kc.key && n < 2)
			sites[n++] = e;
	CHECK_EQ(n, 2);
	if (n != 2)
		return sy_test_done("corrupt_site");
	for (int i = 0; i < 2; i++)
		memcpy(saved[i], sy_test_code(sites[i]), 5);

#if defined(__aarch64__)
	/* Corrupt the second site: a word that is neither its NOP, its B nor
	 * a debugger's BRK (which the registry reads as a breakpoint, not as
	 * corruption): UDF #0. The message expects the site's B. */
	static const unsigned char junk[4] = { 0, 0, 0, 0 };
	const char *found = "found [00 00 00 00]";
	char expected[64];
	{
		const unsigned char *p = sy_test_code(sites[1]);
		uint32_t b = 0x14000000u |
			     ((uint32_t)((sy_test_target(sites[1]) - p) >> 2) &
			      0x03ffffffu);

		snprintf(expected, sizeof(expected),
			 "expected [%02x %02x %02x %02x]", b & 0xff,
			 b >> 8 & 0xff, b >> 16 & 0xff, b >> 24);
	}
#else
	/* Corrupt the second site (an int3 pair, as a debugger might). */
	static const unsigned char junk[2] = { 0xcc, 0xcc };
	const char *found = "found [cc cc";
#endif
	poke_code(sy_test_code(sites[1]), junk, sizeof(junk));
	for (int i = 0; i < 2; i++)
		memcpy(now[i], sy_test_code(sites[i]), 5);

	switchyard_set_log(sy_test_log, NULL);
	sy_test_log_count = 0;
	CHECK_EQ(static_branch_enable(&kc), -EFAULT);
	CHECK_EQ(sy_test_log_count, 1);
	{
		/* named as the user knows them: key, function+offset,
		 * file:line where there is debug information; the bytes;
		 * and the int3 explained */
		CHECK(strstr(sy_test_log_last, "static key 'kc'") != NULL);
		if (!strstr(sy_test_log_last, "site_b+0x"))
			fprintf(stderr, "message: %s\n", sy_test_log_last);
		CHECK(strstr(sy_test_log_last, "site_b+0x") != NULL);
		CHECK(lines >= 0);
		printf("line table: %s\n", lines > 0 ? "yes" : "no");
		if (lines > 0)
			CHECK(strstr(sy_test_log_last, "test_corrupt_site.c:") != NULL);
		else	/* no location invented */
			CHECK(strstr(sy_test_log_last, ".c:") == NULL);
		CHECK(strstr(sy_test_log_last, found) != NULL);
#if defined(__aarch64__)
		if (!strstr(sy_test_log_last, expected))
			fprintf(stderr, "message: %s\nwant: %s\n",
				sy_test_log_last, expected);
		CHECK(strstr(sy_test_log_last, expected) != NULL);
#else
		CHECK(strstr(sy_test_log_last, "expected [eb ") != NULL ||
		      strstr(sy_test_log_last, "expected [e9 ") != NULL);
		CHECK(strstr(sy_test_log_last, "debugger breakpoint") != NULL);
#endif
		CHECK(strstr(sy_test_log_last, "0x5") == NULL);	/* no bare address */
	}
	CHECK_EQ(static_key_count(&kc.key), 0);
	CHECK(!static_key_enabled(&kc));
	/* Nothing written anywhere: both sites as they were. */
	for (int i = 0; i < 2; i++)
		CHECK(!memcmp(now[i], sy_test_code(sites[i]), 5));
	site_a();
	CHECK_EQ(sink, 0);

	/* inc fails the same way */
	CHECK_EQ(static_branch_inc(&kc), -EFAULT);
	CHECK_EQ(static_key_count(&kc.key), 0);

	/* Repaired, the key works again. */
	poke_code(sy_test_code(sites[1]), saved[1], 5);
	CHECK_EQ(static_branch_enable(&kc), 0);
	site_a();
	site_b();
	CHECK_EQ(sink, 11);
	CHECK_EQ(static_branch_disable(&kc), 0);
	for (int i = 0; i < 2; i++)
		CHECK(!memcmp(saved[i], sy_test_code(sites[i]), 5));

	/* A table whose site does not hold the jump it describes is refused
	 * at registration and never written. */
	{
		static unsigned char fake_code[8] = { 0x90, 0x90, 0x90, 0x90, 0x90 };
		static struct sy_test_entry fake[1] __attribute__((aligned(16)));
		struct switchyard_stats a, b;

		fake[0].code = (int)((intptr_t)fake_code - (intptr_t)&fake[0].code);
		fake[0].target = (int)((intptr_t)(fake_code + 7) - (intptr_t)&fake[0].target);
		fake[0].key = (uintptr_t)&kc.key;
		switchyard_get_stats(&a);
		sy_test_log_count = 0;
		CHECK_EQ(sy__register_jump_table(fake, fake + 1), 0);
		switchyard_get_stats(&b);
		CHECK_EQ(b.sites_refused, a.sites_refused + 1);
		CHECK_EQ(sy_test_log_count, 1);
		CHECK(strstr(sy_test_log_last, "not the jump") != NULL);
		CHECK(strstr(sy_test_log_last, "static key 'kc'") != NULL);
		if (!strstr(sy_test_log_last, "fake_code"))
			fprintf(stderr, "message: %s\n", sy_test_log_last);
		CHECK(strstr(sy_test_log_last, "fake_code") != NULL);
		CHECK_EQ(static_branch_enable(&kc), 0);	/* ignores it */
		CHECK_EQ(fake_code[0], 0x90);
		CHECK_EQ(static_branch_disable(&kc), 0);
		CHECK_EQ(sy__unregister_jump_table(fake, fake + 1), 0);
		switchyard_get_stats(&b);
		CHECK_EQ(b.sites_refused, a.sites_refused);
	}
	/* Malformed bounds: rejected, nothing registered. */
	{
		static struct sy_test_entry fake2[2] __attribute__((aligned(16)));
		struct switchyard_stats a, b;

		switchyard_get_stats(&a);
		CHECK_EQ(sy__register_jump_table(fake2, (struct sy_test_entry *)((char *)fake2 + 20)), -EINVAL);
		CHECK_EQ(sy__register_jump_table((struct sy_test_entry *)((char *)fake2 + 4), fake2 + 1), -EINVAL);
		switchyard_get_stats(&b);
		CHECK_EQ(b.objects, a.objects);
	}
	switchyard_set_log(NULL, NULL);
	return sy_test_done("corrupt_site");
}
#endif
