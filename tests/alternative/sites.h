/* SPDX-License-Identifier: MIT */
/*
 * sites.h - reading alternative sites as they are in memory, with the
 * library's own length decoder (compiled into the test): every site must
 * decode to whole instructions ending at its end (or a jump to its end
 * over int3 padding), with no two 0x90s in a row (padding merged), and a
 * static_cpu_has() site must be patched (a NOP, or a jump elsewhere than
 * where it was compiled to go).
 */
#ifndef SY_TEST_ALT_SITES_H
#define SY_TEST_ALT_SITES_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "internal.h"
#ifdef __cplusplus
}
#endif

static uintptr_t alt_rel(const int32_t *f)
{
	return (uintptr_t)f + (intptr_t)*f;
}

/* Problems found in the sites of [start, stop); 0 if none. */
static int alt_check_sites(const struct sy_alt_entry *start,
			   const struct sy_alt_entry *stop, int *cpu_has_sites)
{
	int bad = 0;

	for (const struct sy_alt_entry *e = start; e < stop; e++) {
		const uint8_t *site = (const uint8_t *)alt_rel(&e->site);
		const uint8_t *copy = (const uint8_t *)alt_rel(&e->copy);
		size_t off = 0;

		if (e + 1 < stop && alt_rel(&e[1].site) == (uintptr_t)site)
			continue;	/* the site's last record checks it */
		while (off < e->len) {
			struct sy_x86_insn in;

			if (sy_x86_insn_decode(site + off, e->len - off, &in)) {
				fprintf(stderr, "site %p: undecodable at +%zu\n",
					(const void *)site, off);
				bad++;
				break;
			}
			if (site[off] == 0xeb &&
			    off + in.len + (int8_t)site[off + 1] == e->len)
				break;	/* a jump over the padding */
			off += in.len;
		}
		for (size_t i = 0; i + 1 < e->len; i++)
			if (site[i] == 0x90 && site[i + 1] == 0x90) {
				fprintf(stderr, "site %p: padding not merged\n",
					(const void *)site);
				bad++;
				break;
			}
		if (e->len == 5 && copy[0] == 0xe9) {	/* static_cpu_has() */
			int32_t rs, rc;

			memcpy(&rs, site + 1, 4);
			memcpy(&rc, copy + 1, 4);
			(*cpu_has_sites)++;
			if (site[0] == 0xe9 &&
			    (uintptr_t)site + 5 + (intptr_t)rs ==
			    (uintptr_t)copy + 5 + (intptr_t)rc) {
				fprintf(stderr, "site %p: not patched\n",
					(const void *)site);
				bad++;
			}
		}
	}
	return bad;
}

#endif /* SY_TEST_ALT_SITES_H */
