/* SPDX-License-Identifier: MIT */
/*
 * sc_call_targets.c - call targets of e2_calls.c and bench_sc_update.c
 * that live in the executable, in their own translation unit so that no
 * call is inlined or specialised.
 */
#include <switchyard.h>

#include "sc_call.h"

long sc_tgt_a(long x)
{
	return x * 3 + 1;
}

long sc_tgt_b(long x)
{
	return x * 5 + 1;
}

long (*sc_fp)(long) = sc_tgt_a;

/* The targets of e2_calls' "kinds" set (main 2e9ffff): one whose
 * inline native the benchmark registers (a separate function, so that no
 * other site gets the native), one wrapped by a callee-save thunk, and a
 * hand-written callee-save function (it changes only rax). */
long sc_tgt_n(long x)
{
	return x * 3 + 1;
}

long sc_tgt_c(long x)
{
	return x * 3 + 1;
}

__asm__(".pushsection .text.sc_cs_tgt, \"ax\", @progbits\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(sc_cs_tgt)
	"lea 1(%rdi,%rdi,2), %rax\n\t"
	"ret\n\t"
	".size sc_cs_tgt, . - sc_cs_tgt\n\t"
	".popsection");
SWITCHYARD_CALLEE_SAVE_THUNK(sc_tgt_c);

/* Function multiversioning: gcc and clang make sc_clones_tgt a GNU ifunc
 * whose resolver picks a clone by the CPU it runs on; "default" runs on any
 * x86-64 (no CPU feature assumed). Both clones are the same lea. */
#if SC_HAVE_CLONES
__attribute__((target_clones("avx2", "default"))) long sc_clones_tgt(long x)
{
	return x * 3 + 1;
}
#endif
