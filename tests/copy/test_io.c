/* SPDX-License-Identifier: MIT */
/*
 * test_io.c - the library's device copy (libswitchyard, real accessors) on
 * ordinary memory: the data for every n in 0..300 and 4093, both
 * alignments 0..15, every maximum width and the plain calls; the bytes
 * around both buffers untouched; a range that ends at (or starts at) a
 * page with no access allowed does not fault (nothing outside is touched,
 * not even by a read); bad widths give -EINVAL and change nothing; n == 0
 * with NULL pointers does nothing. The access pattern itself is checked by
 * test_io_check.c, which logs every access of the same source. Compiled as
 * C++ too (test_io_cxx.cpp).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sy_test.h"

#define IO_GUARD 16
#define IO_BIG 4093

static unsigned char io_pat(unsigned int seed, size_t i)
{
	return (unsigned char)((i * 131u + seed * 7u + (i >> 8)) ^ (seed >> 3));
}

static void io_fill(unsigned char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = io_pat(seed, i);
}

static int io_same(const unsigned char *p, size_t len, unsigned int seed,
		   size_t from)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != io_pat(seed, from + i))
			return 0;
	return 1;
}

/* One copy; max 0 = the plain call. Returns 1 if everything is right. */
static int io_one(unsigned char *dbuf, unsigned char *mbuf, int toio,
		  size_t n, unsigned int da, unsigned int sa, unsigned int max,
		  unsigned int seed)
{
	unsigned char *dev = dbuf + IO_GUARD + da, *mem = mbuf + IO_GUARD + sa;
	unsigned char *src = toio ? mem : dev, *dst = toio ? dev : mem;
	size_t len = n + 2 * IO_GUARD;
	int ret = 0;

	io_fill(src - IO_GUARD, len, seed);
	io_fill(dst - IO_GUARD, len, seed + 1);
	if (toio && max)
		ret = switchyard_memcpy_toio_width(dev, mem, n, max);
	else if (toio)
		switchyard_memcpy_toio(dev, mem, n);
	else if (max)
		ret = switchyard_memcpy_fromio_width(mem, dev, n, max);
	else
		switchyard_memcpy_fromio(mem, dev, n);
	return ret == 0 &&
	       io_same(dst, n, seed, IO_GUARD) &&
	       io_same(dst - IO_GUARD, IO_GUARD, seed + 1, 0) &&
	       io_same(dst + n, IO_GUARD, seed + 1, IO_GUARD + n) &&
	       io_same(src - IO_GUARD, len, seed, 0);
}

static void io_data(void)
{
	static const unsigned int maxes[] = { 0, 1, 2, 4, 8 };
	size_t cap = (IO_BIG + 4 * IO_GUARD + 63) & ~(size_t)63;
	/* aligned_alloc: the size a multiple of the alignment (C11) */
	unsigned char *dbuf = (unsigned char *)aligned_alloc(64, cap);
	unsigned char *mbuf = (unsigned char *)aligned_alloc(64, cap);
	unsigned long wrong = 0, copies = 0;
	unsigned int seed = 0;

	if (!dbuf || !mbuf)
		SKIP("out of memory");
	for (size_t ni = 0; ni <= 301; ni++) {
		size_t n = ni <= 300 ? ni : IO_BIG;

		for (unsigned int da = 0; da < 16; da++)
			for (unsigned int sa = 0; sa < 16; sa++)
				for (unsigned int m = 0; m < 5; m++)
					for (int toio = 0; toio < 2; toio++) {
						copies++;
						if (!io_one(dbuf, mbuf, toio, n, da,
							    sa, maxes[m],
							    seed++ & 0xff) &&
						    wrong++ < 5)
							fprintf(stderr,
								"%s n=%zu dev+%u mem+%u max=%u: wrong\n",
								toio ? "toio" : "fromio",
								n, da, sa, maxes[m]);
					}
	}
	CHECK_EQ(copies, 302ul * 16 * 16 * 5 * 2);
	CHECK_EQ(wrong, 0);
	free(dbuf);
	free(mbuf);
}

/*
 * The "device" is the middle page of three, the outer two inaccessible:
 * a copy of up to 64 bytes ending at the page's end, or starting at its
 * start, faults if it touches a byte beyond its range (an overlapping or
 * over-long last access, a read ahead).
 */
static void io_edges(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *map = (unsigned char *)mmap(NULL, 3 * (size_t)pg,
						   PROT_NONE,
						   MAP_PRIVATE | MAP_ANONYMOUS,
						   -1, 0);
	unsigned char mem[64 + 16], back[64 + 16];
	unsigned long wrong = 0;

	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK_EQ(mprotect(map + pg, (size_t)pg, PROT_READ | PROT_WRITE), 0);
	for (size_t n = 0; n <= 64; n++)
		for (unsigned int max = 1; max <= 8; max *= 2)
			for (int at_end = 0; at_end < 2; at_end++) {
				unsigned char *dev = at_end ?
					map + 2 * pg - n : map + pg;

				io_fill(mem + 3, n, (unsigned int)n);
				CHECK_EQ(switchyard_memcpy_toio_width(
						 dev, mem + 3, n, max), 0);
				CHECK_EQ(switchyard_memcpy_fromio_width(
						 back + 5, dev, n, max), 0);
				if (!io_same(back + 5, n, (unsigned int)n, 0))
					wrong++;
				switchyard_memcpy_toio(dev, mem + 1, n);
				switchyard_memcpy_fromio(back, dev, n);
				if (memcmp(back, mem + 1, n))
					wrong++;
			}
	CHECK_EQ(wrong, 0);
	munmap(map, 3 * (size_t)pg);
}

static void io_errors(void)
{
	static const unsigned int bad[] = { 0, 3, 5, 6, 7, 9, 16, 64, ~0u };
	unsigned char dev[32], mem[32];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		io_fill(dev, 32, 1);
		io_fill(mem, 32, 2);
		CHECK_EQ(switchyard_memcpy_toio_width(dev, mem, 32, bad[i]),
			 -EINVAL);
		CHECK_EQ(switchyard_memcpy_fromio_width(mem, dev, 32, bad[i]),
			 -EINVAL);
		CHECK(io_same(dev, 32, 1, 0));
		CHECK(io_same(mem, 32, 2, 0));
	}
	/* n == 0: nothing is dereferenced. */
	switchyard_memcpy_toio(NULL, NULL, 0);
	switchyard_memcpy_fromio(NULL, NULL, 0);
	CHECK_EQ(switchyard_memcpy_toio_width(NULL, NULL, 0, 8), 0);
	CHECK_EQ(switchyard_memcpy_fromio_width(NULL, NULL, 0, 2), 0);
}

/* A register file as a driver declares it: volatile 32-bit words. */
static void io_regs(void)
{
	static volatile uint32_t regs[8];
	static const uint32_t in[8] = { 1, 2, 3, 0xdeadbeef, 5, 6, 7, 8 };
	uint32_t out[8] = { 0 };

	CHECK_EQ(switchyard_memcpy_toio_width(regs, in, sizeof(in), 4), 0);
	CHECK_EQ(regs[3], 0xdeadbeef);
	switchyard_memcpy_fromio(out, regs, sizeof(out));
	CHECK(memcmp(out, in, sizeof(in)) == 0);
}

int main(void)
{
	io_errors();
	io_regs();
	io_edges();
	io_data();
#ifdef __cplusplus
	return sy_test_done("test_io_cxx");
#else
	return sy_test_done("test_io");
#endif
}
