/* SPDX-License-Identifier: MIT */
/*
 * sy_sc_sites.h - the static call sites of the including object, for the
 * tests that look at their bytes: the records of section
 * sy_static_call_sites (arch/x86_64_static_call.h), the offsets in a site
 * (src/arch/x86_64/sy_arch.h), and whether the library patches sites in
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
