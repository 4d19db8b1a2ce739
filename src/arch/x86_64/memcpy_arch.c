/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/memcpy_arch.c - switchyard_memcpy()'s SSE2 flavour, its
 * strategies for benchmarks and the calibration, and its start-up
 * (<switchyard/memcpy.h>). The entry and the AVX2 and AVX-512 flavours
 * are assembly: memcpy_vec.c, which has the table of sizes.
 *
 * The SSE2 flavour (x86-64 CPUs without AVX2, and where the entry's
 * alternative could not be applied):
 *   short moves   n <= short_max (at most 256): for each size class, loads
 *                 of the first and of the last bytes, which overlap in the
 *                 middle, then the stores (1..3: three single bytes; 4..7:
 *                 two 4-byte moves; 8..16: two 8-byte; 17..32: two 16-byte;
 *                 33..256: 2+2, 4+4 or 8+8 vectors of 16 bytes). No loop,
 *                 one branch per class.
 *   vector loop   the first and the last vector loaded up front, the
 *                 destination then aligned to the vector and filled with
 *                 aligned stores four at a time, the two end vectors
 *                 stored last (they overlap the aligned part).
 *   rep movsb     n >= rep_min: the CPU's own copy; fast with ERMS.
 * The thresholds are run-time constants, immediates in the code (no
 * load), written once at start-up by memcpy.c through sy_arch_mc_init().
 * None of this is taken from glibc or the kernel: written from the
 * description above.
 */
#include <errno.h>
#include <immintrin.h>
#include <string.h>

#include "../../copy/memcpy_impl.h"

/* Before sy_arch_mc_init() the sites read these: safe on any x86-64.
 * sy__mc_rep_min is defined in memcpy_vec.c's assembly (UINT32_MAX),
 * whose sites read it too: a C definition would be a second global of
 * that name in each object that links the library statically, which
 * AddressSanitizer reports as an ODR violation when both are loaded. */
static uint32_t mc_short_max = 16;
extern SY_HIDDEN uint32_t sy__mc_rep_min, sy__mc_libc_min, sy__mc_big_min;
/* the C library's memcpy, as the dynamic linker resolved it (memcpy_vec.c) */
extern SY_HIDDEN switchyard_memcpy_fn const sy__mc_libc_fn;

/* memcpy_vec.c: the flavours' entries as strategies */
SY_HIDDEN void *sy__mc_avx2_loop(void *dst, const void *src, size_t n);
SY_HIDDEN void *sy__mc_avx512_loop(void *dst, const void *src, size_t n);
SY_HIDDEN void *sy__mc_dispatch_sse2(void *dst, const void *src, size_t n);
SY_HIDDEN void *sy__mc_entry(void *dst, const void *src, size_t n);

typedef uint64_t u64_una __attribute__((may_alias, aligned(1)));
typedef uint32_t u32_una __attribute__((may_alias, aligned(1)));

#define LD16(p) _mm_loadu_si128((const __m128i *)(p))
#define ST16(p, v) _mm_storeu_si128((__m128i *)(p), (v))

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
 * the function must do before it returns.
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
 * 32 bytes. The ONE place where it is chosen, and the same choice as the
 * entry's alternative (memcpy_vec.c), from the same features: AVX-512
 * where X86_FEATURE_AVX512_COPY says 512-bit copies were measured faster
 * (cpu_probe.c), AVX2 wherever the CPU has it, SSE2 (every x86-64)
 * otherwise.
 */
switchyard_memcpy_fn sy_arch_mc_entry(void)
{
	return sy__mc_entry;
}

/* As compiled the entry is a jump (e9) to the SSE2 dispatcher; the AVX2
 * and AVX-512 prologues begin with mov %rdi, %rax (48 89 f8), whose first
 * byte a debugger's breakpoint (cc) may hide. */
enum switchyard_memcpy_strategy
sy_arch_mc_running(enum switchyard_memcpy_strategy loop)
{
	const unsigned char *p = (const unsigned char *)sy__mc_entry;

	if (p[0] == 0x48 || (p[0] == 0xcc && p[1] == 0x89 && p[2] == 0xf8))
		return loop;
	return SWITCHYARD_MEMCPY_SSE2;
}

enum switchyard_memcpy_strategy sy_arch_mc_loop(void)
{
	if (boot_cpu_has(X86_FEATURE_AVX512_COPY))
		return SWITCHYARD_MEMCPY_AVX512;
	if (boot_cpu_has(X86_FEATURE_AVX2))
		return SWITCHYARD_MEMCPY_AVX2;
	return SWITCHYARD_MEMCPY_SSE2;
}

/*
 * The SSE2 flavour's dispatcher, entered by a jump from switchyard_memcpy
 * (memcpy_vec.c). n above 4 GiB compares with the 32-bit thresholds as the
 * size it is: it takes the C library's memcpy or rep movsb (both correct)
 * even when they are UINT32_MAX.
 */
void *sy__mc_dispatch_sse2(void *dst, const void *src, size_t n)
{
	if (likely(n <= runtime_const_u32(mc_short_max)))
		return short_sse2(dst, src, n);
	/* one compare on the common path, as the AVX flavours
	 * (memcpy_vec.c RC_ROUTE): big_min is the smaller of the two */
	if (n >= runtime_const_u32(sy__mc_big_min)) {
		if (n >= runtime_const_u32(sy__mc_libc_min))
			return sy__mc_libc_fn(dst, src, n);
		return mc_rep_movsb(dst, src, n);
	}
	return mc_sse2(dst, src, n);
}

/* the strategies alone: short moves up to their limit, the loop beyond */
static void *mc_short_sse2(void *dst, const void *src, size_t n)
{
	if (n <= SWITCHYARD_MEMCPY_SHORT_LIMIT)
		return short_sse2(dst, src, n);
	return mc_sse2(dst, src, n);
}

switchyard_memcpy_fn sy_arch_mc_fn(enum switchyard_memcpy_strategy which,
				   enum switchyard_memcpy_strategy loop)
{
	switch (which) {
	case SWITCHYARD_MEMCPY_SHORT:
		/* the AVX flavours' short moves and loop are one code up
		 * to 256 bytes (memcpy_vec.c) */
		return loop == SWITCHYARD_MEMCPY_SSE2 ? mc_short_sse2 :
							 sy_arch_mc_fn(loop, loop);
	case SWITCHYARD_MEMCPY_LOOP:
		return sy_arch_mc_fn(loop, loop);
	case SWITCHYARD_MEMCPY_SSE2:
		return mc_sse2;
	case SWITCHYARD_MEMCPY_AVX2:
		return boot_cpu_has(X86_FEATURE_AVX2) ? sy__mc_avx2_loop : NULL;
	case SWITCHYARD_MEMCPY_AVX512:
		return boot_cpu_has(X86_FEATURE_AVX512F) &&
		       boot_cpu_has(X86_FEATURE_AVX512VL) ? sy__mc_avx512_loop
							  : NULL;
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
	__atomic_store_n(&sy__mc_rep_min, c->rep_min, __ATOMIC_RELAXED);
	/* libc_min 0 (every size: switchyard_memcpy is the C library's
	 * memcpy itself, memcpy.c) still routes what reaches the dispatcher
	 * (a static link, a strategy called alone: from 129 bytes) */
	__atomic_store_n(&sy__mc_libc_min, c->libc_min, __ATOMIC_RELAXED);
	__atomic_store_n(&sy__mc_big_min,
			 c->libc_min < c->rep_min ? c->libc_min : c->rep_min,
			 __ATOMIC_RELAXED);
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
	r = sy__register_runtime_consts(__start_sy_runtime_const,
					__stop_sy_runtime_const);
	if (!r) {
		/* one init for the four: two syncs, not eight, at every
		 * process's start-up */
		static const void *const syms[] = {
			&mc_short_max, &sy__mc_rep_min, &sy__mc_libc_min,
			&sy__mc_big_min,
		};
		static const size_t sizes[] = { 4, 4, 4, 4 };

		r = sy_runtime_const_init_n(syms, sizes, 4);
	}
	return r ? r : 1;
#else
	(void)r;
	return 0;
#endif
}
