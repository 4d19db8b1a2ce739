/* SPDX-License-Identifier: MIT */
/*
 * test_elf.c - the ELF symbol reader (src/elf.c) on malformed input: this
 * executable's own file, then every truncation at a sample of lengths and
 * thousands of random corruptions of its headers and symbol tables. Each
 * must give a result or an error, never a crash (ASan checks the bounds in
 * the sanitizer builds).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/sy_elf.h"
#include "sy_test.h"

int marker_symbol_for_test_elf = 42;

int main(void)
{
	struct sy_syms s;
	struct stat st;
	int fd = open("/proc/self/exe", O_RDONLY);
	uint64_t *img, *copy;
	size_t size;
	uint64_t rnd = 0x243f6a8885a308d3ull;
	int ok = 0, refused = 0;

	CHECK(fd >= 0 && !fstat(fd, &st));
	size = (size_t)st.st_size;
	img = malloc(size + 8);
	copy = malloc(size + 8);
	CHECK(img && copy && read(fd, img, size) == (ssize_t)size);
	close(fd);

	/* The intact file: our marker symbol is found at its address. */
	CHECK_EQ(sy_syms_parse(img, size, 0, &s), 0);
	{
		int found = 0;

		for (size_t i = 0; i < s.n; i++)
			if (!strcmp(s.v[i].name, "marker_symbol_for_test_elf"))
				found = 1;
		CHECK(found);
		CHECK(s.n > 10);
	}
	sy_syms_free(&s);

	/* Not ELF, empty, unaligned. */
	{
		static uint64_t junk[8] = { 0x6f77202c6f6c6c65ull };	/* "ello, wo" */

		CHECK_EQ(sy_syms_parse(junk, sizeof(junk), 0, &s), -ENOEXEC);
	}
	CHECK_EQ(sy_syms_parse(img, 0, 0, &s), -ENOEXEC);
	CHECK_EQ(sy_syms_parse((char *)img + 1, size - 1, 0, &s), -EINVAL);

	/* Every truncation, sampled. */
	for (size_t len = 0; len < size; len += 1 + len / 64) {
		int r = sy_syms_parse(img, len, 0, &s);

		r ? refused++ : ok++;
		sy_syms_free(&s);
	}
	CHECK(refused > 0);

	/* Random corruption of the first 4 KiB (headers) and of random
	 * places, a few bytes at a time. */
	for (int i = 0; i < 3000; i++) {
		memcpy(copy, img, size);
		for (int k = 0; k < 4; k++) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			size_t at = (i & 1) ? rnd % (size < 4096 ? size : 4096)
					    : rnd % size;
			((uint8_t *)copy)[at] = (uint8_t)(rnd >> 32);
		}
		int r = sy_syms_parse(copy, size, 0, &s);

		r ? refused++ : ok++;
		for (size_t j = 0; !r && j < s.n; j++)
			CHECK(s.v[j].name != NULL);
		sy_syms_free(&s);
	}
	printf("elf: %d parsed, %d refused\n", ok, refused);
	free(img);
	free(copy);
	return sy_test_done("elf");
}
