/* SPDX-License-Identifier: MIT */
/*
 * sites.h - reading alternative sites as they are in memory, with the
 * library's own length decoder (compiled into the test): every site must
 * decode to whole instructions ending at its end (or a jump to its end
 * over int3 padding), with no two 0x90s in a row (padding merged), and a
 * static_cpu_has() site must be patched (a NOP, or a jump elsewhere than
 * where it was compiled to go). AArch64's fixed-width words need no
 * decoder: its check is first below.
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

#if defined(__aarch64__)
/*
 * AArch64: every site is whole words; its padding is merged (a run of
 * SY_A64_PAD_BRANCH NOPs or more at its end must come after a B to the
 * site's end: else the filler did not merge them); a
 * static_cpu_has() site (one word, a B as compiled) must be patched: a NOP,
 * or a B elsewhere than where it was compiled to go.
 */
static uint32_t alt_word(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/* where the B at p goes, or 0 */
static uintptr_t alt_b_dest(const uint8_t *p)
{
	uint32_t w = alt_word(p);

	if ((w & 0xfc000000u) != 0x14000000u)
		return 0;
	return (uintptr_t)p + (uintptr_t)((int64_t)((uint64_t)w << 38) >> 36);
}

static int alt_check_sites(const struct sy_alt_entry *start,
			   const struct sy_alt_entry *stop, int *cpu_has_sites)
{
	int bad = 0;

	for (const struct sy_alt_entry *e = start; e < stop; e++) {
		const uint8_t *site = (const uint8_t *)alt_rel(&e->site);
		const uint8_t *copy = (const uint8_t *)alt_rel(&e->copy);
		size_t n = e->len / 4, nops = 0;

		if (e + 1 < stop && alt_rel(&e[1].site) == (uintptr_t)site)
			continue;	/* the site's last record checks it */
		if ((e->len & 3) || ((uintptr_t)site & 3)) {
			fprintf(stderr, "site %p: not whole words\n",
				(const void *)site);
			bad++;
			continue;
		}
		while (nops < n && alt_word(site + 4 * (n - 1 - nops)) ==
					   SY_A64_NOP)
			nops++;
		if (nops >= SY_A64_PAD_BRANCH &&
		    (nops == n || alt_b_dest(site + 4 * (n - 1 - nops)) !=
					  (uintptr_t)site + e->len)) {
			fprintf(stderr, "site %p: padding not merged\n",
				(const void *)site);
			bad++;
		}
		if (e->len == 4 && alt_b_dest(copy)) {	/* static_cpu_has() */
			(*cpu_has_sites)++;
			if (alt_b_dest(site) &&
			    alt_b_dest(site) == alt_b_dest(copy)) {
				fprintf(stderr, "site %p: not patched\n",
					(const void *)site);
				bad++;
			} else if (!alt_b_dest(site) &&
				   alt_word(site) != SY_A64_NOP) {
				fprintf(stderr, "site %p: neither NOP nor B\n",
					(const void *)site);
				bad++;
			}
		}
	}
	return bad;
}
#else
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
#endif

#endif /* SY_TEST_ALT_SITES_H */
