/* SPDX-License-Identifier: MIT */
/*
 * e4_control.c - the loading side of E4's A/A' control (e4_memcpy
 * --control; the timing is e4_memcpy.c's): e4_glibc_copy.so beside the
 * program, glibc's variant in it, glibc's thresholds, a check that the
 * copy copies.
 *
 * The copy must be the live glibc's algorithm: the variant glibc's IFUNC
 * chose (the one whose code equals the code at glibc's memcpy), with
 * glibc's thresholds for this CPU, which differ per CPU. Those come from
 * this program's ld.so: --list-tunables prints the tunables
 * x86_rep_movsb_threshold, x86_non_temporal_threshold and
 * x86_shared_cache_size as glibc set them at start-up, and
 * --list-diagnostics the cpu_features fields its init_cacheinfo copies
 * into the variables (the same three, and rep_movsb_stop_threshold, in
 * glibc 2.36 the L2 size on AMD and the non-temporal threshold
 * elsewhere, and the Avoid_Short_Distance_REP_MOVSB bit, bit 0 of
 * __x86_string_control). Where the live code reads a variable, the value
 * it reads is checked too (found through the code: below).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e4_glibc_copy.h"

#define CHECK_MAX (4u << 20)	/* the copy's self-check: sizes up to */

/* the program's interpreter (PT_INTERP): its ld.so */
static int interp_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			*(const char **)data = (const char *)
				(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return 1;	/* the first object is the program */
}

/* `ld.so opt`: val[i] = the number after keys[i] and ':' or '='; a bit
 * per key found, -1 when it cannot run */
static int ldso_values(const char *ldso, const char *opt,
		       const char *const *keys, int n, long *val)
{
	char cmd[4200], line[512];
	int got = 0;
	FILE *f;

	if (strchr(ldso, '\'') || strlen(ldso) > 4096)
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' %s 2>/dev/null", ldso, opt);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (int i = 0; i < n; i++) {
			size_t l = strlen(keys[i]);
			char *end;

			if (strncmp(line, keys[i], l) ||
			    (line[l] != ':' && line[l] != '='))
				continue;
			val[i] = strtol(line + l + 1, &end, 0);
			if (end != line + l + 1)
				got |= 1 << i;
		}
	pclose(f);
	return got;
}

/* glibc's thresholds from its ld.so; NULL, or why not */
static const char *glibc_thresholds(struct e4g_thresholds *t, char *why,
				    size_t wl)
{
	static const char *const tun[] = {
		"glibc.cpu.x86_rep_movsb_threshold",
		"glibc.cpu.x86_non_temporal_threshold",
		"glibc.cpu.x86_shared_cache_size",
	};
	static const char *const diag[] = {
		"x86.cpu_features.rep_movsb_threshold",
		"x86.cpu_features.non_temporal_threshold",
		"x86.cpu_features.shared_cache_size",
		"x86.cpu_features.rep_movsb_stop_threshold",
		"x86.cpu_features.preferred.Avoid_Short_Distance_REP_MOVSB",
	};
	const char *ldso = NULL;
	long tv[3], dv[5] = { 0 };
	int got;

	dl_iterate_phdr(interp_cb, &ldso);
	if (!ldso)
		return "the program has no interpreter (PT_INTERP)";
	got = ldso_values(ldso, "--list-tunables", tun, 3, tv);
	for (int i = 0; i < 3; i++)
		if (got < 0 || !(got & 1 << i)) {
			snprintf(why, wl, "%s --list-tunables gives no %s "
				 "(glibc before 2.33?)", ldso, tun[i]);
			return why;
		}
	got = ldso_values(ldso, "--list-diagnostics", diag, 5, dv);
	for (int i = 0; i < 4; i++)
		if (got < 0 || !(got & 1 << i)) {
			snprintf(why, wl, "%s --list-diagnostics gives no %s",
				 ldso, diag[i]);
			return why;
		}
	for (int i = 0; i < 3; i++)
		if (tv[i] != dv[i]) {
			snprintf(why, wl, "%s is %#lx, %s %#lx", tun[i], tv[i],
				 diag[i], dv[i]);
			return why;
		}
	t->rep_movsb = tv[0];
	t->non_temporal = tv[1];
	/* init_cacheinfo: the shared cache rounded down to 256, halved */
	t->shared_half = (tv[2] & ~255L) / 2;
	t->rep_movsb_stop = dv[3];
	/* absent before the bit existed: then nothing reads it */
	t->string_control = (got & 1 << 4) && dv[4] ? 1 : 0;
	return NULL;
}

/*
 * Where the control copy's code at c has a 4-byte RIP-relative field
 * resolving to one of the shim's definitions (ref[]), the index of the
 * definition, and in *k the bytes of immediate after the field (the next
 * instruction's address is the field's + 4 + k; testl $1, x(%rip) has 4);
 * else -1. A field of other bytes would have to equal the distance to a
 * definition exactly (the code's own jumps stay within it).
 */
static int ref_at(const unsigned char *c, const void *const *ref, int *k)
{
	static const int imm[] = { 0, 1, 2, 4 };
	int32_t d;

	memcpy(&d, c, 4);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < E4G_NREFS; j++)
			if ((uintptr_t)c + 4 + (uintptr_t)imm[i] +
			    (uintptr_t)(intptr_t)d == (uintptr_t)ref[j]) {
				*k = imm[i];
				return j;
			}
	return -1;
}

/*
 * How many of the sz bytes of a variant in the copy (at c) the code at g
 * (glibc's memcpy) has the same, from the start, the fields that refer to
 * the shim apart: sz when it is that variant. Relative jumps within the
 * variant are the same in both; a field referring to a variable differs.
 * With val, the same fields in glibc's code point at glibc's own hidden
 * variables: val[j] = the value there (-1: the variant reads none).
 */
static size_t same_code(const unsigned char *c, const unsigned char *g,
			size_t sz, const void *const *ref, long *val)
{
	for (size_t i = 0; i < sz; i++) {
		int k, j = i + 4 <= sz ? ref_at(c + i, ref, &k) : -1;

		if (j < 0) {
			if (c[i] != g[i])
				return i;
			continue;
		}
		if (val && j != E4G_CHK_FAIL) {
			int32_t d;
			uintptr_t a;

			memcpy(&d, g + i, 4);
			a = (uintptr_t)g + i + 4 + (uintptr_t)k +
			    (uintptr_t)(intptr_t)d;
			val[j] = j == E4G_STRING_CONTROL ?
				 *(const int *)a : *(const long *)a;
		}
		i += 3;
	}
	return sz;
}

/* the copy's self-check: every size to 80, these, and the sizes around
 * glibc's two rep movsb thresholds */
static const size_t check_sizes[] = { 127, 128, 129, 255, 256, 257, 511, 512,
	513, 1000, 2047, 2048, 4095, 4096, 4097, 8191, 8192, 8193, 10240,
	65536 + 77 };
/* the copy copies, at the check's sizes and four alignments, and touches
 * nothing outside the destination; NULL, or what went wrong (*nchecked:
 * the sizes) */
const char *e4g_check(const struct e4g_control *ctl, size_t *nchecked,
		      char *why, size_t wl)
{
	const struct e4g_thresholds *t = &ctl->t;
	e4g_memcpy_fn *f = ctl->copy;
	static const unsigned off[4][2] = { { 0, 0 }, { 3, 17 }, { 17, 3 },
					    { 63, 1 } };
	size_t sz[128], nsz = 0, cap = CHECK_MAX + 256;
	unsigned char *src = malloc(cap), *dst = malloc(cap);
	const char *bad = NULL;

	for (size_t n = 0; n <= 80; n++)
		sz[nsz++] = n;
	for (size_t i = 0; i < sizeof(check_sizes) / sizeof(*check_sizes);
	     i++)
		sz[nsz++] = check_sizes[i];
	for (long d = -1; d <= 1; d++) {
		long at[2] = { t->rep_movsb + d, t->rep_movsb_stop + d };

		for (int i = 0; i < 2; i++)
			if (at[i] > 0 && (size_t)at[i] <= CHECK_MAX)
				sz[nsz++] = (size_t)at[i];
	}
	*nchecked = nsz;
	if (!src || !dst)
		bad = "no memory for the copy's check";
	for (size_t i = 0; i < cap && !bad; i++)
		src[i] = (unsigned char)(i * 131 + (i >> 8));
	for (size_t i = 0; i < nsz && !bad; i++)
		for (int a = 0; a < 4 && !bad; a++) {
			size_t n = sz[i], so = off[a][0], d0 = 64 + off[a][1];
			void *r;

			memset(dst, 0xee, d0 + n + 64);
			r = f(dst + d0, src + so, n);
			for (size_t b = 0; b < d0 + n + 64 && !bad; b++)
				if (b >= d0 && b < d0 + n ?
				    dst[b] != src[so + b - d0] : dst[b] != 0xee)
					bad = why;
			if (r != dst + d0)
				bad = why;
			if (bad)
				snprintf(why, wl, "the control copy copied %zu "
					 "bytes (+%zu -> +%zu) wrongly", n, so,
					 d0 - 64);
		}
	free(src);
	free(dst);
	return bad;
}

/* the directory of this program, with a slash */
static int self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	slash[1] = 0;
	return 0;
}

/* Load the copy, find glibc's variant in it, set its thresholds; NULL,
 * or why the control cannot run */
const char *e4g_load(struct e4g_control *ctl, char *why, size_t wl)
{
	static const char *const refname[E4G_NREFS - 1] = {
		"__x86_rep_movsb_threshold", "__x86_rep_movsb_stop_threshold",
		"__x86_shared_non_temporal_threshold",
		"__x86_shared_cache_size_half", "__x86_string_control",
	};
	char dir[4096], path[4200];
	const char *const *names;
	const void *ref[E4G_NREFS], *match = NULL;
	const char *name = NULL, *near = "?";
	size_t cmp = 0, most = 0, nearsz = 0;
	struct e4g_thresholds t;
	e4g_set_fn *set;
	e4g_refs_fn *refs;
	void *h, *libc, *g;
	long val[E4G_NREFS], want[E4G_NREFS - 1];
	int nv = 0;
	FILE *f;

	if (self_dir(dir, sizeof(dir)))
		return "cannot find this program's directory";
	snprintf(path, sizeof(path), "%se4_glibc_copy.skip", dir);
	f = fopen(path, "r");
	if (f) {
		/* the build's reason (bench/CMakeLists.txt) */
		if (!fgets(why, (int)wl, f))
			why[0] = 0;
		fclose(f);
		why[strcspn(why, "\n")] = 0;
		return why;
	}
	snprintf(path, sizeof(path), "%se4_glibc_copy.so", dir);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, wl, "no e4_glibc_copy.so beside e4_memcpy (it is "
			 "built in the build tree, never installed): %s",
			 dlerror());
		return why;
	}
	names = dlsym(h, "e4g_variants");
	*(void **)&set = dlsym(h, "e4g_set");
	*(void **)&refs = dlsym(h, "e4g_refs");
	if (!names || !set || !refs)
		return "e4_glibc_copy.so lacks the shim's symbols";
	/* glibc's memcpy: libc's own symbol, its IFUNC resolved (the
	 * program's memcpy may be a sanitizer's interceptor) */
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	g = libc ? dlsym(libc, "memcpy") : NULL;
	if (!g)
		return "no memcpy in libc.so.6";
	refs(ref);
	for (int i = 0; names[i]; i++) {
		void *c = dlsym(h, names[i]);
		const ElfW(Sym) *sym = NULL;
		Dl_info di;
		size_t sz, same;

		if (!c || c == match)
			continue;
		nv++;
		sz = dladdr1(c, &di, (void **)&sym, RTLD_DL_SYMENT) && sym &&
		     sym->st_size ? sym->st_size : 48;
		same = same_code(c, g, sz, ref, NULL);
		if (same > most) {
			most = same;
			near = names[i];
			nearsz = sz;
		}
		if (same < sz)
			continue;
		if (match) {
			snprintf(why, wl, "glibc's memcpy has the code of both "
				 "%s and %s", name, names[i]);
			return why;
		}
		match = c;
		name = names[i];
		cmp = sz;
	}
	if (!match) {
		/* (in libc.so a variant without erms enters its body,
		 * which follows the erms entry, from farther: libc.a has
		 * no _chk entries between them) */
		snprintf(why, wl, "glibc's memcpy at %p is none of the %d "
			 "memcpy variants of libc.a (the longest match: %s, "
			 "%zu of %zu bytes)", g, nv, near, most, nearsz);
		return why;
	}
	if (glibc_thresholds(&t, why, wl))
		return why;
	want[E4G_REP_MOVSB] = t.rep_movsb;
	want[E4G_REP_MOVSB_STOP] = t.rep_movsb_stop;
	want[E4G_NON_TEMPORAL] = t.non_temporal;
	want[E4G_SHARED_HALF] = t.shared_half;
	want[E4G_STRING_CONTROL] = t.string_control;
	for (int j = 0; j < E4G_NREFS; j++)
		val[j] = -1;
	same_code(match, g, cmp, ref, val);
	printf("# glibc's memcpy: %s (%zu bytes of code compared), at %p;"
	       " the copy at %p\n# its thresholds (ld.so):", name, cmp, g,
	       match);
	for (int j = 0; j < E4G_NREFS - 1; j++)
		printf(" %s %#lx%s", refname[j], want[j],
		       val[j] < 0 ? "" : val[j] == want[j] ?
		       " (glibc's own: the same)" : " (glibc's own: other)");
	printf("\n");
	for (int j = 0; j < E4G_NREFS - 1; j++)
		if (val[j] >= 0 && val[j] != want[j]) {
			snprintf(why, wl, "ld.so says %s %#lx, glibc's own "
				 "variable is %#lx", refname[j], want[j],
				 val[j]);
			return why;
		}
	set(&t);
	ctl->t = t;
	*(void **)&ctl->glibc = g;
	*(const void **)&ctl->copy = match;
	return NULL;
}
