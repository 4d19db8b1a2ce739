/* SPDX-License-Identifier: MIT */
/*
 * fuzz_records.c - libFuzzer target for the static key record reader of
 * `switchyard list` (tools/records.c): any bytes give 0 or -ENOEXEC (with
 * a reason) or -ENOMEM, never a crash; every key's sites lie inside the
 * site array and its name is a string.
 *
 * Built as fuzz_elf_syms.c is (scripts/fuzz.sh, fuzz/replay.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../tools/records.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct sy_records r;
	void *img = malloc(size ? size : 1);	/* 8-byte aligned, as mmap */
	int rc;

	if (!img)
		return 0;
	memcpy(img, data, size);
	rc = sy_records_read(img, size, &r);
	if (rc == 0) {
		size_t total = 0;

		for (size_t i = 0; i < r.nkeys; i++) {
			const struct sy_rec_key *k = &r.keys[i];

			if (k->sites < r.sites ||
			    k->sites + k->nsites > r.sites + r.nsites)
				abort();
			(void)strlen(k->name);
			total += k->nsites;
		}
		if (total != r.nsites)
			abort();
		sy_records_free(&r);
	} else if (rc == -ENOEXEC) {
		if (!r.why || !*r.why)
			abort();	/* an error without its reason */
	} else if (rc != -ENOMEM) {
		abort();
	}
	free(img);
	return 0;
}
