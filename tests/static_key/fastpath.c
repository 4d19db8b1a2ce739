/* SPDX-License-Identifier: MIT */
/*
 * fastpath.c - functions identical but for a disabled site or a flag check,
 * each called CALLS times; run under callgrind by check_fastpath.sh, which
 * compares instructions per call.
 */
#include <switchyard.h>

#define CALLS 1000

DEFINE_STATIC_KEY_FALSE(fp_key);
volatile int fp_flag;
volatile int fp_sink;

__attribute__((noinline)) void fp_slow(int x) { fp_sink = x; }

__attribute__((noinline)) int fp_plain(int x)
{
	return x + 1;
}

#ifdef SY__ARCH_HAVE_JUMP_LABEL
/*
 * The control: fp_site with the site replaced by an asm goto of the same
 * shape and operands whose template is one NOP (x86-64: the 2-byte one;
 * AArch64: d503201f), never jumping. The compiler treats both alike
 * (registers, layout, a frame around the rare call or not: gcc
 * shrink-wraps it, clang 14 pushes and pops on every call), so fp_site -
 * fp_control is what the patched site costs over one instruction that
 * does nothing: it must be 0 instructions and 0 loads.
 */
DEFINE_STATIC_KEY_FALSE(fp_key2);
#if defined(__x86_64__)
#define FP_NOP_ASM(keyp, label)                                                \
	__asm__ goto(".byte 0x66, 0x90"                                        \
		     : : SY__KEY_OPERAND(keyp), "i"(0) : "cc" : label)
#elif defined(__aarch64__)
/* the site's operands ("S": a symbolic address), one NOP (d503201f) */
#define FP_NOP_ASM(keyp, label)                                                \
	__asm__ goto("nop" : : "S"(keyp), "i"(0) : : label)
#else
#error "fastpath.c: no one-NOP control for this architecture"
#endif
#define FP_NOP_BRANCH(keyp)                                                    \
	__extension__({                                                        \
		__label__ l_yes, l_out;                                        \
		int r;                                                         \
		FP_NOP_ASM(keyp, l_yes);                                       \
		r = 0;                                                         \
		goto l_out;                                                    \
	l_yes:                                                                 \
		r = 1;                                                         \
	l_out:                                                                 \
		r;                                                             \
	})

__attribute__((noinline)) int fp_control(int x)
{
	if (__builtin_expect(FP_NOP_BRANCH(&fp_key2.key), 0))
		fp_slow(x);
	return x + 1;
}
#endif

__attribute__((noinline)) int fp_site(int x)
{
	if (static_branch_unlikely(&fp_key))
		fp_slow(x);
	return x + 1;
}

__attribute__((noinline)) int fp_flagcheck(int x)
{
	if (__builtin_expect(fp_flag, 0))
		fp_slow(x);
	return x + 1;
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < CALLS; i++) {
		s += fp_plain(i);
#ifdef SY__ARCH_HAVE_JUMP_LABEL
		s += fp_control(i) - i - 1;
#endif
		s += fp_site(i);
		s += fp_flagcheck(i);
	}
	return s == 3 * (CALLS * (CALLS + 1) / 2) ? 0 : 1;
}
