/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/memcpy_vec.c - switchyard_memcpy()'s entry and its AVX2 and
 * AVX-512 flavours, in assembly (the SSE2 flavour, the strategies'
 * table and the start-up are C, in memcpy_arch.c).
 *
 * Why assembly: the goals ([7/10]) are within 5% of the best strategy and
 * no slower than glibc at every size from 1 byte, where a copy costs 8-15
 * cycles and one instruction shows. The C version paid for what a compiler
 * adds and cannot be told not to: vzeroupper on every path that touched
 * a ymm register (no way to ask for ymm16-31, which need none), a
 * run-time-constant test before the smallest sizes, the loop's own entry
 * checks after the dispatcher's (doc/BENCHMARKS-HISTORY.md "[7/10] The copy
 * routine" has the before and after).
 *
 * The entry is one alternative (the library's own sy_altinstr records,
 * applied by alternative.c when the library loads, before any of its code
 * runs) whose replacements are whole instruction sequences, 55 bytes at
 * most:
 *
 *   as compiled      jmp sy__mc_dispatch_sse2   right on every x86-64, and
 *                    (+ padding)                where patching fails or is
 *                                               refused (a breakpoint)
 *   AVX2             A_PROLOGUE: the AVX2        (replacement 1)
 *                    flavour's classes to 64
 *                    bytes, to their return
 *   AVX512_COPY      E_PROLOGUE: the AVX-512     (replacement 2; the last
 *                    flavour's to 128 bytes      that applies wins)
 *
 * Writing 55 bytes of several instructions at once is safe only because no
 * thread runs this code yet: the library's constructor applies its
 * records before any of its functions can be called (not cross-modifying
 * code; the engine's sync after the write is SDM vol. 3 8.1.3's step for
 * the core that first runs it: alternative.c).
 * Their branches to the rest of each flavour are re-aimed when copied
 * (sy_arch_code_move()), the rest of the site becomes a jump over int3s
 * that nothing reaches (every path of a prologue returns or jumps). So
 * neither flavour runs a NOP or a jump for having been chosen: a cycle of
 * an 8-12 cycle copy (the first version jumped to the AVX2 flavour: one
 * cycle behind glibc at 32..64 bytes there).
 *
 * Both flavours by size, n in rdx (no threshold below 129 bytes: the
 * short moves are the fastest there by construction, one branch per size
 * class and no loop):
 *
 *   size        AVX-512 (zmm16-31, no vzeroupper)   AVX2 (ymm0-11)
 *   0..63       one masked move (k1 = n low bits)    -
 *   0           -                                    nothing
 *   1..3        -                                    bytes 0, n/2, n-1
 *   4..7        -                                    4 + 4, overlapping
 *   8..15       -                                    8 + 8
 *   16..31      -                                    16 + 16 (xmm, VEX)
 *   32..63      (AVX-512: 0..63 in one masked move)  32 + 32
 *   64..128     64 + 64                              2 x 32 + 2 x 32
 *   > 128       n >= big_min (one run-time constant compare): the C
 *               library's memcpy if n >= libc_min, else rep movsb
 *               (n >= rep_min) from a 64-byte aligned destination (the
 *               head as a vector)
 *   129..256    2 x 64 + 2 x 64                      4 x 32 + 4 x 32
 *   257..512    4 x 64 + 4 x 64                      loop
 *   beyond      loop, downwards when dst lies 0..255 bytes above src
 *               modulo 4 KiB (LOOP_DIRECTION), else upwards
 *
 * Branch targets are 16-byte aligned, the masked move's 64: the copies
 * here take 6-8 cycles, and a target late in a fetch block cost one of
 * them (the masked move at 2-3 bytes was 1.62 ns against glibc's 1.39
 * until its target was aligned, 1.4 after, on the AMD EPYC measured).
 *
 * Every "a + b" loads the first a and the last b bytes (they overlap in the
 * middle), all loads before the first store. The loop: the first vector
 * and the last 4 are loaded up front and stored unaligned at the end;
 * between them, 4 aligned stores an iteration from the first aligned
 * address above dst (the stores overlap the end vectors with the same
 * bytes: the buffers do not overlap). Five unaligned stores in all: with a
 * misaligned destination each splits a cache line (the first version
 * stored 4 + 4 unaligned and was 15% slower than glibc at 1 KiB there).
 * vzeroupper
 * before every return of the AVX2 flavour (a dirty upper state slows the
 * SSE code that follows: Intel's optimisation manual, "Mixing AVX code
 * with SSE code"); the AVX-512 flavour only touches zmm16-31, which SSE
 * code cannot name, and xmm0/1 through VEX encodings, which zero the
 * upper bits: no dirty state to clean.
 *
 * short_max has no effect in these flavours: up to 256 bytes the short
 * moves and the loop's unaligned prologue are the same code.
 *
 * Written from the description above, not from glibc's or the kernel's
 * code. Registers: rdi dst, rsi src, rdx n; rax holds dst from the first
 * instruction (the return value); rcx, r8, r9 scratch. No stack: the CFI
 * is the entry's (return address at rsp) throughout.
 */
#include "../../copy/memcpy_impl.h"

/*
 * A run-time constant compare: rcx = the variable's value (zero-extended),
 * flags = n against it. The record and guard are runtime_const_u32()'s
 * (arch/x86_64_runtime_const.h): JMP32 to code that reads the variable,
 * turned into TEST32 once the immediate holds the value.
 */
#define RC_CMP(var, id)                                                        \
	".Lrc_guard" #id ":\n\t"                                               \
	".byte 0xe9\n\t"                                                       \
	".long .Lrc_ool" #id " - .Lrc_imm" #id "\n"                            \
	".Lrc_imm" #id ":\n\t"                                                 \
	"movl $0x12345678, %ecx\n"                                             \
	".Lrc_end" #id ":\n\t"                                                 \
	"cmpq %rcx, %rdx\n\t"                                                  \
	".pushsection sy_runtime_const, \"aw\"\n\t"                            \
	".balign 8\n\t"                                                        \
	".quad " #var "\n\t"                                                   \
	".long .Lrc_guard" #id " - .\n\t"                                      \
	".byte .Lrc_end" #id " - .Lrc_guard" #id ", 4, 0, 0\n\t"               \
	".popsection\n\t"                                                      \
	".pushsection .text.unlikely.sy_runtime_const, \"ax\", @progbits\n"   \
	".Lrc_ool" #id ":\n\t"                                                 \
	"movl " #var "(%rip), %ecx\n\t"                                        \
	"jmp .Lrc_end" #id "\n\t"                                              \
	".popsection\n\t"

/*
 * Above 128 bytes, the C library's memcpy from libc_min (UINT32_MAX: never;
 * a size class routed to the contender that won it, doc/DESIGN.md "Copy
 * routine"), rep movsb from rep_min. One compare on the paths above 128
 * bytes, with big_min = the smaller of the two (a first version compared
 * with each: a run-time constant is four instructions, and the eight cost
 * 10% at 320-512 bytes against glibc's one compare on the AMD EPYC
 * measured); which of the two a big size takes is sorted out behind it,
 * where a copy costs hundreds of cycles.
 */
#define RC_ROUTE(id_big, big)                                                  \
	RC_CMP(sy__mc_big_min, id_big)                                         \
	"jae " big "\n"

/*
 * n >= big_min: the C library's memcpy from libc_min, else on to the rep
 * movsb code that follows (n is at least rep_min then: big_min is the
 * smaller). The jump to the C
 * library is a tail call through a pointer that the dynamic linker fills
 * (its IFUNC choice for this CPU): the return goes straight to our caller.
 */
#define RC_BIG(id_libc, libc)                                                  \
	RC_CMP(sy__mc_libc_min, id_libc)                                       \
	"jae " libc "\n"

/*
 * A loop that copies upwards, with a destination 0..255 bytes above its
 * source modulo 4 KiB, loads from addresses whose low 12 bits are those of
 * stores it has just issued: the CPU's check of a load against older
 * stores compares those bits first and holds the load until it knows
 * ("4K aliasing", Intel's optimisation manual; AMD's parts do the same).
 * There the loop runs downwards, where the loads' low bits lie below the
 * stores' (the AVX-512 loop took 27-29 ns at 3.5 KiB from src + 3 to
 * dst + 17, the AVX2 one 21, glibc, which turns round too, 25, on the
 * AMD EPYC measured). rcx = dst - src; jumps to back when bits 8-11 of it
 * are clear. A destination just below the source modulo 4 KiB is the
 * mirror case, fast upwards.
 */
#define LOOP_DIRECTION(back)                                                   \
	"movq %rdi, %rcx\n\t"                                                  \
	"subq %rsi, %rcx\n\t"                                                  \
	"testl $0xf00, %ecx\n\t"                                               \
	"jz " back "\n\t"

/*
 * 0..31 bytes, the AVX2 flavour: general registers and xmm0/1 through
 * VEX (which zeroes the upper bits: no dirty state).
 */
#define SMALL(x)                                                               \
	"cmpl $16, %edx\n\t"                                                  \
	"jae .Ls16" #x "\n\t"                                                 \
	"cmpl $8, %edx\n\t"                                                   \
	"jae .Ls8" #x "\n\t"                                                  \
	"cmpl $4, %edx\n\t"                                                   \
	"jae .Ls4" #x "\n\t"                                                  \
	"testl %edx, %edx\n\t"                                                \
	"jz .Ls0" #x "\n\t"                                                   \
	/* 1, 2, 3: bytes 0, n/2 and n-1 cover them all, no branch */         \
	"movl %edx, %r9d\n\t"                                                 \
	"shrl $1, %r9d\n\t"                                                   \
	"movzbl (%rsi), %ecx\n\t"                                             \
	"movzbl (%rsi,%r9), %r8d\n\t"                                         \
	"movzbl -1(%rsi,%rdx), %esi\n\t"                                      \
	"movb %cl, (%rdi)\n\t"                                                \
	"movb %r8b, (%rdi,%r9)\n\t"                                           \
	"movb %sil, -1(%rdi,%rdx)\n"                                           \
	".Ls0" #x ":\n\t"                                                     \
	"ret\n"                                                                \
	".Ls4" #x ":\n\t"                                                     \
	"movl (%rsi), %ecx\n\t"                                               \
	"movl -4(%rsi,%rdx), %r8d\n\t"                                        \
	"movl %ecx, (%rdi)\n\t"                                               \
	"movl %r8d, -4(%rdi,%rdx)\n\t"                                        \
	"ret\n"                                                                \
	".Ls8" #x ":\n\t"                                                     \
	"movq (%rsi), %rcx\n\t"                                               \
	"movq -8(%rsi,%rdx), %r8\n\t"                                         \
	"movq %rcx, (%rdi)\n\t"                                               \
	"movq %r8, -8(%rdi,%rdx)\n\t"                                         \
	"ret\n"                                                                \
	".Ls16" #x ":\n\t"                                                    \
	"vmovdqu (%rsi), %xmm0\n\t"                                           \
	"vmovdqu -16(%rsi,%rdx), %xmm1\n\t"                                   \
	"vmovdqu %xmm0, (%rdi)\n\t"                                           \
	"vmovdqu %xmm1, -16(%rdi,%rdx)\n\t"                                   \
	"ret\n"

/*
 * Each flavour's first size classes, to the first return: what the entry's
 * alternative writes at switchyard_memcpy (so that neither flavour pays a
 * jump for being chosen), and the start of its strategy entry. Every path
 * ends in a return or a jump (rel32: the replacement is assembled in
 * another section; alternative.c re-aims it), never falls off the end.
 */
#define E_PROLOGUE E_PROLOGUE_TO(".Le_gt128")
#define E_PROLOGUE_TO(gt128)                                                   \
	"movq %rdi, %rax\n\t"                                                  \
	"cmpq $64, %rdx\n\t"                                                   \
	"jb .Le_lt64\n\t"                                                      \
	"vmovdqu64 (%rsi), %zmm16\n\t"                                         \
	"cmpq $128, %rdx\n\t"                                                  \
	"ja " gt128 "\n\t"                                                     \
	"vmovdqu64 -64(%rsi,%rdx), %zmm17\n\t"                                 \
	"vmovdqu64 %zmm16, (%rdi)\n\t"                                         \
	"vmovdqu64 %zmm17, -64(%rdi,%rdx)\n\t"                                 \
	"ret\n\t"
#define A_PROLOGUE A_PROLOGUE_TO(".La_gt64")
#define A_PROLOGUE_TO(gt64)                                                    \
	"movq %rdi, %rax\n\t"                                                  \
	"cmpq $32, %rdx\n\t"                                                   \
	"jb .La_small\n\t"                                                     \
	"vmovdqu (%rsi), %ymm0\n\t"                                            \
	"cmpq $64, %rdx\n\t"                                                   \
	"ja " gt64 "\n\t"                                                      \
	"vmovdqu -32(%rsi,%rdx), %ymm1\n\t"                                    \
	"vmovdqu %ymm0, (%rdi)\n\t"                                            \
	"vmovdqu %ymm1, -32(%rdi,%rdx)\n\t"                                    \
	"vzeroupper\n\t"                                                       \
	"ret\n\t"

/* AVX2, 65.. bytes (ymm0: the first 32): to 128 bytes, or to gt128 */
#define A_GT64(gt128)                                                          \
	"vmovdqu 32(%rsi), %ymm1\n\t" \
	"vmovdqu -64(%rsi,%rdx), %ymm2\n\t" \
	"vmovdqu -32(%rsi,%rdx), %ymm3\n\t" \
	"cmpq $128, %rdx\n\t" \
	"ja " gt128 "\n\t" \
	"vmovdqu %ymm0, (%rdi)\n\t" \
	"vmovdqu %ymm1, 32(%rdi)\n\t" \
	"vmovdqu %ymm2, -64(%rdi,%rdx)\n\t" \
	"vmovdqu %ymm3, -32(%rdi,%rdx)\n\t" \
	"vzeroupper\n\t" \
	"ret\n"

#define FUNC(name)                                                             \
	".globl " #name "\n\t"                                                 \
	".hidden " #name "\n\t"                                                \
	".type " #name ", @function\n"                                         \
	#name ":\n\t"                                                          \
	".cfi_startproc\n\t"
#define ENDFUNC(name)                                                          \
	".cfi_endproc\n\t"                                                     \
	".size " #name ", . - " #name "\n\t"

__asm__(
	/* the variable behind rep_min's sites (memcpy_arch.c writes it
	 * before the value goes into the code): UINT32_MAX, never, until
	 * then */
	".pushsection .data\n\t"
	".balign 4\n\t"
	".globl sy__mc_rep_min\n\t"
	".hidden sy__mc_rep_min\n\t"
	".type sy__mc_rep_min, @object\n\t"
	".size sy__mc_rep_min, 4\n"
	"sy__mc_rep_min:\n\t"
	".long 0xffffffff\n\t"
	/* and big_min's, the smaller of the two (memcpy_arch.c) */
	".globl sy__mc_big_min\n\t"
	".hidden sy__mc_big_min\n\t"
	".type sy__mc_big_min, @object\n\t"
	".size sy__mc_big_min, 4\n"
	"sy__mc_big_min:\n\t"
	".long 0xffffffff\n\t"
	/* and libc_min's (memcpy_arch.c): never, until then */
	".globl sy__mc_libc_min\n\t"
	".hidden sy__mc_libc_min\n\t"
	".type sy__mc_libc_min, @object\n\t"
	".size sy__mc_libc_min, 4\n"
	"sy__mc_libc_min:\n\t"
	".long 0xffffffff\n\t"
	".popsection\n\t"
	/* the C library's memcpy as its IFUNC resolution chose it for this
	 * CPU (the dynamic linker writes it, then the page is read-only) */
	".pushsection .data.rel.ro, \"aw\"\n\t"
	".balign 8\n\t"
	".globl sy__mc_libc_fn\n\t"
	".hidden sy__mc_libc_fn\n\t"
	".type sy__mc_libc_fn, @object\n\t"
	".size sy__mc_libc_fn, 8\n"
	"sy__mc_libc_fn:\n\t"
	".quad memcpy\n\t"
	".popsection\n\t"

	".text\n\t"

	/* ---- the entry, and the AVX-512 flavour ----------------------- */
	".p2align 6\n\t"
	".globl sy__mc_entry\n\t"
	".hidden sy__mc_entry\n\t"
	".type sy__mc_entry, @function\n"
	"sy__mc_entry:\n\t"
	".cfi_startproc\n\t"
	ALTERNATIVE_2(".byte 0xe9\n\t.long sy__mc_dispatch_sse2 - . - 4",
		      A_PROLOGUE, X86_FEATURE_AVX2,
		      E_PROLOGUE, X86_FEATURE_AVX512_COPY)
	/* nothing falls out of the site: the AVX-512 flavour's bodies */
	/* 0..63: one masked move, the mask's low n bits set (bzhi): no
	 * branch by size. Masked-off bytes are neither stored nor loaded
	 * (no fault on them: SDM vol. 1, 15.4.1 "memory fault suppression"),
	 * so a copy may end just below an unmapped page; touching one that
	 * way costs a microcode assist, not a fault. (Tried: glibc's split,
	 * two ymm moves from 32 and byte moves below 4: no faster at fixed
	 * sizes, and 2-2.7x slower at random sizes around 2 and 29-32 on the
	 * AMD EPYC measured, where the masked move takes no branch.) */
	".p2align 6\n"
	".Le_lt64:\n\t"
	"movq $-1, %rcx\n\t"
	"bzhiq %rdx, %rcx, %rcx\n\t"
	"kmovq %rcx, %k1\n\t"
	"vmovdqu8 (%rsi), %zmm16{%k1}{z}\n\t"
	"vmovdqu8 %zmm16, (%rdi){%k1}\n\t"
	"ret\n"

	/* 129.. (zmm16 holds the first 64 bytes). To 512 bytes every load
	 * before the first store, the class compares in the order that
	 * leaves 257..512 with no taken branch (it ran 10% behind glibc at
	 * 320-512 bytes when it took two). */
	".p2align 4\n"
	".Le_gt128:\n\t"
	RC_ROUTE(1, ".Le_big")
	".Le_129:\n\t"
	"cmpq $512, %rdx\n\t"
	"ja .Le_loop\n\t"
	"vmovdqu64 64(%rsi), %zmm17\n\t"
	"cmpq $256, %rdx\n\t"
	"jbe .Le_256\n\t"
	"vmovdqu64 128(%rsi), %zmm18\n\t"
	"vmovdqu64 192(%rsi), %zmm19\n\t"
	"vmovdqu64 -256(%rsi,%rdx), %zmm20\n\t"
	"vmovdqu64 -192(%rsi,%rdx), %zmm21\n\t"
	"vmovdqu64 -128(%rsi,%rdx), %zmm22\n\t"
	"vmovdqu64 -64(%rsi,%rdx), %zmm23\n\t"
	"vmovdqu64 %zmm16, (%rdi)\n\t"
	"vmovdqu64 %zmm17, 64(%rdi)\n\t"
	"vmovdqu64 %zmm18, 128(%rdi)\n\t"
	"vmovdqu64 %zmm19, 192(%rdi)\n\t"
	"vmovdqu64 %zmm20, -256(%rdi,%rdx)\n\t"
	"vmovdqu64 %zmm21, -192(%rdi,%rdx)\n\t"
	"vmovdqu64 %zmm22, -128(%rdi,%rdx)\n\t"
	"vmovdqu64 %zmm23, -64(%rdi,%rdx)\n\t"
	"ret\n"
	".Le_256:\n\t"
	"vmovdqu64 -128(%rsi,%rdx), %zmm18\n\t"
	"vmovdqu64 -64(%rsi,%rdx), %zmm19\n\t"
	"vmovdqu64 %zmm16, (%rdi)\n\t"
	"vmovdqu64 %zmm17, 64(%rdi)\n\t"
	"vmovdqu64 %zmm18, -128(%rdi,%rdx)\n\t"
	"vmovdqu64 %zmm19, -64(%rdi,%rdx)\n\t"
	"ret\n"
	/* n > 512, forward unless the destination lies 0..255 bytes above
	 * the source modulo 4 KiB (below). Forward: zmm16 = the first
	 * vector, zmm20-23 = the last four, stored unaligned after the loop;
	 * between them aligned stores from rcx = the first 64-byte boundary
	 * above dst (rcx <= dst + 64, so zmm16 covers what lies below it), 4
	 * an iteration while rcx < r9 = the last four's place (at least one:
	 * n > 512; every store below dst + n). Only 5 unaligned stores, which
	 * split a cache line each when dst is misaligned. r8 = src - dst. */
	".p2align 4\n"
	".Le_loop:\n\t"
	LOOP_DIRECTION(".Le_back")
	"vmovdqu64 -256(%rsi,%rdx), %zmm20\n\t"
	"vmovdqu64 -192(%rsi,%rdx), %zmm21\n\t"
	"vmovdqu64 -128(%rsi,%rdx), %zmm22\n\t"
	"vmovdqu64 -64(%rsi,%rdx), %zmm23\n\t"
	"movq %rsi, %r8\n\t"
	"subq %rdi, %r8\n\t"
	"movq %rdi, %rcx\n\t"
	"orq $63, %rcx\n\t"
	"incq %rcx\n\t"
	"leaq -256(%rdi,%rdx), %r9\n\t"
	".p2align 4\n"
	".Le_iter:\n\t"
	"vmovdqu64 (%rcx,%r8), %zmm24\n\t"
	"vmovdqu64 64(%rcx,%r8), %zmm25\n\t"
	"vmovdqu64 128(%rcx,%r8), %zmm26\n\t"
	"vmovdqu64 192(%rcx,%r8), %zmm27\n\t"
	"vmovdqa64 %zmm24, (%rcx)\n\t"
	"vmovdqa64 %zmm25, 64(%rcx)\n\t"
	"vmovdqa64 %zmm26, 128(%rcx)\n\t"
	"vmovdqa64 %zmm27, 192(%rcx)\n\t"
	"addq $256, %rcx\n\t"
	"cmpq %r9, %rcx\n\t"
	"jb .Le_iter\n\t"
	"vmovdqu64 %zmm20, (%r9)\n\t"
	"vmovdqu64 %zmm21, 64(%r9)\n\t"
	"vmovdqu64 %zmm22, 128(%r9)\n\t"
	"vmovdqu64 %zmm23, 192(%r9)\n\t"
	"vmovdqu64 %zmm16, (%rdi)\n\t"
	"ret\n"
	/* Backward, the forward loop mirrored: zmm16-19 = the first four
	 * vectors and zmm20 = the last, stored unaligned after the loop;
	 * between them aligned stores down from rcx = the last 64-byte
	 * boundary at or below dst + n (zmm20 covers what lies above it), 4
	 * an iteration, the next while rcx >= r9 = dst + 256 (zmm16-19 cover
	 * what lies below; the first iteration stores at dst + 194 or above:
	 * n > 512). */
	".p2align 4\n"
	".Le_back:\n\t"
	"vmovdqu64 64(%rsi), %zmm17\n\t"
	"vmovdqu64 128(%rsi), %zmm18\n\t"
	"vmovdqu64 192(%rsi), %zmm19\n\t"
	"vmovdqu64 -64(%rsi,%rdx), %zmm20\n\t"
	"movq %rsi, %r8\n\t"
	"subq %rdi, %r8\n\t"
	"leaq (%rdi,%rdx), %rcx\n\t"
	"andq $-64, %rcx\n\t"
	"leaq 256(%rdi), %r9\n\t"
	".p2align 6\n"
	".Le_biter:\n\t"
	"subq $256, %rcx\n\t"
	"vmovdqu64 192(%rcx,%r8), %zmm24\n\t"
	"vmovdqu64 128(%rcx,%r8), %zmm25\n\t"
	"vmovdqu64 64(%rcx,%r8), %zmm26\n\t"
	"vmovdqu64 (%rcx,%r8), %zmm27\n\t"
	"vmovdqa64 %zmm24, 192(%rcx)\n\t"
	"vmovdqa64 %zmm25, 128(%rcx)\n\t"
	"vmovdqa64 %zmm26, 64(%rcx)\n\t"
	"vmovdqa64 %zmm27, (%rcx)\n\t"
	"cmpq %r9, %rcx\n\t"
	"jae .Le_biter\n\t"
	"vmovdqu64 %zmm20, -64(%rdi,%rdx)\n\t"
	"vmovdqu64 %zmm16, (%rdi)\n\t"
	"vmovdqu64 %zmm17, 64(%rdi)\n\t"
	"vmovdqu64 %zmm18, 128(%rdi)\n\t"
	"vmovdqu64 %zmm19, 192(%rdi)\n\t"
	"ret\n"

	/* n >= big_min (zmm16 holds the first 64 bytes) */
	".Le_big:\n\t"
	RC_BIG(3, ".Le_libc")

	/* rep movsb (n > 128) with the destination 64-byte aligned: if it
	 * is not, the first 64 bytes (zmm16) stored as a vector and the
	 * string from the first boundary above dst (fast strings are faster
	 * with an aligned destination: measured, glibc 1-4% ahead at 2-8 KiB
	 * misaligned before; a vector store in front of an aligned one cost
	 * up to 10%, hence the test). rax holds dst. */
	".Le_rep:\n\t"
	"testl $63, %edi\n\t"
	"jz .Lmc_rep_plain\n\t"
	"vmovdqu64 %zmm16, (%rdi)\n"
	/* the same from the AVX2 flavour (its head stored, vzeroupper
	 * done) */
	".Lmc_rep_head_done:\n\t"
	"movq %rdi, %rcx\n\t"
	"orq $63, %rcx\n\t"
	"incq %rcx\n\t"		/* dst' = the boundary, dst + 1..64 */
	"movq %rcx, %r8\n\t"
	"subq %rdi, %r8\n\t"		/* what the head covered */
	"movq %rcx, %rdi\n\t"
	"addq %r8, %rsi\n\t"
	"movq %rdx, %rcx\n\t"
	"subq %r8, %rcx\n\t"
	"rep movsb\n\t"
	"ret\n"
	".Lmc_rep_plain:\n\t"
	"movq %rdx, %rcx\n\t"
	"rep movsb\n\t"
	"ret\n"
	/* n >= libc_min: the C library's (zmm16-31 need no vzeroupper) */
	".Le_libc:\n\t"
	"jmp *sy__mc_libc_fn(%rip)\n\t"
	".cfi_endproc\n\t"
	".size sy__mc_entry, . - sy__mc_entry\n\t"

	/* the AVX-512 loop alone (and the short moves: the same code): the
	 * dispatcher's code without its two run-time compares, the same
	 * instructions to the same size classes, so that the calibration
	 * measures what the dispatcher runs (a first version put one compare
	 * in front: a cycle more at every size on the AMD EPYC measured) */
	".p2align 6\n\t"
	FUNC(sy__mc_avx512_loop)
	E_PROLOGUE_TO(".Le_129")
	ENDFUNC(sy__mc_avx512_loop)

	/* ---- the AVX2 flavour ----------------------------------------- */
	".p2align 6\n\t"
	FUNC(sy__mc_avx2)
	A_PROLOGUE
	".La_small:\n\t"
	SMALL(a)
	".La_gt64:\n\t"
	A_GT64(".La_gt128")
	".La_gt128:\n\t"
	RC_ROUTE(2, ".La_big")
	/* 129.. (ymm0-3: the first and the last 64 bytes) */
	".La_129:\n\t"
	"vmovdqu 64(%rsi), %ymm4\n\t"
	"vmovdqu 96(%rsi), %ymm5\n\t"
	"vmovdqu -128(%rsi,%rdx), %ymm6\n\t"
	"vmovdqu -96(%rsi,%rdx), %ymm7\n\t"
	"cmpq $256, %rdx\n\t"
	"ja .La_loop\n\t"
	"vmovdqu %ymm0, (%rdi)\n\t"
	"vmovdqu %ymm1, 32(%rdi)\n\t"
	"vmovdqu %ymm4, 64(%rdi)\n\t"
	"vmovdqu %ymm5, 96(%rdi)\n\t"
	"vmovdqu %ymm6, -128(%rdi,%rdx)\n\t"
	"vmovdqu %ymm7, -96(%rdi,%rdx)\n\t"
	"vmovdqu %ymm2, -64(%rdi,%rdx)\n\t"
	"vmovdqu %ymm3, -32(%rdi,%rdx)\n\t"
	"vzeroupper\n\t"
	"ret\n"
	/* n > 256, as .Le_loop with 32-byte vectors: ymm0 the first,
	 * ymm6, ymm7, ymm2, ymm3 the last four (loaded above) */
	".La_loop:\n\t"
	LOOP_DIRECTION(".La_back")
	"movq %rsi, %r8\n\t"
	"subq %rdi, %r8\n\t"
	"movq %rdi, %rcx\n\t"
	"orq $31, %rcx\n\t"
	"incq %rcx\n\t"
	"leaq -128(%rdi,%rdx), %r9\n\t"
	".p2align 4\n"
	".La_iter:\n\t"
	"vmovdqu (%rcx,%r8), %ymm8\n\t"
	"vmovdqu 32(%rcx,%r8), %ymm9\n\t"
	"vmovdqu 64(%rcx,%r8), %ymm10\n\t"
	"vmovdqu 96(%rcx,%r8), %ymm11\n\t"
	"vmovdqa %ymm8, (%rcx)\n\t"
	"vmovdqa %ymm9, 32(%rcx)\n\t"
	"vmovdqa %ymm10, 64(%rcx)\n\t"
	"vmovdqa %ymm11, 96(%rcx)\n\t"
	"subq $-128, %rcx\n\t"
	"cmpq %r9, %rcx\n\t"
	"jb .La_iter\n\t"
	"vmovdqu %ymm6, (%r9)\n\t"
	"vmovdqu %ymm7, 32(%r9)\n\t"
	"vmovdqu %ymm2, 64(%r9)\n\t"
	"vmovdqu %ymm3, 96(%r9)\n\t"
	"vmovdqu %ymm0, (%rdi)\n\t"
	"vzeroupper\n\t"
	"ret\n"
	/* backward, as .Le_back: ymm0, ymm1, ymm4, ymm5 the first four and
	 * ymm3 the last (loaded above); down from the last 32-byte boundary
	 * at or below dst + n while rcx >= dst + 128 (the first iteration
	 * stores at dst + 98 or above: n > 256) */
	".La_back:\n\t"
	"movq %rsi, %r8\n\t"
	"subq %rdi, %r8\n\t"
	"leaq (%rdi,%rdx), %rcx\n\t"
	"andq $-32, %rcx\n\t"
	"leaq 128(%rdi), %r9\n\t"
	".p2align 4\n"
	".La_biter:\n\t"
	"addq $-128, %rcx\n\t"
	"vmovdqu 96(%rcx,%r8), %ymm8\n\t"
	"vmovdqu 64(%rcx,%r8), %ymm9\n\t"
	"vmovdqu 32(%rcx,%r8), %ymm10\n\t"
	"vmovdqu (%rcx,%r8), %ymm11\n\t"
	"vmovdqa %ymm8, 96(%rcx)\n\t"
	"vmovdqa %ymm9, 64(%rcx)\n\t"
	"vmovdqa %ymm10, 32(%rcx)\n\t"
	"vmovdqa %ymm11, (%rcx)\n\t"
	"cmpq %r9, %rcx\n\t"
	"jae .La_biter\n\t"
	"vmovdqu %ymm3, -32(%rdi,%rdx)\n\t"
	"vmovdqu %ymm0, (%rdi)\n\t"
	"vmovdqu %ymm1, 32(%rdi)\n\t"
	"vmovdqu %ymm4, 64(%rdi)\n\t"
	"vmovdqu %ymm5, 96(%rdi)\n\t"
	"vzeroupper\n\t"
	"ret\n"
	/* n >= big_min (ymm0-3 hold the first and the last 64 bytes) */
	".La_big:\n\t"
	RC_BIG(4, ".La_libc")
	".La_rep:\n\t"
	"testl $63, %edi\n\t"
	"jz 1f\n\t"
	"vmovdqu %ymm0, (%rdi)\n\t"
	"vmovdqu %ymm1, 32(%rdi)\n\t"
	"vzeroupper\n\t"
	"jmp .Lmc_rep_head_done\n"
	"1:\n\t"
	"vzeroupper\n\t"
	"jmp .Lmc_rep_plain\n"
	".La_libc:\n\t"
	"vzeroupper\n\t"
	"jmp *sy__mc_libc_fn(%rip)\n\t"
	ENDFUNC(sy__mc_avx2)

	/* the AVX2 loop alone (and the short moves: the same code), as the
	 * AVX-512 one: the flavour's code without the run-time compares */
	".p2align 6\n\t"
	FUNC(sy__mc_avx2_loop)
	A_PROLOGUE_TO(".La_gt64_alone")
	".La_gt64_alone:\n\t"
	A_GT64(".La_129")
	ENDFUNC(sy__mc_avx2_loop));
