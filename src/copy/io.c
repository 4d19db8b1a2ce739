/* SPDX-License-Identifier: MIT */
/*
 * io.c - copies to and from device-like memory (<switchyard/io.h>).
 *
 * The rule (the header's): at device address a with r bytes left and a
 * maximum width W, access w bytes, w the largest power of two with w <= W,
 * w <= r and a % w == 0. Written as three loops: a head of narrower
 * accesses until a is W-aligned (at most three: 1, 2, 4), a body of
 * W-byte accesses, a tail of narrower ones for the last r < W bytes (at
 * most three: 4, 2, 1). Head and tail take the rule's width step by step;
 * the body needs no test. The result is the fewest naturally aligned
 * accesses covering the range, each byte once
 * (tests/copy/test_io_check.c checks both against a log of every access).
 *
 * The device is touched only through sy__io_read8/16/32/64() and
 * sy__io_write8/16/32/64() below: single volatile accesses of the exact
 * width. A volatile access is an observable side effect of the abstract
 * machine, so the compiler may neither drop, repeat, reorder (against
 * other volatile accesses), merge nor split it; GCC and clang emit one
 * load or store instruction for an aligned volatile access of a native
 * scalar. Checked with objdump -d of this file (x86-64, gcc 12 and
 * clang 14, -O2 and -O3): the device side of each copy is a plain
 * mov of the width (movzbl/movzwl/movl/movq loads, stores from %al, %ax,
 * %eax, %rax), one per access; gcc's bodies are loops of one mov of the
 * width per iteration, clang's are unrolled four times into four movs of
 * the width (never merged into a wider one, never vectorised: no xmm/ymm),
 * no "rep movs", no call to memcpy. tests/copy/check_io_asm.sh keeps checking
 * what can be checked mechanically: no undefined symbol (memcpy), no
 * string instruction, no vector register, in this object at -O2 and -O3
 * with gcc and clang.
 *
 * The normal-memory side goes through memcpy() of the width into a local:
 * an unaligned load or store of one instruction on x86-64, byte loads on
 * a target without unaligned access. Nothing here holds state: thread-safe
 * and async-signal-safe.
 *
 * tests/copy/test_io_check.c compiles this file again with SY__IO_ACCESSORS
 * defined and its own logging accessors, and with SY__IO_BROKEN (1: the
 * tail ends with an overlapping 8-byte access, as memcpy() does; 2: bytes
 * only, the kernel's old memcpy_toio()) to show that its checks catch both.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <switchyard/io.h>

#ifndef SY__IO_ACCESSORS
static inline void sy__io_write8(volatile void *p, uint8_t v)
{
	*(volatile uint8_t *)p = v;
}

static inline void sy__io_write16(volatile void *p, uint16_t v)
{
	*(volatile uint16_t *)p = v;
}

static inline void sy__io_write32(volatile void *p, uint32_t v)
{
	*(volatile uint32_t *)p = v;
}

static inline void sy__io_write64(volatile void *p, uint64_t v)
{
	*(volatile uint64_t *)p = v;
}

static inline uint8_t sy__io_read8(const volatile void *p)
{
	return *(const volatile uint8_t *)p;
}

static inline uint16_t sy__io_read16(const volatile void *p)
{
	return *(const volatile uint16_t *)p;
}

static inline uint32_t sy__io_read32(const volatile void *p)
{
	return *(const volatile uint32_t *)p;
}

static inline uint64_t sy__io_read64(const volatile void *p)
{
	return *(const volatile uint64_t *)p;
}
#endif /* SY__IO_ACCESSORS */

/*
 * An 8-byte volatile access is one instruction only where the registers
 * are 64 bits wide; elsewhere the compiler would split it in two, which is
 * exactly what must not happen: cap the width at 4 there.
 */
#if UINTPTR_MAX > 0xffffffffu
#define SY__IO_WIDEST 8u
#else
#define SY__IO_WIDEST 4u
#endif

/* The rule. left >= 1, max a power of two. */
static inline unsigned int sy__io_width(uintptr_t a, size_t left,
					unsigned int max)
{
	unsigned int w = max;

	while (w > left || (a & (w - 1)))
		w >>= 1;
	return w;
}

static inline void sy__io_put(uintptr_t d, const unsigned char *s,
			      unsigned int w)
{
	volatile void *p = (volatile void *)d;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (w) {
	case 8:
		memcpy(&v64, s, 8);
		sy__io_write64(p, v64);
		break;
	case 4:
		memcpy(&v32, s, 4);
		sy__io_write32(p, v32);
		break;
	case 2:
		memcpy(&v16, s, 2);
		sy__io_write16(p, v16);
		break;
	default:
		sy__io_write8(p, *s);
		break;
	}
}

static inline void sy__io_get(unsigned char *d, uintptr_t s, unsigned int w)
{
	const volatile void *p = (const volatile void *)s;
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	switch (w) {
	case 8:
		v64 = sy__io_read64(p);
		memcpy(d, &v64, 8);
		break;
	case 4:
		v32 = sy__io_read32(p);
		memcpy(d, &v32, 4);
		break;
	case 2:
		v16 = sy__io_read16(p);
		memcpy(d, &v16, 2);
		break;
	default:
		*d = sy__io_read8(p);
		break;
	}
}

static void sy__io_to(uintptr_t d, const unsigned char *s, size_t n,
		      unsigned int max)
{
	unsigned int w;
#if defined(SY__IO_BROKEN) && SY__IO_BROKEN == 1
	size_t total = n;
#elif defined(SY__IO_BROKEN) && SY__IO_BROKEN == 2
	max = 1;
#endif

	/* Head: narrower accesses until d is max-aligned. */
	while (n && (d & (max - 1))) {
		w = sy__io_width(d, n, max);
		sy__io_put(d, s, w);
		d += w, s += w, n -= w;
	}
	/* Body: max-byte accesses, d aligned. One loop per width, no test. */
	switch (max) {
	case 8:
		for (; n >= 8; d += 8, s += 8, n -= 8)
			sy__io_put(d, s, 8);
		break;
	case 4:
		for (; n >= 4; d += 4, s += 4, n -= 4)
			sy__io_put(d, s, 4);
		break;
	case 2:
		for (; n >= 2; d += 2, s += 2, n -= 2)
			sy__io_put(d, s, 2);
		break;
	default:
		for (; n; d++, s++, n--)
			sy__io_put(d, s, 1);
		break;
	}
#if defined(SY__IO_BROKEN) && SY__IO_BROKEN == 1
	/* What memcpy() does: the last 8 bytes again, overlapping. */
	if (n && max == 8 && total >= 8) {
		uint64_t v;

		memcpy(&v, s + n - 8, 8);
		sy__io_write64((volatile void *)(d + n - 8), v);
		n = 0;
	}
#endif
	/* Tail: fewer than max bytes left, d max-aligned: 4, 2, 1 at most. */
	while (n) {
		w = sy__io_width(d, n, max);
		sy__io_put(d, s, w);
		d += w, s += w, n -= w;
	}
}

static void sy__io_from(unsigned char *d, uintptr_t s, size_t n,
			unsigned int max)
{
	unsigned int w;
#if defined(SY__IO_BROKEN) && SY__IO_BROKEN == 1
	size_t total = n;
#elif defined(SY__IO_BROKEN) && SY__IO_BROKEN == 2
	max = 1;
#endif

	while (n && (s & (max - 1))) {
		w = sy__io_width(s, n, max);
		sy__io_get(d, s, w);
		d += w, s += w, n -= w;
	}
	switch (max) {
	case 8:
		for (; n >= 8; d += 8, s += 8, n -= 8)
			sy__io_get(d, s, 8);
		break;
	case 4:
		for (; n >= 4; d += 4, s += 4, n -= 4)
			sy__io_get(d, s, 4);
		break;
	case 2:
		for (; n >= 2; d += 2, s += 2, n -= 2)
			sy__io_get(d, s, 2);
		break;
	default:
		for (; n; d++, s++, n--)
			sy__io_get(d, s, 1);
		break;
	}
#if defined(SY__IO_BROKEN) && SY__IO_BROKEN == 1
	if (n && max == 8 && total >= 8) {
		uint64_t v = sy__io_read64((const volatile void *)(s + n - 8));

		memcpy(d + n - 8, &v, 8);
		n = 0;
	}
#endif
	while (n) {
		w = sy__io_width(s, n, max);
		sy__io_get(d, s, w);
		d += w, s += w, n -= w;
	}
}

static int sy__io_width_ok(unsigned int max_width)
{
	return max_width == 1 || max_width == 2 || max_width == 4 ||
	       max_width == 8;
}

static unsigned int sy__io_cap(unsigned int max_width)
{
	return max_width > SY__IO_WIDEST ? SY__IO_WIDEST : max_width;
}

SWITCHYARD_API void switchyard_memcpy_toio(volatile void *dst,
					   const void *src, size_t n)
{
	sy__io_to((uintptr_t)dst, src, n, SY__IO_WIDEST);
}

SWITCHYARD_API void switchyard_memcpy_fromio(void *dst,
					     const volatile void *src,
					     size_t n)
{
	sy__io_from(dst, (uintptr_t)src, n, SY__IO_WIDEST);
}

SWITCHYARD_API int switchyard_memcpy_toio_width(volatile void *dst,
						const void *src, size_t n,
						unsigned int max_width)
{
	if (!sy__io_width_ok(max_width))
		return -EINVAL;
	sy__io_to((uintptr_t)dst, src, n, sy__io_cap(max_width));
	return 0;
}

SWITCHYARD_API int switchyard_memcpy_fromio_width(void *dst,
						  const volatile void *src,
						  size_t n,
						  unsigned int max_width)
{
	if (!sy__io_width_ok(max_width))
		return -EINVAL;
	sy__io_from(dst, (uintptr_t)src, n, sy__io_cap(max_width));
	return 0;
}
