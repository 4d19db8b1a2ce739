/* SPDX-License-Identifier: MIT */
/*
 * sy_sc_sites.h - the static call sites of the including object, for the
 * tests that look at their bytes: the records of section
 * sy_static_call_sites (arch/x86_64_static_call.h, arch/aarch64_static_call.h),
 * the offsets in a site (src/arch/x86_64/sy_arch.h), or AArch64's one word,
 * and whether the library patches sites in
 * this process (as src/static_call.c decides). Only where static call
 * sites are patched (SY__ARCH_HAVE_STATIC_CALL).
 */
#ifndef SY_SC_SITES_H
#define SY_SC_SITES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#ifdef SY__ARCH_HAVE_STATIC_CALL
struct sy_sc_rec {
	const struct sy__sc_meta *meta;
	int32_t code;
	uint32_t flags;
};

#ifdef __cplusplus
extern "C" {
#endif
extern struct sy_sc_rec __start_sy_static_call_sites[]
	__attribute__((visibility("hidden")));
extern struct sy_sc_rec __stop_sy_static_call_sites[]
	__attribute__((visibility("hidden")));
extern const unsigned int __rseq_size __attribute__((weak));
#ifdef __cplusplus
}
#endif

#if defined(__aarch64__)
/*
 * AArch64: a site is one word (arch/aarch64_static_call.h): BL to its
 * veneer as compiled, BL to the target (or to a stub that jumps to it:
 * `ldr x16, .+8; br x16; .quad target`), or NOP for NULL, or B to a
 * block running an inline native. The record's flags hold the veneer's
 * offset from the field (times 16 once registered: bits 0-5 the
 * library's).
 */
#define SY_A64_NOP 0xd503201fu

static inline const uint8_t *sy_sc_code(const struct sy_sc_rec *r)
{
	return (const uint8_t *)&r->code + r->code;
}

static inline uint32_t sy_sc_word(const struct sy_sc_rec *r)
{
	uint32_t w;

	memcpy(&w, sy_sc_code(r), 4);
	return w;
}

/* (once registered: the file's offset times 16, bits 0-5 the library's) */
static inline uintptr_t sy_sc_veneer(const struct sy_sc_rec *r)
{
	return (uintptr_t)&r->flags +
	       ((intptr_t)(int32_t)(r->flags & ~0x3fu) >> 4);
}

/* Where the site's BL goes; 0 when it holds no BL. */
static inline uintptr_t sy_sc_bl_dest(const struct sy_sc_rec *r)
{
	uint32_t w = sy_sc_word(r);

	if ((w & 0xfc000000u) != 0x94000000u)
		return 0;
	return (uintptr_t)sy_sc_code(r) +
	       (uintptr_t)((intptr_t)((int32_t)(w << 6) >> 6) * 4);
}

/* The target the stub at a jumps to, or 0 when a holds no stub. */
static inline uintptr_t sy_sc_stub_target(uintptr_t a)
{
	uint32_t w[2];
	uint64_t t;

	memcpy(w, (const void *)a, 8);
	if (w[0] != 0x58000050u || w[1] != 0xd61f0200u)
		return 0;
	memcpy(&t, (const void *)(a + 8), 8);
	return (uintptr_t)t;
}

/* Whether the site calls f the fastest way it can: NOP for NULL, a BL to f
 * within reach, else a BL to a stub that jumps to f. */
static inline int sy_sc_calls(const struct sy_sc_rec *r, uintptr_t f)
{
	uintptr_t c = (uintptr_t)sy_sc_code(r), d = sy_sc_bl_dest(r);
	intptr_t dist = (intptr_t)(f - c);

	if (!f)
		return sy_sc_word(r) == SY_A64_NOP;
	if (dist >= -(1l << 27) && dist < (1l << 27))
		return d == f;
	return d && sy_sc_stub_target(d) == f;
}

static inline int sy_sc_patched_mode(void)
{
	const char *e = getenv("SWITCHYARD_STATIC_CALL");

	return !(e && !strcmp(e, "detour"));
}
#else
#define SY_SC_ARM_OP 2		/* f7 test as compiled, c7 store when armed */
#define SY_SC_GUARD 13		/* a9 TEST32, or e9 JMP32 to the detour */
#define SY_SC_PAYLOAD 18	/* room bytes: 5 unless the call has more */

/* The first byte of the site a record describes. */
static inline const uint8_t *sy_sc_code(const struct sy_sc_rec *r)
{
	return (const uint8_t *)&r->code + r->code;
}

/* Whether the library patches sites here. */
static inline int sy_sc_patched_mode(void)
{
	const char *e = getenv("SWITCHYARD_STATIC_CALL");

	return !(e && !strcmp(e, "detour")) && &__rseq_size &&
	       __rseq_size >= 20;
}

#endif /* __aarch64__ */

/* The first site of key in this object, or NULL. */
static inline const uint8_t *sy_sc_site_of(const struct static_call_key *key)
{
	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (r->meta->key == key)
			return sy_sc_code(r);
	return NULL;
}
#endif /* SY__ARCH_HAVE_STATIC_CALL */

#endif /* SY_SC_SITES_H */
