/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/memcpy_arch.c - the strategies of switchyard_memcpy() and
 * its dispatcher (<switchyard/memcpy.h>).
 *
 *   short moves   n <= 256: for each size class, loads of the first and
 *                 of the last bytes, which overlap in the middle, then
 *                 the stores (1..3: three single bytes; 4..7: two 4-byte
 *                 moves; 8..16: two 8-byte; 17..32: two 16-byte; 33..256:
 *                 1+1, 2+2 or 4+4 vectors of 32 bytes with AVX2, 2+2,
 *                 4+4 or 8+8 of 16 bytes without). No loop, no byte count
 *                 left over: one branch per class.
 *   vector loop   the first and the last vector loaded up front, the
 *                 destination then aligned to the vector and filled with
 *                 aligned stores four at a time, the two end vectors
 *                 stored last (they overlap the aligned part). Below two
 *                 vectors: the short moves. 16, 32 or 64 bytes (SSE2,
 *                 AVX2, AVX-512F): the flavour, see sy_arch_mc_loop().
 *   rep movsb     the CPU's own copy; fast with ERMS, and for short
 *                 sizes with FSRM.
 *
 * The dispatcher compares n with two run-time constants and tests the
 * flavour, a third; they are immediates in its code (no load), written
 * once at start-up by memcpy.c through sy_arch_mc_init(). None of this
 * is taken from glibc or the kernel: written from the description above.
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

#define LD32(p) _mm256_loadu_si256((const __m256i *)(p))
#define ST32(p, v) _mm256_storeu_si256((__m256i *)(p), (v))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* 0..32 bytes: general registers and one pair of 16-byte moves */
static inline __attribute__((always_inline)) void *
small_moves(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n > 16) {
		__m128i a = LD16(s), b = LD16(s + n - 16);

		ST16(d, a);
		ST16(d + n - 16, b);
	} else if (n >= 8) {
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

/*
 * 33..256 bytes: K vectors of V bytes from the start and K from the end,
 * every load before the first store. Not for correctness (the buffers do
 * not overlap) but for speed: a load issued after a store whose address
 * matches it in the low 12 bits waits for the store (4K aliasing), and
 * at some distances between source and destination one of the end loads
 * always would.
 */
#define MOVES_K(T, LD, ST, V, K)                                              \
	do {                                                                  \
		T v_[2 * (K)];                                                \
                                                                              \
		_Pragma("GCC unroll 8")                                       \
		for (int i_ = 0; i_ < (K); i_++) {                            \
			v_[i_] = LD(s + (V) * i_);                            \
			v_[(K) + i_] = LD(s + n - (V) * ((K) - i_));          \
		}                                                             \
		_Pragma("GCC unroll 8")                                       \
		for (int i_ = 0; i_ < (K); i_++) {                            \
			ST(d + (V) * i_, v_[i_]);                             \
			ST(d + n - (V) * ((K) - i_), v_[(K) + i_]);           \
		}                                                             \
	} while (0)

/* 33..256 with 16-byte vectors: 2+2 to 64, 4+4 to 128, 8+8 to 256 */
static inline __attribute__((always_inline)) void *
mid_sse2(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (n <= 64)
		MOVES_K(__m128i, LD16, ST16, 16, 2);
	else if (n <= 128)
		MOVES_K(__m128i, LD16, ST16, 16, 4);
	else
		MOVES_K(__m128i, LD16, ST16, 16, 8);
	return dst;
}

/* 0..256 with 32-byte vectors above 32 (inlined where AVX2 is allowed) */
static inline __attribute__((always_inline, target("avx2"))) void *
short_avx2(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (likely(n <= 32))
		return small_moves(dst, src, n);
	if (n <= 64)
		MOVES_K(__m256i, LD32, ST32, 32, 1);
	else if (n <= 128)
		MOVES_K(__m256i, LD32, ST32, 32, 2);
	else
		MOVES_K(__m256i, LD32, ST32, 32, 4);
	/* no _mm256_zeroupper() here: the compiler puts one before every
	 * return and tail call of a function that used the upper halves
	 * (gcc 12 and clang 14 do, as their output for this file shows), and a
	 * second one costs a cycle */
	return dst;
}

static inline __attribute__((always_inline)) void *
short_sse2(void *dst, const void *src, size_t n)
{
	if (likely(n <= 32))
		return small_moves(dst, src, n);
	return mid_sse2(dst, src, n);
}

/*
 * One vector loop per width. VEC bytes per vector; LOADU, STOREU, STOREA
 * (aligned); SHORT: the short moves for n below two vectors; END: what
 * the function must do before it returns. Not vzeroupper after 256- and
 * 512-bit registers (a dirty upper state slows the SSE code that
 * follows, Intel's optimisation manual, "mixing AVX and SSE"): the
 * compiler inserts it (see short_avx2()).
 */
#define VECTOR_LOOP(name, attr, VEC, T, LOADU, STOREU, STOREA, SHORT, END)    \
	static attr void *name(void *dst, const void *src, size_t n)          \
	{                                                                     \
		unsigned char *d = dst, *p, *end;                             \
		const unsigned char *s = src;                                 \
		T head, tail;                                                 \
		size_t skip;                                                  \
                                                                              \
		if (n < 2 * VEC)                                              \
			return SHORT(dst, src, n);                            \
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
VECTOR_LOOP(mc_sse2, __attribute__((noinline)), 16, __m128i, LD16, ST16,
	    ST16A, small_moves, (void)0)

#define ST32A(p, v) _mm256_store_si256((__m256i *)(p), (v))
VECTOR_LOOP(mc_avx2, __attribute__((noinline, target("avx2"))), 32, __m256i,
	    LD32, ST32, ST32A, short_avx2, (void)0)

#define LD64(p) _mm512_loadu_si512((const void *)(p))
#define ST64(p, v) _mm512_storeu_si512((void *)(p), (v))
#define ST64A(p, v) _mm512_store_si512((void *)(p), (v))
VECTOR_LOOP(mc_avx512, __attribute__((noinline, target("avx2,avx512f"))), 64,
	    __m512i, LD64, ST64, ST64A, short_avx2, (void)0)

/* out of line: the dispatcher keeps its registers (rdi) for the rest */
static __attribute__((noinline)) void *
mc_rep_movsb(void *dst, const void *src, size_t n)
{
	void *d = dst;

	__asm__ volatile("rep movsb"
			 : "+D"(d), "+S"(src), "+c"(n)
			 :
			 : "memory");
	return dst;
}

/*
 * The flavour: the vector width of the loop and of the short moves above
 * 32 bytes. The ONE place where it is chosen; alternative_call() will
 * take this choice over once it exists. Until then it is a run-time
 * constant (mc_flavour) that the dispatcher tests on entry.
 *
 * AVX-512 (64-byte loop, 32-byte short moves) only on the CPUs where it
 * was measured to be faster than AVX2: Intel family 6 model 207 (Xeon,
 * Emerald Rapids), doc/BENCHMARKS.md "[7/10] The copy routine": the
 * 64-byte loop took 40-50% less time than the 32-byte one from 136 to
 * 2,000 bytes. Not on older Xeons without a measurement: on Skylake-SP
 * 512-bit instructions lower the clock of the core for everything that
 * runs after them (why glibc avoids them there). AVX2 wherever the CPU
 * has it; SSE2 (every x86-64) otherwise.
 */
enum switchyard_memcpy_strategy sy_arch_mc_loop(void)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();

	if (boot_cpu_has(X86_FEATURE_AVX512F) &&
	    boot_cpu_has(X86_FEATURE_AVX2) &&
	    !strcmp(cpu->vendor, "GenuineIntel") && cpu->family == 6 &&
	    cpu->model == 207)
		return SWITCHYARD_MEMCPY_AVX512;
	if (boot_cpu_has(X86_FEATURE_AVX2))
		return SWITCHYARD_MEMCPY_AVX2;
	return SWITCHYARD_MEMCPY_SSE2;
}

/*
 * The dispatcher, twice: for SSE2 only, and with AVX2 (the exported
 * function: this CPU's fast path is its straight line). n above 4 GiB
 * compares with the 32-bit rep_min as the size it is: it takes rep movsb
 * (correct on any x86-64) even when rep_min is UINT32_MAX.
 */
static __attribute__((noinline)) void *
dispatch_sse2(void *dst, const void *src, size_t n)
{
	if (likely(n <= runtime_const_u32(mc_short_max)))
		return short_sse2(dst, src, n);
	if (n >= runtime_const_u32(mc_rep_min))
		return mc_rep_movsb(dst, src, n);
	return mc_sse2(dst, src, n);
}

/*
 * Compiled for AVX2, and entered on every x86-64: the flavour test comes
 * first and leaves for dispatch_sse2() where AVX2 is not allowed, before
 * any other instruction (the asm keeps the compiler from hoisting loads,
 * the only vector instructions it could move, above the test). The test
 * is an alternative: compiled as a jump to the SSE2 dispatcher (right on
 * every x86-64, so also where the site could not be patched), made a NOP5
 * at registration where AVX2 is present and not masked (sy_arch_mc_loop()
 * picks SSE2 exactly when it is not). The common path pays one NOP for it
 * instead of a run-time constant's guard, move, compare and branch, and no
 * call (static_cpu_has()'s unpatched path calls boot_cpu_has(), which made
 * gcc save registers and align the stack on every entry). The AVX-512
 * choice, made by model, stays a run-time constant, on the loop's path.
 */
__attribute__((target("avx2"))) void *
switchyard_memcpy(void *dst, const void *src, size_t n)
{
	__asm__ goto(SY__ALT_1(".byte 0xe9\n\t.long %l[sse2] - . - 4", "",
			       "%c[f]")
		     : : [f] "i"(X86_FEATURE_AVX2) : : sse2);
	__asm__ volatile("" ::: "memory");
	if (likely(n <= runtime_const_u32(mc_short_max)))
		return short_avx2(dst, src, n);
	if (n >= runtime_const_u32(mc_rep_min))
		return mc_rep_movsb(dst, src, n);
	if (runtime_const_u32(mc_flavour) == SWITCHYARD_MEMCPY_AVX512)
		return mc_avx512(dst, src, n);
	return mc_avx2(dst, src, n);
sse2:
	return dispatch_sse2(dst, src, n);
}

/* the strategies alone: short moves up to their limit, the loop beyond */
static __attribute__((target("avx2"))) void *
mc_short_avx2(void *dst, const void *src, size_t n)
{
	if (n <= SWITCHYARD_MEMCPY_SHORT_LIMIT)
		return short_avx2(dst, src, n);
	return mc_avx2(dst, src, n);
}

static void *mc_short_sse2(void *dst, const void *src, size_t n)
{
	if (n <= SWITCHYARD_MEMCPY_SHORT_LIMIT)
		return short_sse2(dst, src, n);
	return mc_sse2(dst, src, n);
}

switchyard_memcpy_fn sy_arch_mc_fn(enum switchyard_memcpy_strategy which)
{
	switch (which) {
	case SWITCHYARD_MEMCPY_SHORT:
		return sy_mc_config()->loop == SWITCHYARD_MEMCPY_SSE2 ?
			       mc_short_sse2 : mc_short_avx2;
	case SWITCHYARD_MEMCPY_LOOP:
		return sy_arch_mc_fn(sy_mc_config()->loop);
	case SWITCHYARD_MEMCPY_SSE2:
		return mc_sse2;
	case SWITCHYARD_MEMCPY_AVX2:
		return boot_cpu_has(X86_FEATURE_AVX2) ? mc_avx2 : NULL;
	case SWITCHYARD_MEMCPY_AVX512:
		return boot_cpu_has(X86_FEATURE_AVX512F) &&
		       boot_cpu_has(X86_FEATURE_AVX2) ? mc_avx512 : NULL;
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
	if (!r) {
		/* one init for the three: two syncs, not six, at every
		 * process's start-up */
		static const void *const syms[] = {
			&mc_flavour, &mc_short_max, &mc_rep_min,
		};
		static const size_t sizes[] = { 4, 4, 4 };

		r = sy_runtime_const_init_n(syms, sizes, 3);
	}
	return r ? r : 1;
#else
	(void)r;
	return 0;
#endif
}
