/* SPDX-License-Identifier: MIT */
/*
 * switchyard/alternative.h - CPU-feature alternatives, with the kernel's
 * names (<asm/alternative.h>, <asm/cpufeature.h>): code chosen once, by the
 * features of the CPU (<switchyard/cpufeature.h>), when its object is
 * loaded: at start-up for the program and the libraries it links, in
 * dlopen() before it returns for a library opened later. Nothing is
 * chosen again afterwards (SWITCHYARD_CPU_MASK, read at start-up, is the
 * way to choose otherwise).
 *
 * In C, no assembly:
 *
 *   if (static_cpu_has(X86_FEATURE_AVX2))      // one NOP, or one jump
 *           sum_avx2(v, n);
 *   else
 *           sum_sse2(v, n);
 *
 *   n = switchyard_alternative_call(count_generic,
 *                                   X86_FEATURE_POPCNT, count_popcnt, v, n);
 *   switchyard_alternative_call_2(copy_loop, X86_FEATURE_REP_GOOD,
 *                                 copy_rep_movsq, X86_FEATURE_ERMS,
 *                                 copy_rep_movsb, dst, src, len);
 *
 * static_cpu_has(feature) (and cpu_feature_enabled(), the same here; and
 * alternative_has_cap_likely() / _unlikely(), the kernel's arm64 names,
 * with a branch hint) is a patched branch: a NOP (x86-64: 5 bytes;
 * AArch64: one instruction) where the feature is present, a jump to the
 * "absent" code where it is not. feature must be a constant. Its unpatched
 * form calls boot_cpu_has(): in a small leaf function that call can make
 * the compiler save registers on every entry (measured in
 * switchyard_memcpy, which uses an ALTERNATIVE jump to a safe default
 * instead). Any C code
 * can be chosen this way, with any prototype; the compiler sees both
 * branches and may inline either. switchyard_alternative_call(f, feature,
 * g, args...) calls g(args) when the feature is present, else f(args);
 * ..._call_2(f, f1, g1, f2, g2, args...) prefers g2 when f2 is present,
 * then g1 when f1 is (the kernel's ALTERNATIVE_2 order: the last one that
 * applies wins). Each is an expression of the functions' return type; the
 * arguments are evaluated once.
 *
 * In assembly, the kernel's forms:
 *
 *   asm(ALTERNATIVE("old instructions", "new instructions", X86_FEATURE_X));
 *   asm(ALTERNATIVE_2("old", "new1", X86_FEATURE_X, "new2", X86_FEATURE_Y));
 *   alternative("old", "new", feature);            // asm volatile, "memory"
 *   alternative_2("old", "new1", f1, "new2", f2);
 *   alternative_input("old", "new", feature, inputs...);
 *   alternative_io("old", "new", feature, output, inputs...);
 *   alternative_call(oldfunc, newfunc, feature, output, inputs...);
 *   alternative_call_2(oldfunc, newfunc1, f1, newfunc2, f2, output,
 *                      inputs...);
 *   ALT_NOT(feature)                               // when it is absent
 *
 * The site holds the old instructions, padded with NOPs to the longest
 * replacement. Where a replacement applies, its instructions are copied
 * over them; relative jumps, calls and RIP-relative operands that leave
 * the replacement keep their destinations (src/arch/x86_64/insn.c), ones
 * within it move with it. What remains is padding, written as the fewest
 * NOPs (one up to 11 bytes, else a short jump over it). Local labels 661-
 * 667 and 6641-6652 are the macros'; the instructions must not use them.
 * alternative_call*() is a single direct call (the kernel's asm contract:
 * the caller lists outputs, inputs and clobbers; the stack pointer is
 * saved in rbx, moved below the red zone and aligned to 16 for the call,
 * so rbx cannot be an operand).
 *
 * On AArch64 the same forms take A64 assembly (arch/aarch64_alternative.h):
 *
 *   alternative_io("mov %w0, #1", "mov %w0, #2", KERNEL_HWCAP_ATOMICS,
 *                  "=r"(x));
 *   alternative_call(add_llsc, add_lse, KERNEL_HWCAP_ATOMICS, "+r"(x0),
 *                    "r"(x1) : "x2", ..., "x17", "cc", "memory");
 *
 * The padding is NOPs (a B over them from five on); branches, literal
 * loads, ADR and ADRP of a replacement are re-aimed
 * (src/arch/aarch64/insn.c); a replacement must not align or hold a
 * literal pool. alternative_call*() is one BL; the caller binds arguments
 * and results to x0-x7 with register variables and lists the other
 * caller-saved registers as clobbers (x30 is the macro's).
 *
 * Sites are checked before they are written: bytes other than what was
 * compiled (a debugger's breakpoint at start-up) are reported, named, and
 * the site keeps its old instructions, which must therefore be correct on
 * every CPU (as in the kernel, where they run before patching). A
 * static_cpu_has() that has not been patched (such a refusal, or code
 * that runs before its object registered) tests the feature at run time:
 * always the right answer.
 *
 * Where sites are not patched (SWITCHYARD_NO_PATCHING, other
 * architectures), ALTERNATIVE*() is the old instructions, static_cpu_has()
 * is boot_cpu_has() and the calls test the feature each time (on
 * architectures other than x86-64 and AArch64 every feature is absent).
 *
 * Everything here is thread-safe and async-signal-safe: the choice is made
 * before the code runs.
 */
#ifndef SWITCHYARD_ALTERNATIVE_H
#define SWITCHYARD_ALTERNATIVE_H

#include <switchyard/core.h>
#include <switchyard/cpufeature.h>

/* A feature that applies when absent (records: bit 15). */
#define ALT_NOT(feature) ((feature) | 0x8000)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/x86_64_alternative.h>
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/aarch64_alternative.h>
#else
#define ALTERNATIVE(oldinstr, newinstr, feature) oldinstr
#define ALTERNATIVE_2(oldinstr, newinstr1, f1, newinstr2, f2) oldinstr
#define alternative(oldinstr, newinstr, feature)                               \
	__asm__ volatile(oldinstr : : : "memory")
#define alternative_2(oldinstr, newinstr1, f1, newinstr2, f2)                  \
	__asm__ volatile(oldinstr : : : "memory")
#define alternative_input(oldinstr, newinstr, feature, ...)                    \
	__asm__ volatile(oldinstr : : __VA_ARGS__)
#define alternative_io(oldinstr, newinstr, feature, output, ...)               \
	__asm__ volatile(oldinstr : output : __VA_ARGS__)
#undef static_cpu_has
#undef cpu_feature_enabled
#define static_cpu_has(feature) boot_cpu_has(feature)
#define cpu_feature_enabled(feature) boot_cpu_has(feature)
#endif

/* The kernel's arm64 names for the same test, with a hint for the
 * compiler's layout of the `if`. */
#define alternative_has_cap_likely(feature)                                    \
	__builtin_expect(static_cpu_has(feature), 1)
#define alternative_has_cap_unlikely(feature)                                  \
	__builtin_expect(static_cpu_has(feature), 0)

#define switchyard_alternative_call(oldfunc, feature, newfunc, ...)            \
	(static_cpu_has(feature) ? (newfunc)(__VA_ARGS__)                      \
				 : (oldfunc)(__VA_ARGS__))
#define switchyard_alternative_call_2(oldfunc, f1, newfunc1, f2, newfunc2,     \
				      ...)                                     \
	(static_cpu_has(f2)   ? (newfunc2)(__VA_ARGS__)                        \
	 : static_cpu_has(f1) ? (newfunc1)(__VA_ARGS__)                        \
			      : (oldfunc)(__VA_ARGS__))

#endif /* SWITCHYARD_ALTERNATIVE_H */
