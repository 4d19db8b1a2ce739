/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dwarf_line.c - libFuzzer target for the DWARF line-table reader
 * (src/dwarf_line.c, sy_lines_parse()): any bytes give 0 or a negative
 * errno, never a crash, an out-of-bounds access or a leak; the table it
 * returns is sorted and its file indexes are in range.
 *
 * Built as fuzz_elf_syms.c is (scripts/fuzz.sh, fuzz/replay.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_dwarf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sy_lines l;
	int r;

	memset(&l, 0, sizeof(l));
	r = sy_lines_parse(data, size, 0x1000, &l);
	if (r == 0) {
		for (size_t i = 0; i < l.n; i++) {
			if (i && l.rows[i - 1].addr > l.rows[i].addr)
				abort();	/* not sorted */
			if (l.rows[i].file >= l.nfiles && l.rows[i].line)
				abort();	/* a file it does not have */
		}
		for (size_t i = 0; i < l.nfiles; i++)
			(void)strlen(l.files[i]);
		if (l.n)
			(void)sy_lines_find(&l, l.rows[l.n / 2].addr);
		(void)sy_lines_find(&l, 0);
	} else if (r != -ENOEXEC && r != -ENOENT && r != -ENOMEM) {
		abort();	/* an error the API does not document */
	}
	sy_lines_free(&l);
	return 0;
}
