/* SPDX-License-Identifier: MIT */
/*
 * memcpy_impl.h - what memcpy.c, calibrate.c and the arch's copy code
 * (src/arch/<arch>/memcpy_arch.c) share. Nothing here is API.
 */
#ifndef SY_MEMCPY_IMPL_H
#define SY_MEMCPY_IMPL_H

#include "../internal.h"

/* The thresholds and the loop's flavour, as the dispatcher uses them. */
struct sy_mc_config {
	uint32_t short_max, rep_min;
	/* n >= libc_min: the C library's memcpy (0: every n, and
	 * switchyard_memcpy is that function itself; UINT32_MAX: never) */
	uint32_t libc_min;
	enum switchyard_memcpy_strategy loop;
};

/*
 * The arch's part:
 *   sy_arch_mc_fn        a strategy alone, or NULL (not on this CPU);
 *                        SHORT and LOOP as with loop, the flavour in
 *                        effect (passed in: the arch's part reads no
 *                        configuration, memcpy.c is above it)
 *   sy_arch_mc_entry     the arch's own dispatcher (what
 *                        switchyard_memcpy resolves to unless the C
 *                        library's memcpy takes every size), or NULL: none
 *   sy_arch_mc_loop      the vector loop's flavour for this CPU: the ONE
 *                        place where it is chosen
 *   sy_arch_mc_running   the flavour the entry runs (the entry's code
 *                        read back)
 *   sy_arch_mc_init      write the configuration into the dispatcher (the
 *                        run-time constants); returns 1 if the code was
 *                        patched, 0 if the sites read the variables, or a
 *                        negative errno (the variables still hold it)
 */
SY_HIDDEN switchyard_memcpy_fn
sy_arch_mc_fn(enum switchyard_memcpy_strategy which,
	      enum switchyard_memcpy_strategy loop);
SY_HIDDEN switchyard_memcpy_fn sy_arch_mc_entry(void);
SY_HIDDEN enum switchyard_memcpy_strategy sy_arch_mc_loop(void);
/* the flavour the dispatcher's entry runs now: loop, or the one it falls
 * back to where the entry's alternative was not applied */
SY_HIDDEN enum switchyard_memcpy_strategy
sy_arch_mc_running(enum switchyard_memcpy_strategy loop);
SY_HIDDEN int sy_arch_mc_init(const struct sy_mc_config *c);

/* The configuration in effect (memcpy.c): decided, and written into the
 * code; sy_mc_decided(): decided only (what the entry's resolver asks). */
SY_HIDDEN const struct sy_mc_config *sy_mc_config(void);
SY_HIDDEN const struct sy_mc_config *sy_mc_decided(void);

/* 1 when switchyard_memcpy is the C library's memcpy itself
 * (memcpy_entry.c) */
SY_HIDDEN int sy_mc_entry_is_libc(void);

#endif /* SY_MEMCPY_IMPL_H */
