/* SPDX-License-Identifier: MIT */
/*
 * fuzz_elf_syms.c - libFuzzer target for the ELF symbol reader
 * (src/elf.c, sy_syms_parse(), and sy_elf_section(): the section finder
 * of key descriptions): any bytes give 0 or a negative errno,
 * never a crash, an out-of-bounds access or a leak; what it returns is
 * consistent (sorted, names inside the pool, lookups total).
 *
 * Built with clang -fsanitize=fuzzer (scripts/fuzz.sh), or with any
 * compiler against fuzz/replay.c (the default test suite: the corpus and
 * a fixed number of mutations of it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_elf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sy_syms s;
	void *img;
	int r;

	/* sy_syms_parse() wants an 8-byte aligned image (as mmap gives) */
	img = malloc(size ? size : 1);
	if (!img)
		return 0;
	memcpy(img, data, size);
	memset(&s, 0, sizeof(s));
	r = sy_syms_parse(img, size, 0x1000, &s);
	if (r == 0) {
		for (size_t i = 0; i < s.n; i++) {
			if (i && s.v[i - 1].addr > s.v[i].addr)
				abort();	/* not sorted */
			if (!s.v[i].name)
				abort();
			(void)strlen(s.v[i].name);	/* inside the pool */
			(void)sy_syms_find(&s, s.v[i].addr, s.v[i].func);
		}
		(void)sy_syms_find(&s, 0, true);
		(void)sy_syms_find(&s, ~(uintptr_t)0, false);
		sy_syms_free(&s);
	} else if (r != -ENOEXEC && r != -ENOENT && r != -ENOMEM) {
		abort();	/* an error the API does not document */
	}
	{
		uint64_t addr, sz;

		r = sy_elf_section(img, size, "sy_key_desc", &addr, &sz);
		if (r && r != -ENOEXEC && r != -ENOENT)
			abort();
		r = sy_elf_section(img, size, ".text", &addr, &sz);
		if (r && r != -ENOEXEC && r != -ENOENT)
			abort();
	}
	free(img);
	return 0;
}
