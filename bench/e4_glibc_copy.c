/* SPDX-License-Identifier: MIT */
/*
 * e4_glibc_copy.c - the shim of e4_glibc_copy.so, E4's control copy:
 * bench/CMakeLists.txt extracts glibc's x86-64 memmove/memcpy variant
 * objects (memmove-*.o) from the toolchain's own libc.a and links them
 * with this file into a shared object in the build tree, so that
 * e4_memcpy --control can time glibc's memcpy against the same code at
 * another address (an A/A' control: what the "slower than glibc" rule
 * counts when the algorithm is the same and only the placement differs).
 *
 * Licensing: the objects are the LGPL C library's, taken from the
 * system's own libc.a at build time and linked only into this benchmark
 * helper; it is built locally, neither installed nor distributed, and no
 * glibc code is in this repository. This file is ours (MIT).
 *
 * In libc.so the objects read hidden variables that glibc's start-up
 * code sets from the CPU (init_cacheinfo): the rep movsb threshold and
 * the size above which rep movsb stops again, the non-temporal
 * threshold, half the shared cache, a bit to avoid rep movsb over short
 * distances. `nm -u` of the objects names them; they are defined here,
 * hidden like glibc's own, and e4_memcpy sets them to the live glibc's
 * values (e4g_set) before it times anything: with other values the copy
 * would switch strategies at other sizes and be another algorithm.
 */
#include <stddef.h>
#include <stdlib.h>

#include "e4_glibc_copy.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* the names and types glibc 2.36 gives them (long int; the control bits
 * an int); zero until e4g_set() */
HIDDEN long __x86_rep_movsb_threshold;
HIDDEN long __x86_rep_movsb_stop_threshold;
HIDDEN long __x86_shared_non_temporal_threshold;
HIDDEN long __x86_shared_cache_size_half;
HIDDEN int __x86_string_control;

/* the _chk entries of some objects call it when the destination is too
 * small; ours is never called (the harness calls the memcpy entries)
 * but must resolve inside this object */
HIDDEN __attribute__((noreturn)) void __chk_fail(void);
HIDDEN void __chk_fail(void)
{
	abort();
}

/* the objects' memcpy entries, generated from their symbols
 * (bench/CMakeLists.txt) */
const char *const e4g_variants[] = {
#include "e4_glibc_copy_names.h"
	NULL
};

e4g_set_fn e4g_set;
e4g_refs_fn e4g_refs;

void e4g_set(const struct e4g_thresholds *t)
{
	__x86_rep_movsb_threshold = t->rep_movsb;
	__x86_rep_movsb_stop_threshold = t->rep_movsb_stop;
	__x86_shared_non_temporal_threshold = t->non_temporal;
	__x86_shared_cache_size_half = t->shared_half;
	__x86_string_control = t->string_control;
}

void e4g_refs(const void *ref[E4G_NREFS])
{
	ref[E4G_REP_MOVSB] = &__x86_rep_movsb_threshold;
	ref[E4G_REP_MOVSB_STOP] = &__x86_rep_movsb_stop_threshold;
	ref[E4G_NON_TEMPORAL] = &__x86_shared_non_temporal_threshold;
	ref[E4G_SHARED_HALF] = &__x86_shared_cache_size_half;
	ref[E4G_STRING_CONTROL] = &__x86_string_control;
	ref[E4G_CHK_FAIL] = (const void *)__chk_fail;
}
