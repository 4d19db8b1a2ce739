/* SPDX-License-Identifier: MIT */
/*
 * e4_glibc_copy.h - the interface of e4_glibc_copy.so, the control copy
 * of E4's --control lane (bench/e4_glibc_copy.c): glibc's own memcpy
 * variants, taken from the toolchain's libc.a and linked a second time
 * at another address. e4_memcpy loads it with dlopen() and finds these
 * names with dlsym() (bench/e4_control.c, the second part below).
 */
#ifndef E4_GLIBC_COPY_H
#define E4_GLIBC_COPY_H

#include <stddef.h>

/* What the objects reference, in the order e4g_refs() gives their
 * addresses (the setter fills the first five) */
enum {
	E4G_REP_MOVSB,		/* __x86_rep_movsb_threshold */
	E4G_REP_MOVSB_STOP,	/* __x86_rep_movsb_stop_threshold */
	E4G_NON_TEMPORAL,	/* __x86_shared_non_temporal_threshold */
	E4G_SHARED_HALF,	/* __x86_shared_cache_size_half */
	E4G_STRING_CONTROL,	/* __x86_string_control (an int) */
	E4G_CHK_FAIL,		/* __chk_fail (the _chk entries' call) */
	E4G_NREFS
};

/* glibc's values for this CPU, as its ld.so reports them */
struct e4g_thresholds {
	long rep_movsb, rep_movsb_stop, non_temporal, shared_half;
	int string_control;
};

/* e4g_set: the thresholds the copy runs with (called before timing) */
typedef void e4g_set_fn(const struct e4g_thresholds *t);
/* e4g_refs: ref[i] = the address the objects' references to E4G_<i>
 * resolve to in this object */
typedef void e4g_refs_fn(const void *ref[E4G_NREFS]);
/* e4g_variants: the memcpy entries of the objects linked in (their
 * __memcpy_* symbols), NULL-terminated */

/* ---- e4_control.c, in e4_memcpy: the copy loaded and checked ---------- */

typedef void *e4g_memcpy_fn(void *d, const void *s, size_t n);

struct e4g_control {
	e4g_memcpy_fn *glibc;	/* glibc's memcpy: its IFUNC's choice */
	e4g_memcpy_fn *copy;	/* the same variant in e4_glibc_copy.so */
	struct e4g_thresholds t;	/* glibc's, the copy's too */
};

/* e4_glibc_copy.so beside the program loaded, glibc's variant found in
 * it, glibc's thresholds for this CPU read and set in it (two lines
 * saying so on stdout): NULL, or why the control cannot run */
const char *e4g_load(struct e4g_control *ctl, char *why, size_t wl);
/* the copy checked at sizes around the thresholds, four alignments:
 * NULL, or what it copied wrongly */
const char *e4g_check(const struct e4g_control *ctl, size_t *nchecked,
		      char *why, size_t wl);

#endif /* E4_GLIBC_COPY_H */
