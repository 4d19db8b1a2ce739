/* SPDX-License-Identifier: MIT */
/*
 * test_io_check.c - the device copy (src/copy/io.c) against a log of every
 * device access it makes.
 *
 * src/copy/io.c is compiled again here, its device accessors replaced by ones
 * that record (address, width, read or write) and then do the access on
 * a plain buffer standing in for the device. For every n in 0..512 and
 * 1000, 4093, 4096, 65543, device alignment 0..15, normal-memory alignment
 * 0..15, maximum width 1, 2, 4, 8, both directions, the log must show:
 *  - every device byte of [dev, dev + n) touched exactly once, none outside
 *    (a byte counted per access that covers it: 0 is a miss, 2 a double);
 *  - toio only writes, fromio only reads;
 *  - each access naturally aligned (address % width == 0), 1, 2, 4 or 8
 *    bytes, at most the maximum width;
 *  - each access exactly as wide as the rule says: at address a with r
 *    bytes of the range left, the largest power of two w <= max width,
 *    w <= r, a % w == 0;
 *  - addresses strictly ascending;
 *  - as many accesses as the fewest naturally aligned accesses of allowed
 *    widths that tile the range exactly, computed independently of the
 *    rule (shortest path over byte positions): so the rule is minimal;
 *  - the data copied, the bytes around both buffers unchanged, the source
 *    unchanged.
 * Invalid widths return -EINVAL and log no access.
 *
 * Built three times: as is (every failure count must be 0), and with
 * SY__IO_BROKEN=1 (the tail ends with an overlapping 8-byte access, as a
 * memcpy() does) and SY__IO_BROKEN=2 (byte accesses only, the kernel's old
 * memcpy_toio()): those builds pass only if the checks above catch the
 * fault - double touches and misalignment for the first, widths and count
 * for the second - while the data comes out right in both (so that a test
 * of the data alone would not have seen either).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sy_check.h"

/* ---- the logging device ------------------------------------------------- */

struct io_access {
	uintptr_t addr;
	unsigned char width;
	unsigned char write;
};

static struct io_access *io_log;
static size_t io_log_n, io_log_cap;
static int io_log_overflow;

static void io_record(const volatile void *p, unsigned int width, int write)
{
	if (io_log_n == io_log_cap) {
		io_log_overflow = 1;
		return;
	}
	io_log[io_log_n].addr = (uintptr_t)p;
	io_log[io_log_n].width = (unsigned char)width;
	io_log[io_log_n].write = (unsigned char)write;
	io_log_n++;
}

/* The buffer behind the "device" is ordinary memory: memcpy() is fine. */
#define IO_LOG_ACCESSORS(bits)                                                 \
	static inline void sy__io_write##bits(volatile void *p,                \
					      uint##bits##_t v)                \
	{                                                                      \
		io_record(p, (bits) / 8, 1);                                   \
		memcpy((void *)(uintptr_t)p, &v, sizeof(v));                   \
	}                                                                      \
	static inline uint##bits##_t sy__io_read##bits(const volatile void *p) \
	{                                                                      \
		uint##bits##_t v;                                              \
									       \
		io_record(p, (bits) / 8, 0);                                   \
		memcpy(&v, (const void *)(uintptr_t)p, sizeof(v));             \
		return v;                                                      \
	}

IO_LOG_ACCESSORS(8)
IO_LOG_ACCESSORS(16)
IO_LOG_ACCESSORS(32)
IO_LOG_ACCESSORS(64)

#define SY__IO_ACCESSORS 1
/* Not the library's: this build's own names, so that nothing clashes. */
#define switchyard_memcpy_toio chk_memcpy_toio
#define switchyard_memcpy_fromio chk_memcpy_fromio
#define switchyard_memcpy_toio_width chk_memcpy_toio_width
#define switchyard_memcpy_fromio_width chk_memcpy_fromio_width
#include "../../src/copy/io.c"

/* ---- the checks --------------------------------------------------------- */

enum {
	F_OUTSIDE,	/* an access reaches outside [dev, dev + n) */
	F_TWICE,	/* a byte accessed more than once */
	F_MISSED,	/* a byte not accessed */
	F_KIND,		/* a read in toio, a write in fromio */
	F_ALIGN,	/* address % width != 0 */
	F_WIDTH,	/* width not 1/2/4/8, or above the maximum */
	F_RULE,		/* not the width the rule gives */
	F_ORDER,	/* address not above the previous one */
	F_COUNT,	/* not the count of the fewest exact tiling */
	F_DATA,		/* wrong bytes copied */
	F_AROUND,	/* bytes around either buffer, or the source, changed */
	F_RET,		/* return value */
	F_LOG,		/* the log overflowed: the case is not checked */
	F_NCLASSES
};

static const char *const f_name[F_NCLASSES] = {
	"outside the range", "byte accessed twice", "byte missed",
	"wrong direction", "misaligned", "bad width", "not the rule's width",
	"not ascending", "not the fewest exact tiling", "wrong data",
	"bytes around changed", "return value", "log overflow",
};

static unsigned long fails[F_NCLASSES];
static unsigned long cases;

#define GUARD 32

/*
 * Under a sanitizer every logged access goes through its run-time: the
 * full product (a million copies, 2 s) takes minutes under TSan. There
 * (scripts/sanitize.sh), and under an emulator (qemu-user: a minute), the
 * normal-memory alignment, which the device rule does not depend on,
 * steps by 5 (0, 5, 10, 15); every device alignment, size and width is
 * still checked.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SALIGN_STEP 5
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SALIGN_STEP 5
#endif
#endif
#ifndef SALIGN_STEP
#define SALIGN_STEP 1
#endif
#define NMAX (65536 + 7)

static const size_t big_sizes[] = { 1000, 4093, 4096, NMAX };

static unsigned char *dev_buf, *mem_buf, *counts;
static unsigned int *fewest;	/* fewest[p]: the minimum for p bytes */

struct io_case {
	int toio;
	size_t n;
	unsigned int dalign, salign, max;
};

static void fail(int cls, const struct io_case *c, const char *fmt,
		 unsigned long a, unsigned long b)
{
	if (fails[cls]++ < 3) {
		fprintf(stderr, "%s n=%zu dev+%u mem+%u max=%u: %s: ",
			c->toio ? "toio" : "fromio", c->n, c->dalign,
			c->salign, c->max, f_name[cls]);
		fprintf(stderr, fmt, a, b);
		fprintf(stderr, "\n");
	}
}

/* The rule, written apart from src/copy/io.c's. */
static unsigned int rule_width(uintptr_t a, size_t r, unsigned int max)
{
	static const unsigned int w[] = { 8, 4, 2 };

	for (unsigned int i = 0; i < 3; i++)
		if (w[i] <= max && w[i] <= r && a % w[i] == 0)
			return w[i];
	return 1;
}

/*
 * The fewest accesses of widths 1, 2, 4, 8 (up to max), each naturally
 * aligned, that cover [base, base + p) exactly, for every p <= NMAX: a
 * shortest path over positions, which knows nothing of the rule.
 */
static void compute_fewest(uintptr_t base, unsigned int max)
{
	fewest[0] = 0;
	for (size_t p = 1; p <= NMAX; p++) {
		unsigned int best = ~0u;

		for (unsigned int w = 1; w <= max && w <= p; w *= 2)
			if ((base + p - w) % w == 0 &&
			    fewest[p - w] + 1 < best)
				best = fewest[p - w] + 1;
		fewest[p] = best;
	}
}

/*
 * The bytes of case seed at index i: a random table read from an offset
 * that the seed picks, so that each buffer's content differs from the
 * previous case's and from the other buffer's nearly everywhere, and the
 * fills and compares are memcpy()/memcmp() (the test runs a million
 * cases).
 */
#define PAT_SHIFTS 251
static unsigned char *pat_table;

static void pattern_init(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < NMAX + 2 * GUARD + PAT_SHIFTS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pat_table[i] = (unsigned char)(x >> 32);
	}
}

static const unsigned char *pattern(unsigned long seed)
{
	return pat_table + seed % PAT_SHIFTS;
}

static void fill(unsigned char *p, size_t len, unsigned long seed)
{
	memcpy(p, pattern(seed), len);
}

static size_t differs(const unsigned char *p, size_t len, unsigned long seed)
{
	const unsigned char *q = pattern(seed);

	if (!memcmp(p, q, len))
		return 0;
	for (size_t i = 0; i < len; i++)
		if (p[i] != q[i])
			return i + 1;
	return 0;
}

static void check_log(const struct io_case *c, uintptr_t dev)
{
	uintptr_t end = dev + c->n;
	int outside = 0;

	if (io_log_overflow) {
		fail(F_LOG, c, "%lu entries%.0lu", io_log_n, 0);
		return;
	}
	memset(counts, 0, c->n);
	for (size_t k = 0; k < io_log_n; k++) {
		const struct io_access *e = &io_log[k];
		unsigned int w = e->width;

		if (e->write != (c->toio ? 1 : 0))
			fail(F_KIND, c, "access %lu at +%lu", k, e->addr - dev);
		if (w != 1 && w != 2 && w != 4 && w != 8)
			fail(F_WIDTH, c, "access %lu: %lu bytes", k, w);
		else if (w > c->max)
			fail(F_WIDTH, c, "access %lu: %lu bytes", k, w);
		if (e->addr % w)
			fail(F_ALIGN, c, "%lu bytes at +%lu", w, e->addr - dev);
		if (k && e->addr <= io_log[k - 1].addr)
			fail(F_ORDER, c, "access %lu at +%lu", k,
			     e->addr - dev);
		if (e->addr < dev || e->addr + w > end) {
			outside = 1;
			fail(F_OUTSIDE, c, "%lu bytes at %+ld", w,
			     (unsigned long)(e->addr - dev));
			continue;
		}
		if (w != rule_width(e->addr, end - e->addr, c->max))
			fail(F_RULE, c, "%lu bytes at +%lu", w, e->addr - dev);
		for (unsigned int i = 0; i < w; i++)
			counts[e->addr - dev + i]++;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (counts[i] == 0)
			fail(F_MISSED, c, "byte +%lu%.0lu", i, 0);
		else if (counts[i] > 1)
			fail(F_TWICE, c, "byte +%lu: %lu times", i, counts[i]);
	}
	/* With an access outside, the count says nothing more. */
	if (!outside && io_log_n != fewest[c->n])
		fail(F_COUNT, c, "%lu accesses, fewest %lu", io_log_n,
		     fewest[c->n]);
}

static void run_case(const struct io_case *c)
{
	unsigned char *dev = dev_buf + GUARD + c->dalign;
	unsigned char *mem = mem_buf + GUARD + c->salign;
	size_t len = c->n + 2 * GUARD;
	unsigned long s_src = cases * 2, s_dst = cases * 2 + 1;
	unsigned char *src = c->toio ? mem : dev;
	unsigned char *dst = c->toio ? dev : mem;
	size_t bad;
	int ret = 0;

	cases++;
	/* The source with its bytes around, the destination likewise. */
	fill(src - GUARD, len, s_src);
	fill(dst - GUARD, len, s_dst);
	io_log_n = 0;
	io_log_overflow = 0;
	/* max 8: the plain call and the _width one, alternately. */
	if (c->toio) {
		if (c->max == 8 && (c->salign & 1))
			chk_memcpy_toio(dev, mem, c->n);
		else
			ret = chk_memcpy_toio_width(dev, mem, c->n, c->max);
	} else {
		if (c->max == 8 && (c->salign & 1))
			chk_memcpy_fromio(mem, dev, c->n);
		else
			ret = chk_memcpy_fromio_width(mem, dev, c->n, c->max);
	}
	if (ret != 0)
		fail(F_RET, c, "%ld%.0lu", (unsigned long)ret, 0);
	check_log(c, (uintptr_t)dev);

	/* dst[i] must be what src[i] was: pattern(s_src)[GUARD + i]. */
	if (memcmp(dst, pattern(s_src) + GUARD, c->n))
		fail(F_DATA, c, "%lu bytes%.0lu", c->n, 0);
	if ((bad = differs(src - GUARD, len, s_src)))
		fail(F_AROUND, c, "source byte %ld%.0lu",
		     (unsigned long)(bad - 1 - GUARD), 0);
	if ((bad = differs(dst - GUARD, GUARD, s_dst)))
		fail(F_AROUND, c, "destination byte %ld%.0lu",
		     (unsigned long)(bad - 1 - GUARD), 0);
	if (memcmp(dst + c->n, pattern(s_dst) + GUARD + c->n, GUARD))
		fail(F_AROUND, c, "destination bytes after n=%lu%.0lu", c->n,
		     0);
}

/* Widths that are not 1, 2, 4, 8: -EINVAL, no access, nothing written. */
static void check_bad_widths(void)
{
	static const unsigned int bad[] = { 0, 3, 5, 6, 7, 9, 16, 32, ~0u };
	unsigned char *dev = dev_buf + GUARD, *mem = mem_buf + GUARD;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fill(dev, 64, 1);
		fill(mem, 64, 2);
		io_log_n = 0;
		CHECK_EQ(chk_memcpy_toio_width(dev, mem, 64, bad[i]), -EINVAL);
		CHECK_EQ(chk_memcpy_fromio_width(mem, dev, 64, bad[i]),
			 -EINVAL);
		CHECK_EQ(chk_memcpy_toio_width(dev, mem, 0, bad[i]), -EINVAL);
		CHECK_EQ(io_log_n, 0);
		CHECK_EQ(differs(dev, 64, 1), 0);
		CHECK_EQ(differs(mem, 64, 2), 0);
	}
	/* n == 0: no access; the pointers are not used (NULL is fine). */
	io_log_n = 0;
	chk_memcpy_toio(NULL, NULL, 0);
	chk_memcpy_fromio(NULL, NULL, 0);
	CHECK_EQ(chk_memcpy_toio_width(NULL, NULL, 0, 4), 0);
	CHECK_EQ(chk_memcpy_fromio_width(NULL, NULL, 0, 1), 0);
	CHECK_EQ(io_log_n, 0);
}

int main(void)
{
	static const unsigned int maxes[] = { 1, 2, 4, 8 };
	unsigned int salign_step = sy_test_emulated() ? 5 : SALIGN_STEP;

	/* the size a multiple of the alignment (C11's aligned_alloc) */
	dev_buf = aligned_alloc(64, (NMAX + 4 * GUARD + 63) & ~(size_t)63);
	mem_buf = aligned_alloc(64, (NMAX + 4 * GUARD + 63) & ~(size_t)63);
	counts = malloc(NMAX);
	fewest = malloc((NMAX + 1) * sizeof(*fewest));
	io_log_cap = NMAX + 16;
	io_log = malloc(io_log_cap * sizeof(*io_log));
	pat_table = malloc(NMAX + 2 * GUARD + PAT_SHIFTS);
	if (!dev_buf || !mem_buf || !counts || !fewest || !io_log ||
	    !pat_table)
		SKIP("out of memory");
	pattern_init();

	check_bad_widths();
	for (unsigned int m = 0; m < 4; m++) {
		for (unsigned int da = 0; da < 16; da++) {
			compute_fewest((uintptr_t)(dev_buf + GUARD + da),
				       maxes[m]);
			for (size_t ni = 0; ni < 513 + 4; ni++) {
				struct io_case c = {
					.n = ni < 513 ? ni : big_sizes[ni - 513],
					.dalign = da,
					.max = maxes[m],
				};

				for (c.salign = 0; c.salign < 16;
				     c.salign += salign_step)
					for (c.toio = 0; c.toio < 2; c.toio++)
						run_case(&c);
			}
		}
	}
	printf("%lu cases (normal-memory alignment step %u)\n", cases,
	       salign_step);
	CHECK_EQ(cases, 4 * 16 * 517 * (15 / salign_step + 1) * 2);

#ifndef SY__IO_BROKEN
	for (int i = 0; i < F_NCLASSES; i++) {
		if (fails[i])
			fprintf(stderr, "%s: %lu\n", f_name[i], fails[i]);
		CHECK_EQ(fails[i], 0);
	}
	return sy_test_done("test_io_check");
#else
	/* The broken copy must be caught, and by the right checks. */
	for (int i = 0; i < F_NCLASSES; i++)
		printf("  %s: %lu\n", f_name[i], fails[i]);
	CHECK_EQ(fails[F_DATA], 0);	/* the data alone looks right */
	CHECK_EQ(fails[F_OUTSIDE], 0);
	CHECK_EQ(fails[F_KIND], 0);
#if SY__IO_BROKEN == 1
	CHECK(fails[F_TWICE] > 0);
	CHECK(fails[F_ALIGN] > 0);
#else
	CHECK(fails[F_RULE] > 0);
	CHECK(fails[F_COUNT] > 0);
	CHECK_EQ(fails[F_TWICE], 0);
	CHECK_EQ(fails[F_ALIGN], 0);
#endif
	printf("the broken copy (SY__IO_BROKEN=%d) is caught\n",
	       SY__IO_BROKEN);
	return sy_test_done("test_io_check (negative control)");
#endif
}
