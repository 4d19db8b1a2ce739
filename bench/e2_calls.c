/* SPDX-License-Identifier: MIT */
/*
 * e2_calls.c - what one call costs, side by side in one process: a
 * direct call; a static call whose site is patched (a direct `call rel32`
 * behind the site's arm and guard); a static call whose target is out of
 * rel32 reach (a function of a shared library: parked on its detour until
 * main's 9831487, a call to a stub near the site since); an indirect call
 * through a function pointer, plain and compiled with retpolines; a call
 * through the PLT into a shared library; a GNU ifunc of a shared library;
 * a target_clones function of the executable. Every target is x * 3 + 1 in
 * another translation unit or object.
 *
 * Two loops per variant: a dependent chain x = f(x) (latency: each call
 * waits for the previous result) and s += f(i) (throughput: the calls are
 * independent, the front end and the return stack set the pace). Variants
 * interleaved, the starting one rotated each round, one unrecorded warm-up
 * round (lazy PLT binding, page faults); medians with 95% CIs; each variant
 * against the direct call: Hodges-Lehmann shift with its 95% CI and the
 * Mann-Whitney verdict, and the median of the per-round ratios variant /
 * direct with its 95% CI (paired: the two ran within milliseconds of each
 * other, so the machine's slower drifts cancel). A chain of dependent adds
 * (1 cycle each) measured in the same rounds converts ns to cycles. More
 * sets: "anatomy" and "parked path" take the site and the detour apart
 * (emulated in this file: see below); "kinds" measures the inline native
 * and the callee-save sites; "layout" moves the direct and the static call
 * loops within their cache line; "alternatives" compares the ways to call
 * a function chosen once by CPU feature.
 *
 * Run it again with SWITCHYARD_STATIC_CALL=detour in the environment
 * (bench/extra/run_static_calls.sh does) and every site is parked: that
 * process measures the parked path. Which state each site is in is read from
 * memory and printed.
 *
 *   e2_calls [--rounds R] [--n N] [--json FILE]
 *       (with SY_BENCH_RAW=FILE2 also the perf lane of the x = f(x) chain,
 *       bench/common/perfctr.h: per variant, named as in the JSON, into FILE2)
 *   e2_calls --callgrind N1 N2   (under valgrind --tool=callgrind:
 *       dumps each chain loop's counts after N1 and after N2 calls; the
 *       difference / (N2 - N1) is the instructions per call)
 *   e2_calls callgrind [N]   (the suite's deterministic lane: each
 *       chain loop once, N calls (default 10000), no dumps: sybench.py
 *       divides each loop's inclusive counts by N)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"
#include "sc_call.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif

DEFINE_STATIC_CALL(sc_near, sc_tgt_a);	/* target in the executable */
DEFINE_STATIC_CALL(sc_far, sc_lib_tgt);	/* in libe2_calls_lib.so */

/* The kinds of static call main added in 2e9ffff: an inline native (the
 * site holds the target's code, registered here, instead of a call) and
 * callee-save sites (the site clobbers only rax, flags and vector state),
 * calling a hand-written callee-save function or the thunk that makes a C
 * function callee-save. */
DEFINE_STATIC_CALL_NATIVE(sc_nat, sc_tgt_n, 5);
SWITCHYARD_STATIC_CALL_NATIVE(sc_tgt_n, "lea 1(%rdi,%rdi,2), %rax");
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_csa, sc_cs_tgt);
SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(sc_tgt_c);
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_cst, SWITCHYARD_CALLEE_SAVE(sc_tgt_c));

/* ---- dependent chain: x = f(x) ----------------------------------------- */

/* 4 dependent register-register adds per iteration: 4 cycles, whatever
 * the clock. (Not add $imm: recent Intel cores execute chains of those
 * faster than one per cycle, and the figure would be meaningless.) */
SC_LOOPFN static long c_calib(long x, long n)
{
	for (long i = 0; i < n; i++)
		__asm__("add %0, %0\n\tadd %0, %0\n\tadd %0, %0\n\tadd %0, %0"
			: "+r"(x));
	return x;
}

SC_LOOPFN static long c_direct(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = sc_tgt_a(x);
	return x;
}

SC_LOOPFN static long c_static(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = static_call(sc_near)(x);
	return x;
}

SC_LOOPFN static long c_static_far(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = static_call(sc_far)(x);
	return x;
}

SC_LOOPFN static long c_plt(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = sc_lib_tgt(x);
	return x;
}

SC_LOOPFN static long c_ifunc(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = sc_lib_ifunc(x);
	return x;
}

#if SC_HAVE_CLONES
SC_LOOPFN static long c_clones(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = sc_clones_tgt(x);
	return x;
}
#endif

SC_LOOPFN static long k_native(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = static_call(sc_nat)(x);
	return x;
}

SC_LOOPFN static long k_cs_asm(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = static_call(sc_csa)(x);
	return x;
}

SC_LOOPFN static long k_cs_thunk(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = static_call(sc_cst)(x);
	return x;
}

/* the target's code inlined by the compiler: what a native aims at */
SC_LOOPFN static long k_inline(long x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 3 + 1;
		__asm__("" : "+r"(x));	/* no closed form */
	}
	return x;
}

/* ---- alternatives: a function chosen once by CPU feature ---------------
 * (SSE2: present on every x86-64 CPU, so each picks sc_tgt_a) */

/* the kernel's form: one patched direct call (stack stepped as above) */
SC_LOOPFN static long a_altcall(long x, long n)
{
	for (long i = 0; i < n; i++)
		alternative_call(sc_tgt_b, sc_tgt_a, X86_FEATURE_XMM2, "=a"(x),
				 "D"(x) : "rcx", "rdx", "rsi", "r8", "r9",
				 "r10", "r11", "memory", "cc");
	return x;
}

/* the C form: static_cpu_has() (a patched NOP5) around direct calls */
SC_LOOPFN static long a_cpuhas(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = switchyard_alternative_call(sc_tgt_b, X86_FEATURE_XMM2,
						sc_tgt_a, x);
	return x;
}

/* what users write instead: ask each time, or test a flag set once */
SC_LOOPFN static long a_ask(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = boot_cpu_has(X86_FEATURE_XMM2) ? sc_tgt_a(x) : sc_tgt_b(x);
	return x;
}

static volatile int a_has_sse2;	/* volatile: the load stays in the loop */

SC_LOOPFN static long a_flag(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = a_has_sse2 ? sc_tgt_a(x) : sc_tgt_b(x);
	return x;
}

/* Layout: the same loops with the loop moved by 16, 32, 48 bytes within
 * its 64-byte line (a run of NOPs, executed once, before it; gcc aligns
 * the loop head to 16 either way). */
#define LAYOUT_LOOP(fn, pad, call)                                             \
	SC_LOOPFN static long fn(long x, long n)                               \
	{                                                                      \
		__asm__ volatile(".skip " #pad ", 0x90");                      \
		for (long i = 0; i < n; i++)                                   \
			x = call(x);                                           \
		return x;                                                      \
	}
#define SC_NEAR_CALL static_call(sc_near)
LAYOUT_LOOP(l_direct16, 16, sc_tgt_a)
LAYOUT_LOOP(l_direct32, 32, sc_tgt_a)
LAYOUT_LOOP(l_direct48, 48, sc_tgt_a)
LAYOUT_LOOP(l_static16, 16, SC_NEAR_CALL)
LAYOUT_LOOP(l_static32, 32, SC_NEAR_CALL)
LAYOUT_LOOP(l_static48, 48, SC_NEAR_CALL)

/* ---- throughput: s += f(i) --------------------------------------------- */

SC_LOOPFN static long t_direct(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += sc_tgt_a(i);
	return s;
}

SC_LOOPFN static long t_static(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += static_call(sc_near)(i);
	return s;
}

SC_LOOPFN static long t_static_far(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += static_call(sc_far)(i);
	return s;
}

SC_LOOPFN static long t_plt(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += sc_lib_tgt(i);
	return s;
}

SC_LOOPFN static long t_ifunc(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += sc_lib_ifunc(i);
	return s;
}

#if SC_HAVE_CLONES
SC_LOOPFN static long t_clones(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += sc_clones_tgt(i);
	return s;
}
#endif

/* ---- anatomy: the site's parts, emulated here ---------------------------
 *
 * Not the library's code: inline asm in this file that calls sc_tgt_a
 * directly behind some of the parts of a patched site (arch/
 * x86_64_static_call.h), to see which part costs what. The same operands
 * and clobbers as the library's asm (argument in rdi, result in rax, every
 * other caller-saved register clobbered, the frame address as an input).
 * The arm's store (movq $imm32, %fs:disp32) goes to a thread-local variable
 * of this executable, at a %fs offset as the real one (the thread's
 * rseq_cs); its unarmed form is the load testq $imm32, %fs:0.
 */
__thread long sc_emu_tls;

#define EMU_CLOBBERS                                                           \
	"rsi", "rdx", "rcx", "r8", "r9", "r10", "r11", "cc", "memory", "xmm0", \
	"xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",\
	"xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "st", "st(1)",   \
	"st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)", "mm0", "mm1",    \
	"mm2", "mm3", "mm4", "mm5", "mm6", "mm7"
#define EMU_STEP "mov %%rsp, %[sv]\n\tlea -128(%%rsp), %%rsp\n\tand $-16, %%rsp\n\t"
#define EMU_UNSTEP "\n\tmov %[sv], %%rsp"
#define EMU_ARM_STORE "movq $0, %%fs:sc_emu_tls@tpoff\n\t"
#define EMU_ARM_LOAD "testq $0, %%fs:0\n\t"
#define EMU_GUARD "test $0x12345678, %%eax\n\t"
#define EMU_LOOP(fn, text)                                                     \
	SC_LOOPFN static long fn(long x, long n)                               \
	{                                                                      \
		for (long i = 0; i < n; i++) {                                 \
			register long a __asm__("rdi") = x;                    \
			register long r __asm__("rax");                        \
			unsigned long sv;                                      \
			__asm__ volatile(text                                  \
					 : "=r"(r), [sv] "=&r"(sv), "+r"(a)    \
					 : "r"(__builtin_frame_address(0))     \
					 : EMU_CLOBBERS);                      \
			(void)sv;                                              \
			x = r;                                                 \
		}                                                              \
		return x;                                                      \
	}

/* no step at all: wrong in general (the call's push lands in the
 * enclosing function's red zone, the callee may find rsp misaligned);
 * this loop keeps nothing there and the target needs no alignment */
EMU_LOOP(e_bare, "call sc_tgt_a")
EMU_LOOP(e_lea, "lea -128(%%rsp), %%rsp\n\tcall sc_tgt_a\n\t"
		"lea 128(%%rsp), %%rsp")
/* alignment without the red-zone step (wrong for the same reason) */
EMU_LOOP(e_align, "mov %%rsp, %[sv]\n\tand $-16, %%rsp\n\tcall sc_tgt_a"
		EMU_UNSTEP)
/* ABI-correct orderings of the same step: align first, then step over
 * the red zone (the two rsp writes in the other order); sub for lea */
EMU_LOOP(e_step_and1, "mov %%rsp, %[sv]\n\tand $-16, %%rsp\n\t"
		"sub $128, %%rsp\n\tcall sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_step_sub, "mov %%rsp, %[sv]\n\tsub $128, %%rsp\n\t"
		"and $-16, %%rsp\n\tcall sc_tgt_a" EMU_UNSTEP)
/* ABI-correct with the new rsp computed off the stack pointer's chain
 * (lea and and on a copy, one write of rsp) */
EMU_LOOP(e_step_copy, "lea -128(%%rsp), %[sv]\n\tand $-16, %[sv]\n\t"
		"xchg %[sv], %%rsp\n\tcall sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_step, EMU_STEP "call sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_step_arm, EMU_STEP EMU_ARM_STORE "call sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_site, EMU_STEP EMU_ARM_STORE EMU_GUARD "call sc_tgt_a" EMU_UNSTEP)
/* the callee-save site's shape: no saved rsp, no alignment */
EMU_LOOP(e_lea_site, "lea -128(%%rsp), %%rsp\n\t" EMU_ARM_STORE EMU_GUARD
		"call sc_tgt_a\n\tlea 128(%%rsp), %%rsp")
EMU_LOOP(e_site_load, EMU_STEP EMU_ARM_LOAD EMU_GUARD "call sc_tgt_a"
		EMU_UNSTEP)
/* what else could cost what the arm costs: the arm of the previous site
 * (a register loaded, then stored at %fs:), an ordinary store of the same
 * kind without the segment (11 bytes), a 13-byte no-op (the arm's length) */
long sc_emu_glob;
EMU_LOOP(e_step_arm_old, EMU_STEP "mov $0, %%r11d\n\t"
		"mov %%r11, %%fs:sc_emu_tls@tpoff\n\tcall sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_step_ripstore, EMU_STEP "movq $0, sc_emu_glob(%%rip)\n\t"
		"call sc_tgt_a" EMU_UNSTEP)
EMU_LOOP(e_step_nop13, EMU_STEP ".byte 0x66, 0x66, 0x66, 0x66, 0x2e, "
		"0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0\n\tcall sc_tgt_a" EMU_UNSTEP)

/*
 * The parked path's mechanics, with a direct call to the target in the
 * detour (no key loads), out of line as the library's:
 *  - e_park_jmp: the guard jumps to the detour, which calls the target and
 *    jumps back after the payload (the library's detour before a76f603 and
 *    again since 0fe078f);
 *  - e_park_ret5: the guard calls the detour, which adds 5 to its return
 *    address (to skip the payload), calls the target and returns (the
 *    detour of a76f603..2e9ffff: the return goes 5 bytes past where the
 *    return stack buffer predicts it);
 *  - e_park_ret: the same returning to the payload, a NOP5 here (a return
 *    the predictor gets right).
 */
#define EMU_DETOUR(body)                                                       \
	".pushsection .text.unlikely.sc_emu, \"ax\", @progbits\n"             \
	"2:\t" body "\n\t.popsection"
EMU_LOOP(e_park_jmp, EMU_STEP "jmp 2f\n\tcall sc_tgt_a\n"
		"3:" EMU_UNSTEP "\n\t"
		EMU_DETOUR("call sc_tgt_a\n\tjmp 3b"))
EMU_LOOP(e_park_ret5, EMU_STEP "call 2f\n\tcall sc_tgt_a" EMU_UNSTEP "\n\t"
		EMU_DETOUR("addq $5, (%%rsp)\n\tsub $8, %%rsp\n\t"
			   "call sc_tgt_a\n\tadd $8, %%rsp\n\tret"))
EMU_LOOP(e_park_ret, EMU_STEP "call 2f\n\t"
		".byte 0x0f, 0x1f, 0x44, 0, 0" EMU_UNSTEP "\n\t"
		EMU_DETOUR("sub $8, %%rsp\n\tcall sc_tgt_a\n\t"
			   "add $8, %%rsp\n\tret"))

struct variant {
	const char *id;		/* the loop function's name (sc_code.py) */
	const char *name;
	long (*f)(long, long);
};

#define V(fn, name) { #fn, name, fn }
#define STATIC_NEAR "static_call, target in reach"
#define STATIC_FAR "static_call, target in a library (far)"
static const struct variant chain[] = {
	V(c_direct, "direct call"),
	V(c_static, STATIC_NEAR),
	V(c_static_far, STATIC_FAR),
	V(c_pointer, "function pointer (indirect call)"),
	V(c_retpoline, "function pointer, retpoline"),
	V(c_plt, "PLT call into a shared library"),
	V(c_ifunc, "GNU ifunc in a shared library"),
#if SC_HAVE_CLONES
	V(c_clones, "target_clones function"),
#endif
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant thru[] = {
	V(t_direct, "direct call"),
	V(t_static, STATIC_NEAR),
	V(t_static_far, STATIC_FAR),
	V(t_pointer, "function pointer (indirect call)"),
	V(t_retpoline, "function pointer, retpoline"),
	V(t_plt, "PLT call into a shared library"),
	V(t_ifunc, "GNU ifunc in a shared library"),
#if SC_HAVE_CLONES
	V(t_clones, "target_clones function"),
#endif
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant anatomy[] = {
	V(c_direct, "direct call (compiler's)"),
	V(e_bare, "asm: call, no step (not ABI-correct)"),
	V(e_lea, "asm: lea -128(%rsp); call; lea +128"),
	V(e_align, "asm: align only; call (not ABI-correct)"),
	V(e_step, "asm: red-zone step + align; call"),
	V(e_step_and1, "asm: align, then sub $128; call"),
	V(e_step_sub, "asm: sub $128, then align; call"),
	V(e_step_copy, "asm: lea+and on a copy, xchg to rsp; call"),
	V(e_step_arm, "asm: step; arm (movq $, %fs: store); call"),
	V(e_site, "asm: step; arm; TEST32; call (= site)"),
	V(e_site_load, "asm: step; unarmed (testq $, %fs:); TEST32; call"),
	V(c_static, "the library's site"),
	V(e_lea_site, "asm: lea -128; arm; TEST32; call; lea +128"),
	V(e_step_arm_old, "asm: step; previous arm (mov $,%r11d; mov %r11,%fs:)"),
	V(e_step_ripstore, "asm: step; movq $, x(%rip) (plain store); call"),
	V(e_step_nop13, "asm: step; 13-byte NOP; call"),
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant kinds[] = {
	V(c_direct, "direct call"),
	V(c_static, "static_call (ordinary site)"),
	V(k_native, "static_call, inline native (lea)"),
	V(k_inline, "the lea inlined by the compiler"),
	V(k_cs_asm, "callee-save static_call, callee-save asm target"),
	V(k_cs_thunk, "callee-save static_call, thunk around a C function"),
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant layout[] = {
	V(c_direct, "direct call, loop as compiled"),
	V(l_direct16, "direct call, loop moved by 16"),
	V(l_direct32, "direct call, loop moved by 32"),
	V(l_direct48, "direct call, loop moved by 48"),
	V(c_static, "static_call, loop as compiled"),
	V(l_static16, "static_call, loop moved by 16"),
	V(l_static32, "static_call, loop moved by 32"),
	V(l_static48, "static_call, loop moved by 48"),
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant parked[] = {
	V(c_direct, "direct call (compiler's)"),
	V(e_park_jmp, "asm: jmp detour; call; jmp back"),
	V(e_park_ret, "asm: call detour; call; ret (NOP5 payload)"),
	V(e_park_ret5, "asm: call detour; ret address += 5; call; ret"),
	V(c_static_far, "the library's site, far target"),	/* parked
					in the SWITCHYARD_STATIC_CALL=detour process */
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
static const struct variant alts[] = {
	V(c_direct, "direct call"),
	V(a_altcall, "alternative_call() (patched direct call)"),
	V(a_cpuhas, "switchyard_alternative_call() (NOP5 + call)"),
	V(a_flag, "flag set at start-up, tested each call"),
	V(a_ask, "boot_cpu_has() each call"),
	V(c_pointer, "function pointer set at start-up"),
	V(c_ifunc, "GNU ifunc in a shared library"),
	V(c_calib, "(4 dependent adds: 4 cycles)"),
};
#define NALT (int)(sizeof(alts) / sizeof(alts[0]))
#define NCHAIN (int)(sizeof(chain) / sizeof(chain[0]))
#define NANAT (int)(sizeof(anatomy) / sizeof(anatomy[0]))
#define NPARK (int)(sizeof(parked) / sizeof(parked[0]))
#define NKIND (int)(sizeof(kinds) / sizeof(kinds[0]))
#define NLAYOUT (int)(sizeof(layout) / sizeof(layout[0]))
#define NTHRU (int)(sizeof(thru) / sizeof(thru[0]))

/* pc: the perf lane's counters around each batch (slot: the variant;
 * the warm-up's round -1 is not recorded), or NULL */
static void interleave(const struct variant *v, int nv, int rounds, long n,
		       double *s, struct bench_perf *pc)
{
	for (int r = -1; r < rounds; r++)	/* r = -1: warm-up */
		for (int k = 0; k < nv; k++) {
			int i = (r + 1 + k) % nv;
			double t0;
			volatile long sink;

			if (pc)
				bench_perf_start(pc);
			t0 = bench_now_ns();
			sink = v[i].f(r + 2, n);
			t0 = bench_now_ns() - t0;
			if (pc)
				bench_perf_stop(pc, i, r, (double)n);
			(void)sink;
			if (r >= 0)
				s[i * rounds + r] = t0 / (double)n;
		}
}

static const char *state_name(struct sc_site s, const void *target)
{
	if (s.state == SC_PARKED)
		return "parked (guard CALL32/JMP32 to the detour)";
	if (s.state == SC_PATCHED && s.calls == target && s.stub)
		return "patched (guard TEST32, payload call rel32 to a stub, "
		       "jmp *0(%rip), to the target)";
	if (s.state == SC_PATCHED && s.calls == target)
		return "patched (guard TEST32, payload call rel32 to the target)";
	if (s.state == SC_PATCHED)
		return "patched, its payload holds code other than a call "
		       "(an inline native)";
	return "not found (?)";
}

static void print_site(const char *id, long (*fn)(long, long),
		       const void *target)
{
	struct sc_site s = sc_find_site((const void *)fn, 256);

	printf("  site in %-13s %s", id, state_name(s, target));
	if (s.guard) {
		printf("; guard+payload bytes:");
		for (int i = 0; i < 10; i++)
			printf(" %02x", s.guard[i]);
		if (s.stub) {
			printf("; stub at %+lld bytes:",
			       (long long)((const unsigned char *)s.stub -
					   s.guard));
			for (int i = 0; i < 14; i++)
				printf(" %02x", ((const unsigned char *)s.stub)[i]);
		}
	}
	printf("\n");
}

/* Print a set: the direct call first, the calibration (c_calib, which
 * gives ns per cycle in the same rounds) last. */
static void report(const char *title, const struct variant *v, int nv,
		   int rounds, const double *s, FILE *json, int *first)
{
	const double *base = &s[0];	/* the direct call */
	double mb = bench_summarize(base, (size_t)rounds).median;
	double cycle_ns = bench_summarize(&s[(nv - 1) * rounds],
					  (size_t)rounds).median / 4;

	printf("== %s (ns per call; cycles = ns / %.4f ns)\n", title, cycle_ns);
	for (int i = 0; i < nv; i++) {
		const double *si = &s[i * rounds];
		struct bench_summary m = bench_summarize(si, (size_t)rounds);
		char what[80];

		if (strstr(v[i].id, "_static") || !strncmp(v[i].id, "k_", 2) ||
		    !strncmp(v[i].id, "l_static", 8)) {
			struct sc_site site = sc_find_site((const void *)v[i].f, 128);

			snprintf(what, sizeof(what), "  %s%s", v[i].name,
				 site.state == SC_PATCHED && site.stub ?
				 " [patched, stub]" :
				 site.state == SC_PATCHED ? " [patched]" :
				 site.state == SC_PARKED ? " [parked]" : "");
		} else {
			snprintf(what, sizeof(what), "  %s", v[i].name);
		}
		bench_print(what, m, 1, "ns");
		printf("  %-42s %.2f cycles", "", m.median / cycle_ns);
		if (i > 0 && strcmp(v[i].id, "c_calib")) {
			struct sc_shift d = sc_hl_shift(si, (size_t)rounds, base,
							(size_t)rounds);
			double z = bench_mann_whitney_z(si, (size_t)rounds, base,
							(size_t)rounds);

			double *ratio = malloc((size_t)rounds * sizeof(*ratio));
			struct bench_summary q;

			for (int r = 0; r < rounds; r++)
				ratio[r] = si[r] / base[r];
			q = bench_summarize(ratio, (size_t)rounds);
			free(ratio);
			printf("; vs direct %s: %+.3f ns [%+.3f, %+.3f] = "
			       "%+.1f%% [%+.1f%%, %+.1f%%] (z = %.2f); "
			       "per-round ratio %.3f [%.3f, %.3f]",
			       bench_verdict(z), d.est, d.lo, d.hi,
			       100 * d.est / mb, 100 * d.lo / mb,
			       100 * d.hi / mb, z, q.median, q.lo, q.hi);
		}
		printf("\n");
		if (json) {
			fprintf(json, "%s{\"loop\":\"%s\",\"variant\":\"%s\","
				"\"name\":\"%s\",\"ns_per_call\":[",
				*first ? "" : ",\n", title, v[i].id, v[i].name);
			for (int r = 0; r < rounds; r++)
				fprintf(json, "%s%.4f", r ? "," : "",
					si[r]);
			fprintf(json, "]}");
			*first = 0;
		}
	}
}

static int run_callgrind(long n1, long n2)
{
#ifdef HAVE_CALLGRIND
	for (int i = 0; i < NCHAIN; i++) {
		char w1[96], w2[96];

		/* outside the counted windows: the strings, lazy binding */
		snprintf(w1, sizeof(w1), "%s n=%ld", chain[i].id, n1);
		snprintf(w2, sizeof(w2), "%s n=%ld", chain[i].id, n2);
		chain[i].f(1, 100);
		CALLGRIND_ZERO_STATS;
		chain[i].f(1, n1);
		CALLGRIND_DUMP_STATS_AT(w1);
		CALLGRIND_ZERO_STATS;
		chain[i].f(1, n2);
		CALLGRIND_DUMP_STATS_AT(w2);
	}
	print_site("c_static", c_static, (const void *)sc_tgt_a);
	print_site("c_static_far", c_static_far, (const void *)sc_lib_tgt);
	return 0;
#else
	(void)n1;
	(void)n2;
	fprintf(stderr, "built without <valgrind/callgrind.h>\n");
	return 77;
#endif
}

/* The suite's callgrind lane (bench/suite/e2_calls.py): every chain loop
 * once, after a short warm-up (lazy binding, the ifunc and target_clones
 * resolvers, the simulated predictors), for counts over the whole run.
 * Valgrind has no rseq: the static call sites stay parked on their
 * detour, and the states printed say so. */
static int run_lane(long n)
{
	long x = 1;

	if (n < 1)
		return 2;
	printf("target_clones %s\n", !SC_HAVE_CLONES ? "left out (clang < 16)" :
	       __builtin_cpu_supports("avx2") ? "picks the avx2 clone"
					      : "picks the default clone");
	for (int i = 0; i < NCHAIN; i++) {
		if (chain[i].f == c_calib)
			continue;
		x = chain[i].f(x, 100);
		x = chain[i].f(x, n);
	}
	print_site("c_static", c_static, (const void *)sc_tgt_a);
	print_site("c_static_far", c_static_far, (const void *)sc_lib_tgt);
	printf("ran each loop %ld times (result %ld)\n", n, x);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = 51;
	long n = 1000000;
	const char *json_path = NULL;
	FILE *json = NULL;
	int first = 1;
	struct bench_perf pc;

	if (argc > 1 && !strcmp(argv[1], "callgrind"))
		return run_lane(argc > 2 ? atol(argv[2]) : 10000);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json_path = argv[++i];
		else if (!strcmp(argv[i], "--callgrind") && i + 2 < argc)
			return run_callgrind(atol(argv[i + 1]),
					     atol(argv[i + 2]));
		else {
			fprintf(stderr, "usage: %s [--rounds R] [--n N] "
				"[--json FILE] | --callgrind N1 N2 | callgrind "
				"[N]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 3 || n < 1)
		return 2;

	double *sc = calloc((size_t)(NCHAIN * rounds), sizeof(double));
	double *st = calloc((size_t)(NTHRU * rounds), sizeof(double));
	double *sa = calloc((size_t)(NANAT * rounds), sizeof(double));
	double *sp = calloc((size_t)(NPARK * rounds), sizeof(double));
	double *sk = calloc((size_t)(NKIND * rounds), sizeof(double));
	double *sl = calloc((size_t)(NLAYOUT * rounds), sizeof(double));
	double *sx = calloc((size_t)(NALT * rounds), sizeof(double));

	a_has_sse2 = boot_cpu_has(X86_FEATURE_XMM2);

	printf("SWITCHYARD_STATIC_CALL=%s; target_clones %s\n",
	       getenv("SWITCHYARD_STATIC_CALL") ? getenv("SWITCHYARD_STATIC_CALL")
						: "(unset)",
	       !SC_HAVE_CLONES ? "left out (clang < 16)" :
	       __builtin_cpu_supports("avx2") ? "picks the avx2 clone"
					      : "picks the default clone");
	printf("static call sites, as in memory after the run:\n");
	/* the perf lane (SY_BENCH_RAW set) for the chain, the loop the suite
	 * reports (E2) */
	bench_perf_open(&pc, NCHAIN, rounds);
	interleave(chain, NCHAIN, rounds, n, sc, &pc);
	interleave(thru, NTHRU, rounds, n, st, NULL);
	interleave(anatomy, NANAT, rounds, n, sa, NULL);
	interleave(parked, NPARK, rounds, n, sp, NULL);
	interleave(kinds, NKIND, rounds, n, sk, NULL);
	interleave(layout, NLAYOUT, rounds, n, sl, NULL);
	interleave(alts, NALT, rounds, n, sx, NULL);
	print_site("c_static", c_static, (const void *)sc_tgt_a);
	print_site("c_static_far", c_static_far, (const void *)sc_lib_tgt);
	print_site("t_static", t_static, (const void *)sc_tgt_a);
	print_site("t_static_far", t_static_far, (const void *)sc_lib_tgt);
	print_site("k_native", k_native, (const void *)sc_tgt_n);
	print_site("k_cs_asm", k_cs_asm, (const void *)sc_cs_tgt);
	print_site("k_cs_thunk", k_cs_thunk,
		   (const void *)SWITCHYARD_CALLEE_SAVE(sc_tgt_c));
	printf("%d rounds of %ld calls per variant, interleaved\n\n", rounds, n);

	if (json_path && !(json = fopen(json_path, "w")))
		perror(json_path);
	if (json)
		fprintf(json, "[\n");
	report("x = f(x)", chain, NCHAIN, rounds, sc, json, &first);
	/* named as the JSON's rows (its "name"), the calibration left out
	 * as the suite leaves out its clock row */
	for (int i = 0; i < NCHAIN; i++)
		if (chain[i].f != c_calib)
			bench_perf_raw(&pc, i, "x = f(x)", chain[i].name,
				       "ns/call");
	bench_perf_close(&pc);
	printf("\n");
	report("s += f(i)", thru, NTHRU, rounds, st, json, &first);
	printf("\n");
	report("anatomy, x = f(x)", anatomy, NANAT, rounds, sa, json, &first);
	printf("\n");
	report("parked path, x = f(x)", parked, NPARK, rounds, sp, json,
	       &first);
	printf("\n");
	report("kinds, x = f(x)", kinds, NKIND, rounds, sk, json, &first);
	printf("\n");
	report("alternatives, x = f(x)", alts, NALT, rounds, sx, json, &first);
	printf("\n");
	report("layout, x = f(x)", layout, NLAYOUT, rounds, sl, json, &first);
	{
		/* over the four placements: per round, the static call loops'
		 * total time over the direct call loops' */
		double *q = malloc((size_t)rounds * sizeof(*q));
		struct bench_summary m;

		for (int r = 0; r < rounds; r++) {
			double d = 0, st = 0;

			for (int k = 0; k < 4; k++) {
				d += sl[k * rounds + r];
				st += sl[(4 + k) * rounds + r];
			}
			q[r] = st / d;
		}
		m = bench_summarize(q, (size_t)rounds);
		printf("  over the 4 placements, static_call / direct call per "
		       "round: %.3f [%.3f, %.3f]\n", m.median, m.lo, m.hi);
		free(q);
	}
	if (json) {
		fprintf(json, "\n]\n");
		fclose(json);
	}
	free(sc);
	free(st);
	free(sa);
	free(sp);
	free(sk);
	free(sl);
	free(sx);
	return 0;
}
