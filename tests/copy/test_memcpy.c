/* SPDX-License-Identifier: MIT */
/*
 * test_memcpy.c - switchyard_memcpy() and each of its strategies copy
 * correctly at every size 0..8192 with every source alignment 0..63 and
 * every destination alignment 0..63 (the full product, 33.5 million copies
 * per run): the destination equals the source, the 64 guard bytes before
 * and after it are untouched, the source is unchanged, the return value
 * is the destination. Then copies of 0..512 bytes that end just below, or
 * start just above, an inaccessible page; and copies of 257..1100 bytes
 * and a few sizes near 4 and 8 KiB with the destination -320..320 bytes
 * from the source modulo 4 KiB, where the loops turn downwards (0..255
 * above: memcpy_vec.c LOOP_DIRECTION) and where they do not.
 *
 *   test_memcpy <what> [expect]
 *     what     dispatch | short | loop | sse2 | avx2 | avx512 | rep_movsb
 *     expect   short_max,rep_min: the thresholds that must be in effect
 *              (ctest sets SWITCHYARD_MEMCPY to them), "-" for none;
 *              rep_min is UINT32_MAX when this CPU (or the mask) has no
 *              ERMS
 * A strategy this CPU does not have must be NULL from
 * switchyard_memcpy_get_strategy() (checked), and is not run. With the
 * dispatcher, on x86-64, the thresholds must also be in its code:
 * immediates behind TEST guards, no placeholder left.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sy_memcpy_test.h"
#include "sy_test.h"

#define MAXN 8192
#define ALIGNS 64

/*
 * Under ThreadSanitizer or AddressSanitizer every byte the copy and the
 * checks touch goes through the runtime: the full product takes over ten
 * minutes a run. There (scripts/sanitize.sh), and under an emulator
 * (qemu-user: minutes too), every size is still checked, with every 9th
 * source and destination alignment (0, 9, ..., 63: both ends of a 64-byte
 * line and the offsets in between mod 16); everywhere else, all of them.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SY_MC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SY_MC_SANITIZED 1
#endif
#endif
#ifdef SY_MC_SANITIZED
#define ALIGN_STEP 9
#else
#define ALIGN_STEP 1
#endif
#define GUARD 64
#define POISON 0xee

static unsigned char *src_buf, *src_copy, *dst_buf;

/* one alignment pair, every size; returns the number of failures */
static long check_pair(switchyard_memcpy_fn f, unsigned sa, unsigned da)
{
	unsigned char *s = src_buf + sa, *d = dst_buf + GUARD + da;
	long bad = 0;

	for (size_t n = 0; n <= MAXN; n++) {
		void *r;

		memset(d - GUARD, POISON, n + 2 * GUARD);
		r = f(d, s, n);
		if (r != d || memcmp(d, s, n)) {
			if (bad++ < 5)
				fprintf(stderr, "size %zu src+%u dst+%u: %s\n",
					n, sa, da, r != d ? "returned another"
					" pointer" : "wrong bytes");
			continue;
		}
		for (unsigned i = 0; i < GUARD; i++)
			if (d[-1 - (int)i] != POISON || d[n + i] != POISON) {
				if (bad++ < 5)
					fprintf(stderr, "size %zu src+%u dst+%u:"
						" guard byte %s%u written\n", n,
						sa, da,
						d[-1 - (int)i] != POISON ? "-" : "+",
						i);
				break;
			}
	}
	return bad;
}

/*
 * Copies that end at the last byte before an inaccessible page, or start
 * at the first byte after one, both for the source and the destination:
 * a copy that reads or writes a byte beyond its buffer dies here (SIGSEGV
 * fails the test). The AVX-512 flavour's masked moves rely on the CPU not
 * touching masked-off bytes, which may lie on such a page.
 */
static long check_page_edges(switchyard_memcpy_fn f)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 5 * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *sp, *dp;
	long bad = 0;

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return 1;
	/* | none | source | none | destination | none | */
	CHECK_EQ(mprotect(m, pg, PROT_NONE), 0);
	CHECK_EQ(mprotect(m + 2 * pg, pg, PROT_NONE), 0);
	CHECK_EQ(mprotect(m + 4 * pg, pg, PROT_NONE), 0);
	sp = m + pg;
	dp = m + 3 * pg;
	for (size_t i = 0; i < pg; i++)
		sp[i] = (unsigned char)(i * 7 + 1);
	for (size_t n = 0; n <= 512; n++)
		for (int e = 0; e < 4; e++) {
			/* e: bit 0 source at the end of its page (else at
			 * its start), bit 1 the destination */
			const unsigned char *s = e & 1 ? sp + pg - n : sp;
			unsigned char *d = e & 2 ? dp + pg - n : dp;

			memset(dp, 0, pg);
			if (f(d, s, n) != d || memcmp(d, s, n)) {
				if (bad++ < 5)
					fprintf(stderr, "page edge: size %zu "
						"case %d: wrong\n", n, e);
			}
		}
	munmap(m, 5 * pg);
	return bad;
}

/*
 * The destination at src + 16 KiB + delta, delta = -320..320 (step 1, 7
 * under an emulator): 0..255 above the source modulo 4 KiB, where the AVX
 * flavours' loops copy downwards, on either side of it, and at its edges.
 * Sizes from 257 (the AVX2 loop's first) to 1100, and about 4 and 8 KiB;
 * guard bytes on both sides of the destination.
 */
static int guards_intact(const unsigned char *d, size_t n)
{
	for (unsigned i = 0; i < GUARD; i++)
		if (d[-1 - (int)i] != POISON || d[n + i] != POISON)
			return 0;
	return 1;
}

static long check_directions(switchyard_memcpy_fn f, int dstep)
{
	static const size_t big[][2] = { { 257, 1100 }, { 4030, 4160 },
					 { 8150, 8192 } };
	size_t len = 40960;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *s;
	long bad = 0;

	CHECK(m != MAP_FAILED);
	if (m == MAP_FAILED)
		return 1;
	s = m + 1024;
	for (size_t i = 0; i < 8192 + 64; i++)
		s[i] = (unsigned char)(i * 13 % POISON + 1) % POISON;
	for (int delta = -320; delta <= 320; delta += dstep)
		for (size_t r = 0; r < sizeof(big) / sizeof(big[0]); r++)
			for (size_t n = big[r][0]; n <= big[r][1]; n++) {
				unsigned char *d = s + 16384 + delta;

				memset(d - GUARD, POISON, n + 2 * GUARD);
				if (f(d, s, n) != d || memcmp(d, s, n) ||
				    !guards_intact(d, n)) {
					if (bad++ < 5)
						fprintf(stderr, "size %zu, dst "
							"= src + 16 KiB %+d: "
							"wrong\n", n, delta);
				}
			}
	munmap(m, len);
	return bad;
}

#if defined(__x86_64__) && !defined(SWITCHYARD_NO_PATCHING)
/*
 * Count the run-time constant sites in the dispatcher's code that hold v:
 * a9 <rel32> (TEST32 guard), [41] b8+r <imm32>. And the ones still
 * e9 <rel32> [41] b8+r 78 56 34 12 (unpatched).
 */
/* where the entry's alternative leads: its jump's target, or on */
static const unsigned char *flavour_code(void)
{
	const unsigned char *c = (const unsigned char *)switchyard_memcpy;
	int32_t rel;

	if (c[0] != 0xe9)
		return c;
	memcpy(&rel, c + 1, 4);
	return c + 5 + rel;
}

/* The object that holds addr: its file and load bias (dl_iterate_phdr). */
struct obj_of {
	uintptr_t addr, bias;
	char path[4096];
	int found;
};

static int obj_of_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_of *o = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || o->addr < lo ||
		    o->addr >= lo + ph->p_memsz)
			continue;
		o->bias = info->dlpi_addr;
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name[0] ?
			 info->dlpi_name : "/proc/self/exe");
		o->found = 1;
		return 1;
	}
	return 0;
}

/*
 * The size of the function that starts at code, from its object's symbol
 * table (0: no symbol, a stripped library). The SSE2 dispatcher is compiled
 * C: its length depends on the build type (-O0 makes it several times
 * longer than -O2) and on instrumentation, so its sites are looked for in
 * the whole function, as long as it is.
 */
static size_t function_size(const unsigned char *code)
{
	struct obj_of o = { .addr = (uintptr_t)code };
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	size_t size = 0;
	int fd;

	dl_iterate_phdr(obj_of_cb, &o);
	if (!o.found || (fd = open(o.path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)))
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
			   (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	for (int i = 0; i < eh.e_shnum && !size; i++) {
		ElfW(Sym) sym;

		if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_entsize != sizeof(sym))
			continue;
		for (size_t j = 0; j < sh[i].sh_size / sizeof(sym); j++) {
			if (pread(fd, &sym, sizeof(sym), (off_t)(sh[i].sh_offset +
				  j * sizeof(sym))) != (ssize_t)sizeof(sym))
				break;
			if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC &&
			    o.bias + sym.st_value == (uintptr_t)code) {
				size = sym.st_size;
				break;
			}
		}
	}
out:
	free(sh);
	close(fd);
	return size;
}

static void scan_sites(uint32_t v, int *patched, int *placeholder)
{
	const unsigned char *c = flavour_code();
	/* the flavour's code, not past it: the assembly (both AVX flavours'
	 * sites lie in switchyard_memcpy's first 448 bytes) is the last code
	 * of .text (src/arch/x86_64/memcpy_vec.c); the SSE2 dispatcher is
	 * compiled C in the middle: all of it (its symbol's size), else its
	 * first KiB */
	static size_t sse2_len;
	int len;

	if (c != (const unsigned char *)switchyard_memcpy && !sse2_len) {
		sse2_len = function_size(c);
		printf("SSE2 dispatcher: %zu bytes%s\n", sse2_len,
		       sse2_len ? "" : " (no symbol: its first 1024 scanned)");
		if (!sse2_len || sse2_len < 16)
			sse2_len = 1024;
	}
	len = c == (const unsigned char *)switchyard_memcpy ? 448 : (int)sse2_len;

	*patched = *placeholder = 0;
	for (int i = 0; i < len; i++) {
		const unsigned char *m = c + i + 5;
		uint32_t imm;

		if (c[i] != 0xa9 && c[i] != 0xe9)
			continue;
		if (m[0] == 0x41)
			m++;
		if (m[0] < 0xb8 || m[0] > 0xbf)
			continue;
		memcpy(&imm, m + 1, 4);
		if (c[i] == 0xa9 && imm == v)
			(*patched)++;
		if (c[i] == 0xe9 && imm == 0x12345678)
			(*placeholder)++;
	}
}
#endif

static void check_thresholds(const char *expect)
{
	struct switchyard_memcpy_thresholds t;
	unsigned long sm, rm;

	CHECK_EQ(switchyard_memcpy_get_thresholds(&t), 0);
	CHECK_EQ(switchyard_memcpy_get_thresholds(NULL), -EINVAL);
	printf("thresholds: short_max %u rep_min %u loop %d source %d "
	       "patched %d\n", t.short_max, t.rep_min, (int)t.loop,
	       (int)t.source, t.patched);
	CHECK(t.short_max <= SWITCHYARD_MEMCPY_SHORT_LIMIT);
	if (!boot_cpu_has(X86_FEATURE_ERMS))
		CHECK_EQ(t.rep_min, UINT32_MAX);
	if (expect && strcmp(expect, "-") &&
	    sscanf(expect, "%lu,%lu", &sm, &rm) == 2) {
		CHECK_EQ(t.source, SWITCHYARD_MEMCPY_FROM_ENV);
		CHECK_EQ(t.short_max, sm);
		CHECK_EQ(t.rep_min, boot_cpu_has(X86_FEATURE_ERMS) ?
				    rm : UINT32_MAX);
	}
#if defined(__x86_64__) && !defined(SWITCHYARD_NO_PATCHING)
	{
		int p, ph;

		CHECK_EQ(t.patched, 1);
		/* the C library's memcpy for every size: the name is that
		 * function (the IFUNC's resolution), in a shared library
		 * (a static link keeps the dispatcher: memcpy_entry.c) */
		if (t.loop == SWITCHYARD_MEMCPY_LIBC) {
			CHECK_EQ(switchyard_memcpy_get_libc_min(), 0);
			CHECK(!SY_TEST_MEMCPY_IFUNC ||
		      same_fn((void *)switchyard_memcpy, (void *)memcpy));
			return;
		}
		/* the name is the dispatcher (a static link, or our code
		 * asked for): nothing is handed to the C library through a
		 * jump where the name cannot be the C library's function */
		CHECK(switchyard_memcpy_get_libc_min() != 0);
		/* the flavour follows the features (and the mask) */
		if (!boot_cpu_has(X86_FEATURE_AVX2))
			CHECK_EQ(t.loop, SWITCHYARD_MEMCPY_SSE2);
		else if (!boot_cpu_has(X86_FEATURE_AVX512F))
			CHECK_EQ(t.loop, SWITCHYARD_MEMCPY_AVX2);
		else
			CHECK(t.loop == SWITCHYARD_MEMCPY_AVX2 ||
			      t.loop == SWITCHYARD_MEMCPY_AVX512);
		/* (a sanitizer's build: the name is a wrapper that jumps to
		 * the entry; the entry's code is not at that address) */
		if (!SY_TEST_MEMCPY_IFUNC) {
			printf("ASan/TSan build: the entry's code not "
			       "scanned (the name is a wrapper)\n");
			return;
		}
		/* the entry: the flavour's own first instructions, or the
		 * jump to the SSE2 dispatcher (memcpy_vec.c) */
		CHECK_EQ(*(const unsigned char *)switchyard_memcpy == 0xe9,
			 t.loop == SWITCHYARD_MEMCPY_SSE2);
		/* the flavour's code holds the values, no placeholder;
		 * short_max only in the SSE2 flavour's (in the others the
		 * short moves and the loop are one code to 256 bytes) */
		scan_sites(t.rep_min, &p, &ph);
		CHECK_EQ(ph, 0);
		if (t.loop == SWITCHYARD_MEMCPY_SSE2) {
			scan_sites(t.short_max, &p, &ph);
			CHECK(p >= 1);
		}
		/* (instrumented, or at -O0, the SSE2 dispatcher is several
		 * KiB long, and rep_min's test 2 KiB in: the whole function
		 * is scanned) */
		scan_sites(t.rep_min, &p, &ph);
		CHECK(p >= 1);
	}
#endif
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"short", "loop", "sse2", "avx2", "avx512", "rep_movsb",
	};
	const char *what = argc > 1 ? argv[1] : "dispatch";
	switchyard_memcpy_fn f = NULL;
	long bad = 0;
	unsigned step;

	if (!strcmp(what, "dispatch")) {
		f = switchyard_memcpy;
		check_thresholds(argc > 2 ? argv[2] : NULL);
	} else {
		int i;

		for (i = 0; i < SWITCHYARD_MEMCPY_STRATEGIES; i++)
			if (!strcmp(what, names[i]))
				break;
		CHECK(i < SWITCHYARD_MEMCPY_STRATEGIES);
		if (i == SWITCHYARD_MEMCPY_STRATEGIES)
			return sy_test_done("test_memcpy");
		f = switchyard_memcpy_get_strategy(
			(enum switchyard_memcpy_strategy)i);
	}
	CHECK(switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_STRATEGIES) == NULL);
	CHECK(switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_SHORT) != NULL);
	CHECK(switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_LOOP) != NULL);
#ifdef __x86_64__
	/* what the CPU (after SWITCHYARD_CPU_MASK) has, and nothing else */
	CHECK((switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_AVX2) != NULL) ==
	      boot_cpu_has(X86_FEATURE_AVX2));
	CHECK((switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_AVX512) != NULL) ==
	      (boot_cpu_has(X86_FEATURE_AVX512F) &&
	       boot_cpu_has(X86_FEATURE_AVX512VL)));
	CHECK((switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_REP_MOVSB) !=
	       NULL) == boot_cpu_has(X86_FEATURE_ERMS));
#endif

	if (!f) {
		/* not a SKIP (scripts/test.sh fails on those): that it is
		 * absent exactly when the CPU lacks its feature is checked
		 * above */
		printf("strategy %s: not on this CPU (absent, as it must be)\n",
		       what);
		return sy_test_done("test_memcpy");
	}
	src_buf = aligned_alloc(64, MAXN + 2 * ALIGNS);
	src_copy = malloc(MAXN + 2 * ALIGNS);
	dst_buf = aligned_alloc(64, MAXN + 2 * ALIGNS + 2 * GUARD);
	if (!src_buf || !src_copy || !dst_buf)
		SKIP("out of memory");
	/* no source byte equals the poison: a byte not copied shows */
	srand(7);
	for (size_t i = 0; i < MAXN + 2 * ALIGNS; i++)
		src_buf[i] = (unsigned char)(rand() % POISON);
	memcpy(src_copy, src_buf, MAXN + 2 * ALIGNS);
	step = sy_test_emulated() ? 9 : ALIGN_STEP;
	for (unsigned sa = 0; sa < ALIGNS; sa += step)
		for (unsigned da = 0; da < ALIGNS; da += step)
			bad += check_pair(f, sa, da);
	CHECK_EQ(bad, 0);
	CHECK(!memcmp(src_buf, src_copy, MAXN + 2 * ALIGNS));
	CHECK_EQ(check_page_edges(f), 0);
	CHECK_EQ(check_directions(f, sy_test_emulated() ? 7 : 1), 0);
	printf("%s: sizes 0..%d x src 0..%d x dst 0..%d (step %d): %ld bad\n",
	       what, MAXN, ALIGNS - 1, ALIGNS - 1, step, bad);
	free(src_buf);
	free(src_copy);
	free(dst_buf);
	return sy_test_done("test_memcpy");
}
