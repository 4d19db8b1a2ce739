/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/x86_64_static_call.h - static call sites for x86-64.
 *
 * Never include this file directly: <switchyard/static_call.h> selects it.
 *
 * A site is a direct call emitted by inline asm, guarded so that its rel32
 * can be rewritten while other threads run it (src/static_call.c, and
 * doc/DESIGN.md "Static calls"):
 *
 *   bytes                      insn                       role
 *   mov %rsp,SV; lea -128(%rsp),%rsp; and $-16,%rsp        step over the red
 *                                                          zone, align
 *   64 48 c7 04 25 <disp32> <imm32>                        arm: rseq->rseq_cs
 *                              movq $desc, %fs:disp32     = desc (< 2 GiB)
 *   a9/e9 <rel32>              TEST32 / JMP32 detour      the guard
 *   room bytes (5..15)         NOPs + call target         the payload (or
 *                                                          NOPs, NOPs + xor
 *                                                          eax for RET0, NOPs
 *                                                          + an inline native)
 *   mov SV, %rsp
 * (a callee-save site: `lea -128(%rsp),%rsp` before, `lea 128(%rsp),%rsp`
 * after, nothing else; see SY__SC_TEXT_CS)
 *
 * As compiled, the arm is `testq $0, %fs:0` (f7 instead of c7, harmless:
 * it reads the thread's TCB pointer), the guard is the JMP32 to the detour
 * and the payload `call .+5` and 0x90s, so a site that runs before its
 * object registered, or in a process where the library cannot patch (no
 * rseq), calls through the key. Registration writes imm32 and disp32
 * (= __rseq_offset + 8, known only at run time), turns the test into the
 * store, writes the payload and turns the guard into the TEST.
 *
 * The detour, out of line in .text.unlikely, is also the rseq abort
 * handler: the signature 0x53053053 precedes it (and, before that, the
 * offset of the end of the site, for its unwind info). It calls the key's
 * current target (none when NULL) and jumps back after the payload.
 *
 * Each site adds a 16-byte record to section "sy_static_call_sites":
 *   offset 0  8  meta - absolute address of the site's struct sy__sc_meta
 *                (the key, and the kind: room + 16 if callee-save)
 *   offset 8  4  code - address of the site's arm minus the field's
 *   offset 12 4  flags (0; the registry's use at run time)
 *
 * ABI at the site (the compiler sees one asm statement): arguments are bound
 * to rdi, rsi, rdx, rcx, r8, r9 after all of them have been evaluated; the
 * return value is rax; every caller-saved register, the flags, x87/MMX and
 * vector state are clobbered; the stack pointer is saved in a callee-saved
 * register, moved below the red zone and aligned to 16 for the call. The
 * frame-address input forces an rbp frame in the enclosing function, so its
 * CFA stays rbp-based across the site and unwinding from the target works.
 */
#ifndef SWITCHYARD_ARCH_X86_64_STATIC_CALL_H
#define SWITCHYARD_ARCH_X86_64_STATIC_CALL_H

#ifndef SWITCHYARD_STATIC_CALL_H
#error "include <switchyard.h> or <switchyard/static_call.h>, not this file"
#endif

#define SY__ARCH_HAVE_STATIC_CALL 1

#if defined(__clang__)
#define SY__SC_META_OPERAND(m) "s"(m)
#define SY__SC_META_PRINT "%c[sy_meta]"
#else
#define SY__SC_META_OPERAND(m) "X"(m)
#define SY__SC_META_PRINT "%p[sy_meta]"
#endif

/*
 * The detour, with its unwind information. Entered two ways, at the same
 * address, with nothing pushed: by the guard's JMP32, and by the kernel as
 * the rseq abort handler (after the signature). It pushes the end of the
 * site as a return address (the frame a backtrace from the target walks
 * through, and what gdb's `next` steps over), calls the key's target (none
 * when NULL) with rsp % 16 == 0 (it aligns it), drops the frame and
 * jumps back: no `ret` to a pushed address, no `call` left unreturned,
 * so the return stack buffer stays in step (a guard that called the detour,
 * which then returned past the payload, cost 44-51 cycles a pass: every
 * return mispredicted) and a shadow stack would have nothing to refuse.
 * It uses rax (the call's result register) and rbp (saved, restored):
 * callee-save sites reuse the scheme, with the caller-saved registers saved
 * around the call. Before the signature: the pc-relative offset of the
 * end of the site, for the unwinder.
 *
 * Its FDE is written by hand (GAS cannot open a second .cfi_startproc inside
 * the enclosing function's). Rows (DWARF register 0 = rax, 7 = rsp, 6 =
 * rbp, 16 = the return address, here read as the pc by gdb):
 *   776 entry         CFA = rsp, RA = pc - 8 + the offset stored at pc - 8
 *   770 after lea     RA = rax
 *   777 after push    CFA = rsp + 8, RA at CFA-8
 *   779 after push %rbp CFA = rsp + 16, rbp at CFA-16
 *   788 after mov      CFA = rbp + 16
 *   789 after pop %rbp CFA = rsp + 8, rbp unchanged
 *   781 at the jmp back: CFA = rsp, RA at CFA-8 (in the red zone now: a
 *   signal handler's frame leaves 128 bytes below rsp alone)
 * The entry row matters to gdb: single-stepping a patched site, every step
 * inside the rseq section is a preemption and restarts at the entry, and a
 * parked guard jumps there; gdb's `next` finds the site as the caller and
 * lets the detour run back to it. rbp is restored before the jump back.
 */
/* (SY__SC_TEST_NO_FDE: the negative control of tests/gdb/check_gdb_sc.sh) */
#ifdef SY__SC_TEST_NO_FDE
#define SY__SC_FDE(rows) ""
#else
#define SY__SC_FDE(rows)                                                       \
	".pushsection .eh_frame, \"a\", @unwind\n"                             \
	"783:\t.long 785f - 784f\n"                                            \
	"784:\t.long 0\n\t"                    /* CIE */                       \
	".byte 1\n\t"                          /* version */                   \
	".asciz \"zR\"\n\t"                                                    \
	".byte 1, 0x78, 16, 1, 0x1b\n\t" /* code 1, data -8, RA 16, pcrel s4 */ \
	".byte 0x0c, 7, 8, 0x90, 1\n\t"        /* CFA rsp+8, RA at CFA-8 */    \
	".balign 8, 0\n"                                                       \
	"785:\t.long 787f - 786f\n"                                            \
	"786:\t.long 786b - 783b\n\t"          /* FDE: its CIE */              \
	".long 776b - .\n\t"                                                   \
	".long 782b - 776b\n\t"                                                \
	".byte 0\n\t"                                                          \
	".byte 0x0c, 7, 0\n\t"                 /* CFA rsp */                   \
	/* RA = pc - 8 + sext32([pc - 8]), as v - ((v & 2^31) << 1) with v	\
	 * the 8-byte load shifted left and right by 32: the operations	\
	 * valgrind's CFI reader knows (no dup, xor, shra, deref_size) */	\
	".byte 0x16, 16, 24, 0x80, 0x78, 0x06, 0x08, 32, 0x24\n\t"            \
	".byte 0x08, 32, 0x25, 0x80, 0x78, 0x06, 0x0c, 0, 0, 0, 0x80\n\t"     \
	".byte 0x1a, 0x31, 0x24, 0x1c, 0x80, 0x78, 0x22\n\t"                  \
	".byte 0x02, 770b - 776b, 0x09, 16, 0\n\t" /* RA = rax */              \
	".byte 0x02, 777b - 770b, 0x0e, 8, 0x90, 1\n\t" /* CFA rsp+8 */        \
	rows                                                                   \
	".balign 8, 0\n"                                                       \
	"787:\n\t"                                                             \
	".popsection"
#endif

#define SY__SC_DETOUR_HEAD                                                     \
	".pushsection .text.unlikely.sy_static_call, \"ax?\", @progbits\n\t"  \
	".long 775b - .\n\t"                                                   \
	".long 0x53053053\n"                                                   \
	"776:\tlea 775b(%%rip), %%rax\n"                                       \
	"770:\tpush %%rax\n"                                                   \
	"777:\t"
#define SY__SC_DETOUR_LOAD_CALL                                                \
	"movq " SY__SC_META_PRINT "@GOTPCREL(%%rip), %%rax\n\t"                \
	"movq (%%rax), %%rax\n\t"                                              \
	"movq (%%rax), %%rax\n\t"                                              \
	"testq %%rax, %%rax\n\t"                                               \
	"jz 780f\n\t"                                                          \
	"call *%%rax\n"                                                        \
	"780:\t"
#define SY__SC_DETOUR_TAIL                                                     \
	"781:\tjmp 775b\n"                                                     \
	"782:\n\t"                                                             \
	".popsection\n\t"
/*
 * The body: an rbp frame, the stack aligned whatever rsp was at the entry
 * (a native aborted after a push leaves it 8 lower at an ordinary site,
 * which restores rsp from SV after the payload), then the call. A
 * callee-save site's detour also saves what a C function may change: its
 * target may be any function (the registry writes a direct call into a
 * callee-save site only for a callee-save target).
 */
#define SY__SC_DETOUR_BODY(save, restore)                                      \
	SY__SC_DETOUR_HEAD                                                     \
	"push %%rbp\n"                                                         \
	"779:\tmov %%rsp, %%rbp\n"                                             \
	"788:\tand $-16, %%rsp\n\t"                                            \
	save SY__SC_DETOUR_LOAD_CALL restore                                   \
	"mov %%rbp, %%rsp\n\t"                                                 \
	"pop %%rbp\n"                                                          \
	"789:\tlea 8(%%rsp), %%rsp\n"                                          \
	SY__SC_DETOUR_TAIL                                                     \
	SY__SC_FDE(".byte 0x02, 779b - 777b, 0x0e, 16, 0x86, 2\n\t"            \
		   ".byte 0x02, 788b - 779b, 0x0d, 6\n\t"                      \
		   ".byte 0x02, 789b - 788b, 0x0c, 7, 8, 0x08, 6\n\t"          \
		   ".byte 0x02, 781b - 789b, 0x0e, 0\n\t")
#define SY__SC_CS_SAVE                                                         \
	"push %%rdi\n\tpush %%rsi\n\tpush %%rdx\n\tpush %%rcx\n\t"             \
	"push %%r8\n\tpush %%r9\n\tpush %%r10\n\tpush %%r11\n\t"
#define SY__SC_CS_RESTORE                                                      \
	"pop %%r11\n\tpop %%r10\n\tpop %%r9\n\tpop %%r8\n\t"                   \
	"pop %%rcx\n\tpop %%rdx\n\tpop %%rsi\n\tpop %%rdi\n\t"
#define SY__SC_DETOUR SY__SC_DETOUR_BODY("", "")
#define SY__SC_DETOUR_CS SY__SC_DETOUR_BODY(SY__SC_CS_SAVE, SY__SC_CS_RESTORE)

/* The site's record, and the site from the arm to the end of the payload:
 * the payload is room bytes (sy_room, 5 to 15), its compiled form a call
 * to the next instruction and NOPs. The meta (struct sy__sc_meta) carries
 * the room and the kind of site for the registry. */
#define SY__SC_CORE                                                            \
	"771:\t.byte 0x64, 0x48, 0xf7, 0x04, 0x25\n\t.long 0, 0\n\t"           \
	".byte 0xe9\n\t.long 776f - 774f\n"                                    \
	"774:\t.byte 0xe8\n\t.long 0\n\t"                                      \
	".fill %c[sy_room] - 5, 1, 0x90\n"                                         \
	"775:\t"
#define SY__SC_RECORD                                                          \
	".pushsection sy_static_call_sites, \"aw?" SY__REC_R "\"\n\t"          \
	".balign 8\n\t"                                                        \
	".quad " SY__SC_META_PRINT "\n\t"                                      \
	".long 771b - ., 0\n\t"                                                \
	".popsection\n\t"

/* An ordinary site: the callee may change every caller-saved register and
 * expects rsp % 16 == 0 at the call. */
#define SY__SC_TEXT                                                            \
	"mov %%rsp, %[sy_sv]\n\t"                                              \
	"lea -128(%%rsp), %%rsp\n\t"                                           \
	"and $-16, %%rsp\n"                                                    \
	SY__SC_CORE                                                            \
	"mov %[sy_sv], %%rsp\n\t"                                              \
	SY__SC_RECORD SY__SC_DETOUR

/* A callee-save site: the callee (a callee-save function: a thunk, or
 * hand-written) preserves every general register but rax, and aligns the
 * stack itself if it calls anything; only the red zone is stepped over
 * (lea leaves the flags alone, not that it matters here). */
#define SY__SC_TEXT_CS                                                         \
	"lea -128(%%rsp), %%rsp\n"                                             \
	SY__SC_CORE                                                            \
	"lea 128(%%rsp), %%rsp\n\t"                                            \
	SY__SC_RECORD SY__SC_DETOUR_CS

#if defined(__AVX512F__)
#define SY__SC_CLOBBER_AVX512                                                  \
	, "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",       \
	"xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29",         \
	"xmm30", "xmm31", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#else
#define SY__SC_CLOBBER_AVX512
#endif

/* Everything a callee may change, but the argument registers (operands). */
#define SY__SC_CLOBBERS                                                        \
	"r10", "r11", "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",   \
	"xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12",     \
	"xmm13", "xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)",   \
	"st(5)", "st(6)", "st(7)", "mm0", "mm1", "mm2", "mm3", "mm4", "mm5",   \
	"mm6", "mm7" SY__SC_CLOBBER_AVX512

/* What a callee-save site loses: rax (an output), flags, memory, and the
 * x87/MMX/vector state. */
#define SY__SC_CLOBBERS_CS                                                     \
	"cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",        \
	"xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",    \
	"xmm14", "xmm15", "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)",   \
	"st(6)", "st(7)", "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6",      \
	"mm7" SY__SC_CLOBBER_AVX512

#define SY__SC_BIND1 register long sy__r1 __asm__("rdi") = sy__t1;
#define SY__SC_BIND2 SY__SC_BIND1 register long sy__r2 __asm__("rsi") = sy__t2;
#define SY__SC_BIND3 SY__SC_BIND2 register long sy__r3 __asm__("rdx") = sy__t3;
#define SY__SC_BIND4 SY__SC_BIND3 register long sy__r4 __asm__("rcx") = sy__t4;
#define SY__SC_BIND5 SY__SC_BIND4 register long sy__r5 __asm__("r8") = sy__t5;
#define SY__SC_BIND6 SY__SC_BIND5 register long sy__r6 __asm__("r9") = sy__t6;
#define SY__SC_OUT1 , "+r"(sy__r1)
#define SY__SC_OUT2 SY__SC_OUT1, "+r"(sy__r2)
#define SY__SC_OUT3 SY__SC_OUT2, "+r"(sy__r3)
#define SY__SC_OUT4 SY__SC_OUT3, "+r"(sy__r4)
#define SY__SC_OUT5 SY__SC_OUT4, "+r"(sy__r5)
#define SY__SC_OUT6 SY__SC_OUT5, "+r"(sy__r6)
#define SY__SC_IN1 , "r"(sy__r1)
#define SY__SC_IN2 SY__SC_IN1, "r"(sy__r2)
#define SY__SC_IN3 SY__SC_IN2, "r"(sy__r3)
#define SY__SC_IN4 SY__SC_IN3, "r"(sy__r4)
#define SY__SC_IN5 SY__SC_IN4, "r"(sy__r5)
#define SY__SC_IN6 SY__SC_IN5, "r"(sy__r6)
#define SY__SC_FREE0 "rdi", "rsi", "rdx", "rcx", "r8", "r9",
#define SY__SC_FREE1 "rsi", "rdx", "rcx", "r8", "r9",
#define SY__SC_FREE2 "rdx", "rcx", "r8", "r9",
#define SY__SC_FREE3 "rcx", "r8", "r9",
#define SY__SC_FREE4 "r8", "r9",
#define SY__SC_FREE5 "r9",
#define SY__SC_FREE6

/*
 * SY__SC_ASM(n, meta, room) - the site, with its n arguments already
 * converted into the longs sy__t1..sy__tn (declared by the caller); a long:
 * rax after the call. The temporaries are all evaluated before the first
 * register variable is bound, so no argument expression can clobber a bound
 * register.
 */
#define SY__SC_ASM(n, meta, room)                                              \
	__extension__({                                                        \
		SY__SC_BIND##n                                                 \
		register long sy__ret __asm__("rax");                          \
		unsigned long sy__sv;                                          \
		__asm__ volatile(SY__SC_TEXT                                   \
				 : "=r"(sy__ret), [sy_sv] "=&r"(sy__sv)        \
				   SY__SC_OUT##n                               \
				 : [sy_meta] SY__SC_META_OPERAND(meta),        \
				   [sy_room] "i"(room),                        \
				   "r"(__builtin_frame_address(0))             \
				 : SY__SC_FREE##n SY__SC_CLOBBERS);            \
		(void)sy__sv;                                                  \
		sy__ret;                                                       \
	})
/*
 * SY__SC_ASM_CS(n, meta, room) - a callee-save site: the arguments are
 * inputs (the callee preserves them), rax the only register written; the
 * vector and x87 state is declared clobbered (a thunk calls an ordinary C
 * function, which may use it; integer code keeps nothing there anyway).
 */
#define SY__SC_ASM_CS(n, meta, room)                                           \
	__extension__({                                                        \
		SY__SC_BIND##n                                                 \
		register long sy__ret __asm__("rax");                          \
		__asm__ volatile(SY__SC_TEXT_CS                                \
				 : "=r"(sy__ret)                               \
				 : [sy_meta] SY__SC_META_OPERAND(meta),        \
				   [sy_room] "i"(room),                        \
				   "r"(__builtin_frame_address(0))             \
				   SY__SC_IN##n                                \
				 : SY__SC_CLOBBERS_CS);                        \
		sy__ret;                                                       \
	})
/* (SY__SC_BIND0 and SY__SC_OUT0 are empty) */
#define SY__SC_BIND0
#define SY__SC_OUT0
#define SY__SC_IN0

/*
 * Per-object glue, as for jump labels (arch/x86_64.h): the object's table of
 * sites goes to the registry before any of its code runs, and comes back
 * when it is unloaded. COMDAT group "sy__sc_dso_glue": one copy per object.
 */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_static_call_sites, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_static_call_sites\n\t"
	".hidden __stop_sy_static_call_sites\n\t"
	".pushsection .text.sy__sc_dso_glue, \"axG\", @progbits, sy__sc_dso_glue, comdat\n"
	"1:\tleaq __start_sy_static_call_sites(%rip), %rdi\n\t"
	"leaq __stop_sy_static_call_sites(%rip), %rsi\n\t"
	"jmp sy__register_static_call_sites@PLT\n"
	"2:\tleaq __start_sy_static_call_sites(%rip), %rdi\n\t"
	"leaq __stop_sy_static_call_sites(%rip), %rsi\n\t"
	"jmp sy__unregister_static_call_sites@PLT\n\t"
	".popsection\n\t"
	".pushsection .init_array.00099, \"awG\", @init_array, sy__sc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 1b\n\t"
	".popsection\n\t"
	".pushsection .fini_array.00099, \"awG\", @fini_array, sy__sc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 2b\n\t"
	".popsection");
#endif

#endif /* SWITCHYARD_ARCH_X86_64_STATIC_CALL_H */
