/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/memcpy_arch.c - the strategies of switchyard_memcpy() and
 * its dispatcher (<switchyard/memcpy.h>).
 *
 *   short moves   n <= 256: for each size class, a load and a store of the
 *                 first and of the last bytes, which overlap in the middle
 *                 (1..3: three single bytes; 4..7: two 4-byte moves;
 *                 8..16: two 8-byte; 17..32: two 16-byte; 33..64: two and
 *                 two; 65..128: four and four; 129..256: eight and eight).
 *                 No loop, no byte count left over: one branch per class.
 *                 SSE2 (every x86-64), so no vzeroupper is ever needed.
 *   vector loop   the first and the last vector loaded up front, the
 *                 destination then aligned to the vector and filled with
 *                 aligned stores four at a time, the two end vectors
 *                 stored last (they overlap the aligned part). Below two
 *                 vectors: the short moves.
 *   rep movsb     the CPU's own copy; fast with ERMS, and for short
 *                 sizes with FSRM.
 *
 * The dispatcher compares n with two run-time constants; the thresholds
 * are then immediates in its code (no load), written once at start-up by
 * memcpy.c through sy_arch_mc_init().
 */
#include <errno.h>
#include <immintrin.h>
#include <string.h>

#include "../../memcpy_impl.h"

/* Before sy_arch_mc_init() the sites read these: safe on any x86-64. */
static uint32_t mc_short_max = 16;
static uint32_t mc_rep_min = UINT32_MAX;
static uint32_t mc_flavour = SWITCHYARD_MEMCPY_SSE2;

typedef uint64_t u64_una __attribute__((may_alias, aligned(1)));
typedef uint32_t u32_una __attribute__((may_alias, aligned(1)));

#define LD16(p) _mm_loadu_si128((const __m128i *)(p))
#define ST16(p, v) _mm_storeu_si128((__m128i *)(p), (v))

/* 16-byte moves at offset o from the start, and from the end */
#define HEAD16(o) ST16(d + (o), LD16(s + (o)))
#define TAIL16(o) ST16(d + n - (o) - 16, LD16(s + n - (o) - 16))
/* written out: gcc keeps a loop over a constant count of 4 or 8 */
#define HT16_2 HEAD16(0); HEAD16(16); TAIL16(16); TAIL16(0)
#define HT16_4                                                                \
	HEAD16(0); HEAD16(16); HEAD16(32); HEAD16(48);                        \
	TAIL16(48); TAIL16(32); TAIL16(16); TAIL16(0)
#define HT16_8                                                                \
	HEAD16(0); HEAD16(16); HEAD16(32); HEAD16(48);                        \
	HEAD16(64); HEAD16(80); HEAD16(96); HEAD16(112);                      \
	TAIL16(112); TAIL16(96); TAIL16(80); TAIL16(64);                      \
	TAIL16(48); TAIL16(32); TAIL16(16); TAIL16(0)

static inline __attribute__((always_inline)) void *
short_moves(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n <= 16) {
		if (n >= 8) {
			uint64_t a = *(const u64_una *)s;
			uint64_t b = *(const u64_una *)(s + n - 8);

			*(u64_una *)d = a;
			*(u64_una *)(d + n - 8) = b;
		} else if (n >= 4) {
			uint32_t a = *(const u32_una *)s;
			uint32_t b = *(const u32_una *)(s + n - 4);

			*(u32_una *)d = a;
			*(u32_una *)(d + n - 4) = b;
		} else if (n) {
			/* 1, 2, 3: bytes 0, n/2 and n-1 cover them all */
			unsigned char a = s[0], b = s[n >> 1], c = s[n - 1];

			d[0] = a;
			d[n >> 1] = b;
			d[n - 1] = c;
		}
		return dst;
	}
	if (n <= 32) {
		__m128i a = LD16(s), b = LD16(s + n - 16);

		ST16(d, a);
		ST16(d + n - 16, b);
	} else if (n <= 64) {
		HT16_2;
	} else if (n <= 128) {
		HT16_4;
	} else {
		HT16_8;
	}
	return dst;
}

/* the strategy alone: short moves up to the limit, the loop beyond */
static void *mc_short(void *dst, const void *src, size_t n);

/*
 * One vector loop per width. VEC bytes per vector; LOADU, STOREU, STOREA
 * (aligned); END: what the function must do before it returns (vzeroupper
 * after 256- and 512-bit registers: a dirty upper state slows the SSE code
 * that follows, SDM vol. 1 14.x / optimisation manual "mixing AVX and
 * SSE").
 */
#define VECTOR_LOOP(name, attr, VEC, T, LOADU, STOREU, STOREA, END)           \
	static attr void *name(void *dst, const void *src, size_t n)          \
	{                                                                     \
		unsigned char *d = dst, *p, *end;                             \
		const unsigned char *s = src;                                 \
		T head, tail;                                                 \
		size_t skip;                                                  \
                                                                              \
		if (n < 2 * VEC)                                              \
			return short_moves(dst, src, n);                      \
		head = LOADU(s);                                              \
		tail = LOADU(s + n - VEC);                                    \
		/* the tail vector's place; aligned stores stop before it */  \
		end = d + n - VEC;                                            \
		skip = VEC - ((uintptr_t)d & (VEC - 1));                      \
		p = d + skip;                                                 \
		s += skip;                                                    \
		while ((size_t)(end - p) > 4 * VEC) {                         \
			T a = LOADU(s), b = LOADU(s + VEC);                   \
			T c = LOADU(s + 2 * VEC), e = LOADU(s + 3 * VEC);     \
                                                                              \
			STOREA(p, a);                                         \
			STOREA(p + VEC, b);                                   \
			STOREA(p + 2 * VEC, c);                               \
			STOREA(p + 3 * VEC, e);                               \
			p += 4 * VEC;                                         \
			s += 4 * VEC;                                         \
		}                                                             \
		while (p < end) {                                             \
			STOREA(p, LOADU(s));                                  \
			p += VEC;                                             \
			s += VEC;                                             \
		}                                                             \
		STOREU(d, head);                                              \
		STOREU(end, tail);                                            \
		END;                                                          \
		return dst;                                                   \
	}

#define ST16A(p, v) _mm_store_si128((__m128i *)(p), (v))
VECTOR_LOOP(mc_sse2, , 16, __m128i, LD16, ST16, ST16A, (void)0)

#define LD32(p) _mm256_loadu_si256((const __m256i *)(p))
#define ST32(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define ST32A(p, v) _mm256_store_si256((__m256i *)(p), (v))
VECTOR_LOOP(mc_avx2, __attribute__((target("avx2"))), 32, __m256i, LD32,
	    ST32, ST32A, _mm256_zeroupper())

#define LD64(p) _mm512_loadu_si512((const void *)(p))
#define ST64(p, v) _mm512_storeu_si512((void *)(p), (v))
#define ST64A(p, v) _mm512_store_si512((void *)(p), (v))
VECTOR_LOOP(mc_avx512, __attribute__((target("avx512f"))), 64, __m512i, LD64,
	    ST64, ST64A, _mm256_zeroupper())

static inline __attribute__((always_inline)) void *
rep_movsb(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep movsb"
			 : "+D"(d), "+S"(src), "+c"(n)
			 :
			 : "memory");
	return dst;
}

static void *mc_short(void *dst, const void *src, size_t n)
{
	if (n <= SWITCHYARD_MEMCPY_SHORT_LIMIT)
		return short_moves(dst, src, n);
	return mc_sse2(dst, src, n);
}

static void *mc_rep_movsb(void *dst, const void *src, size_t n)
{
	return rep_movsb(dst, src, n);
}

/*
 * The vector loop's flavour: the ONE place where it is chosen (the loop
 * that alternative_call() will pick once it exists; until then a
 * run-time constant that the dispatcher branches on, chosen here once).
 *
 * AVX2 where the CPU has it, AVX-512 included: on the Xeon measured
 * (Intel family 6 model 207, doc/BENCHMARKS.md "[7/10] The copy routine")
 * the 64-byte loop was not faster than the 32-byte one at any size up to
 * rep movsb's threshold, and 512-bit registers can lower the clock of
 * older Xeons (Skylake-SP) for everything that runs after.
 */
enum switchyard_memcpy_strategy sy_arch_mc_loop(void)
{
	return boot_cpu_has(X86_FEATURE_AVX2) ? SWITCHYARD_MEMCPY_AVX2
					      : SWITCHYARD_MEMCPY_SSE2;
}

static void *mc_loop(void *dst, const void *src, size_t n)
{
	uint32_t f = runtime_const_u32(mc_flavour);

	if (f == SWITCHYARD_MEMCPY_AVX2)
		return mc_avx2(dst, src, n);
	if (f == SWITCHYARD_MEMCPY_AVX512)
		return mc_avx512(dst, src, n);
	return mc_sse2(dst, src, n);
}

/*
 * The dispatcher. n above 4 GiB compares with the 32-bit rep_min as the
 * size it is: it takes rep movsb (correct on any x86-64) even when
 * rep_min is UINT32_MAX.
 */
void *switchyard_memcpy(void *dst, const void *src, size_t n)
{
	if (n <= runtime_const_u32(mc_short_max))
		return short_moves(dst, src, n);
	if (n >= runtime_const_u32(mc_rep_min))
		return rep_movsb(dst, src, n);
	return mc_loop(dst, src, n);
}

switchyard_memcpy_fn sy_arch_mc_fn(enum switchyard_memcpy_strategy which)
{
	switch (which) {
	case SWITCHYARD_MEMCPY_SHORT:
		return mc_short;
	case SWITCHYARD_MEMCPY_LOOP:
		return mc_loop;
	case SWITCHYARD_MEMCPY_SSE2:
		return mc_sse2;
	case SWITCHYARD_MEMCPY_AVX2:
		return boot_cpu_has(X86_FEATURE_AVX2) ? mc_avx2 : NULL;
	case SWITCHYARD_MEMCPY_AVX512:
		return boot_cpu_has(X86_FEATURE_AVX512F) ? mc_avx512 : NULL;
	case SWITCHYARD_MEMCPY_REP_MOVSB:
		return boot_cpu_has(X86_FEATURE_ERMS) ? mc_rep_movsb : NULL;
	default:
		return NULL;
	}
}

/*
 * The library is compiled with SY__NO_DSO_GLUE (it has no glue of its own:
 * it is where the glue calls), so its sy_runtime_const section is
 * registered here, before the first init. In a static link these bounds
 * are the program's, whose glue registers the same table again: the
 * registry takes a table once.
 */
extern struct sy_rc_entry __start_sy_runtime_const[] SY_HIDDEN;
extern struct sy_rc_entry __stop_sy_runtime_const[] SY_HIDDEN;

int sy_arch_mc_init(const struct sy_mc_config *c)
{
	int r;

	__atomic_store_n(&mc_short_max, c->short_max, __ATOMIC_RELAXED);
	__atomic_store_n(&mc_rep_min, c->rep_min, __ATOMIC_RELAXED);
	__atomic_store_n(&mc_flavour, (uint32_t)c->loop, __ATOMIC_RELAXED);
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
	r = sy__register_runtime_consts(__start_sy_runtime_const,
					__stop_sy_runtime_const);
	if (!r)
		r = runtime_const_init(u32, mc_flavour);
	if (!r)
		r = runtime_const_init(u32, mc_short_max);
	if (!r)
		r = runtime_const_init(u32, mc_rep_min);
	return r ? r : 1;
#else
	(void)r;
	return 0;
#endif
}
