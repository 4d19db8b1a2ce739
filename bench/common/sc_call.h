/* SPDX-License-Identifier: MIT */
/*
 * sc_call.h - what e2_calls.c and bench_sc_update.c share: the call
 * targets (each in a translation unit or object of its own, so that no call
 * is inlined or specialised), a reader of static call sites as they are in
 * memory (patched or parked), and the Hodges-Lehmann shift between two
 * samples with its distribution-free 95% CI.
 * Needs _GNU_SOURCE (dl_iterate_phdr): bench/CMakeLists.txt defines it.
 */
#ifndef SY_BENCH_SC_CALL_H
#define SY_BENCH_SC_CALL_H

#include <link.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Every target computes x * 3 + 1 (lea 1(%rdi,%rdi,2),%rax; ret), but
 * sc_tgt_b (x * 5 + 1), the other target of the updates. */
long sc_tgt_a(long x);			/* executable, sc_call_targets.c */
long sc_tgt_b(long x);			/* executable, sc_call_targets.c */
/* executable, target_clones. clang before 16 names the function
 * sc_clones_tgt.ifunc and calls from other files reach its resolver, not
 * the function: the variant is left out there. */
#if defined(__clang__) && __clang_major__ < 16
#define SC_HAVE_CLONES 0
#else
#define SC_HAVE_CLONES 1
long sc_clones_tgt(long x);
#endif
extern long (*sc_fp)(long);		/* = sc_tgt_a */
long sc_lib_tgt(long x);		/* libe2_calls_lib.so, through its PLT */
long sc_lib_ifunc(long x);		/* libe2_calls_lib.so, a GNU ifunc */
long sc_tgt_n(long x);			/* its inline native: e2_calls.c */
long sc_tgt_c(long x);			/* behind a callee-save thunk */
long sc_cs_tgt(long x);			/* a hand-written callee-save function */

/* The indirect-call loops, e2_calls_indirect.c, built twice: plain and with
 * retpolines (the loop is the call site, so it lives in that file). */
long c_pointer(long x, long n);
long t_pointer(long x, long n);
long c_retpoline(long x, long n);
long t_retpoline(long x, long n);

#define SC_LOOPFN __attribute__((noinline, aligned(64)))

/* ---- static call sites as they are in memory --------------------------- */

/*
 * A site's guard is TEST32 (a9) when patched: the payload after it (5
 * bytes on) runs, `call rel32` (e8) for a target, or for a target out of
 * rel32 reach a call to a stub near the site (jmp *0(%rip); .quad target). Parked, the guard is a
 * CALL32 (e8) or JMP32 (e9) to the site's detour, out of line, whose rseq
 * abort signature 0x53053053 lies at most 16 bytes before the guard's
 * destination (TEST32 keeps the same rel32). Nothing here depends on the
 * bytes before the guard (the arm has changed before) nor on the detour's
 * exact layout.
 */
struct sc_seg {
	const unsigned char *lo, *hi;	/* the executable segment */
};

static inline int sc_seg_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct sc_seg *s = (struct sc_seg *)arg;
	const unsigned char *want = s->lo;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *lo, *hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		hi = lo + ph->p_memsz;
		if (want >= lo && want < hi) {
			s->lo = lo;
			s->hi = hi;
			return 1;
		}
	}
	return 0;
}

/* The executable segment holding addr, or {NULL, NULL}. */
static inline struct sc_seg sc_segment_of(const void *addr)
{
	struct sc_seg s = { (const unsigned char *)addr, NULL };

	if (!dl_iterate_phdr(sc_seg_cb, &s))
		s.lo = NULL;
	return s;
}

enum sc_state { SC_NONE, SC_PATCHED, SC_PARKED };

struct sc_site {
	const unsigned char *guard;	/* address of the guard */
	enum sc_state state;
	const void *calls;		/* a patched site's call target (or NULL) */
	const void *stub;		/* the stub the payload calls, if any */
};

static inline int32_t sc_rel32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* The first site whose guard lies in [from, from + len), or state SC_NONE. */
static inline struct sc_site sc_find_site(const void *from, size_t len)
{
	struct sc_site r = { NULL, SC_NONE, NULL, NULL };
	struct sc_seg seg = sc_segment_of(from);
	const unsigned char *p = (const unsigned char *)from;

	if (!seg.lo)
		return r;
	for (const unsigned char *q = p; q < p + len && q + 10 <= seg.hi; q++) {
		const unsigned char *det;
		bool sig = false;

		if (*q != 0xa9 && *q != 0xe8 && *q != 0xe9)
			continue;
		det = q + 5 + sc_rel32(q + 1);
		if (det - 20 < seg.lo || det > seg.hi)
			continue;
		for (const unsigned char *k = det - 20; k + 4 <= det; k++) {
			uint32_t v;

			memcpy(&v, k, 4);
			if (v == 0x53053053) {
				sig = true;
				break;
			}
		}
		if (!sig)
			continue;
		r.guard = q;
		r.state = *q == 0xa9 ? SC_PATCHED : SC_PARKED;
		if (r.state == SC_PATCHED && q[5] == 0xe8) {
			const unsigned char *d = q + 10 + sc_rel32(q + 6);

			r.calls = d;
			/* a far target: the call goes to a stub near the site,
			 * jmp *0(%rip) followed by the target's address */
			if (!memcmp(d, "\xff\x25\0\0\0\0", 6)) {
				r.stub = d;
				memcpy(&r.calls, d + 6, sizeof(r.calls));
			}
		}
		return r;
	}
	return r;
}

/* Count the first max sites in [from, from + len): patched calling target,
 * patched calling something else, parked. */
struct sc_census {
	int patched_target, patched_other, parked;
};

static inline struct sc_census sc_count_sites(const void *from, size_t len,
					      int max, const void *target)
{
	struct sc_census c = { 0, 0, 0 };
	const unsigned char *p = (const unsigned char *)from;
	const unsigned char *end = p + len;

	for (int k = 0; k < max && p < end; k++) {
		struct sc_site s = sc_find_site(p, (size_t)(end - p));

		if (s.state == SC_NONE)
			break;
		if (s.state == SC_PARKED)
			c.parked++;
		else if (s.calls == target)
			c.patched_target++;
		else
			c.patched_other++;
		p = s.guard + 10;
	}
	return c;
}

/* ---- Hodges-Lehmann shift ---------------------------------------------- */

static inline int sc_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct sc_shift {
	double est, lo, hi;	/* a - b: median of the pairwise differences */
};

/* The shift a - b and its 95% CI (the Mann-Whitney inversion: ranks
 * k and nm - k + 1 of the nm sorted differences). */
static inline struct sc_shift sc_hl_shift(const double *a, size_t na,
					  const double *b, size_t nb)
{
	size_t nm = na * nb, k;
	double *d = (double *)malloc(nm * sizeof(*d));
	struct sc_shift r;
	double c;

	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			d[i * nb + j] = a[i] - b[j];
	qsort(d, nm, sizeof(*d), sc_cmp_double);
	r.est = nm % 2 ? d[nm / 2] : (d[nm / 2 - 1] + d[nm / 2]) / 2;
	c = nm / 2.0 - 1.96 * sqrt(nm * (double)(na + nb + 1) / 12.0);
	k = c < 1 ? 1 : (size_t)floor(c);
	r.lo = d[k - 1];
	r.hi = d[nm - k];
	free(d);
	return r;
}

#endif /* SY_BENCH_SC_CALL_H */
