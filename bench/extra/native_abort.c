/* SPDX-License-Identifier: MIT */
/*
 * native_abort.c - not a benchmark: a reproduction of what an rseq abort
 * does to an inline native (found while writing e3_popf.c and
 * e2_pvlock.c). A native and its padding NOPs lie inside the site's
 * rseq critical section [arm, end of payload); a signal or a preemption
 * there restarts the pass at the detour, which calls the function again:
 *
 *  1. a native shorter than the room is followed by NOPs: an abort on a
 *     NOP, after the native ran, runs its function a second time
 *     (`lock incq (%rdi)`, 4 bytes in a room of 5, counts twice; the same
 *     native forced to 5 bytes, no NOP, counts exactly). For an unlock
 *     native (`movb $0,(%rdi)` + NOP2, seed 002) the second store can
 *     release a lock another thread has taken since;
 *  2. a native that pushes (`push %rdi; popfq`, seed 000), aborted between
 *     its push and its pop, enters the detour with rsp 8 lower: at an
 *     ordinary site the target is called with a misaligned stack (the
 *     site's `mov SV,%rsp` puts rsp back afterwards); at a callee-save
 *     site nothing does: rsp is 8 lower after the site.
 *
 * Fixed since (src/arch/x86_64/sy_arch.h, arch/x86_64_static_call.h): a
 * native sits at the end of the payload, after the NOPs, so that its last
 * instruction ends the section (1.), and the detour aligns the stack
 * itself (2., ordinary site). A native that pushes at a callee-save site
 * breaks the documented rule for natives there (only rax and the flags may
 * change before the last instruction): shown, not counted as a failure.
 *
 * A second thread sends SIGUSR1 to the first as fast as it can, so that
 * aborts happen often. Exits 1 when it saw 1. or 2. (they depend on
 * timing: a run may see none), 0 otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <switchyard.h>

#if !defined(__x86_64__) || !defined(SY__ARCH_HAVE_STATIC_CALL)
#error "native_abort reproduces x86-64 patched static call sites"
#endif

#define N 20000000L

void inc_pad(long *p);
void inc_full(long *p);
void popf_c(unsigned long f);
void popf_cs(unsigned long f);

static long detour_pad, detour_full, detour_popf, misaligned;

__attribute__((noinline)) void inc_pad(long *p)
{
	detour_pad++;
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) void inc_full(long *p)
{
	detour_full++;
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* the native's C form; checks the stack it was called with */
__attribute__((noinline)) void popf_c(unsigned long f)
{
	detour_popf++;
	/* built with a frame pointer: rbp = entry rsp - 8, 16-aligned when
	 * the caller kept the ABI's alignment */
	if ((uintptr_t)__builtin_frame_address(0) & 15)
		misaligned++;
	__asm__ volatile("push %0\n\tpopfq" : : "r"(f) : "cc", "memory");
}

SWITCHYARD_STATIC_CALL_NATIVE(inc_pad, "lock incq (%rdi)");
SWITCHYARD_STATIC_CALL_NATIVE(inc_full, ".byte 0xf0, 0x48, 0xff, 0x47, 0x00");
SWITCHYARD_STATIC_CALL_NATIVE(popf_c, "push %rdi\n\tpopfq");

/* a callee-save function with the same native */
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(popf_cs)
	"push %rdi\n\t"
	"popfq\n\t"
	"ret\n\t"
	".size popf_cs, . - popf_cs");
SWITCHYARD_STATIC_CALL_NATIVE(popf_cs, "push %rdi\n\tpopfq");

DEFINE_STATIC_CALL(sc_pad, inc_pad);
DEFINE_STATIC_CALL(sc_full, inc_full);
DEFINE_STATIC_CALL(sc_popf, popf_c);
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_popf_cs, popf_cs);

static volatile int stop;
static pthread_t victim;
static long c_pad, c_full;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *bomber(void *arg)
{
	(void)arg;
	while (!stop)
		pthread_kill(victim, SIGUSR1);
	return NULL;
}

/* rsp before and after a callee-save site; put back when it moved */
__attribute__((noinline)) static long run_cs(long n)
{
	long moved = 0;

	for (long i = 0; i < n; i++) {
		uintptr_t a, b;

		__asm__ volatile("mov %%rsp, %0" : "=r"(a));
		static_call(sc_popf_cs)(0x202);
		__asm__ volatile("mov %%rsp, %0" : "=r"(b));
		if (a != b) {
			moved++;
			__asm__ volatile("mov %0, %%rsp" : : "r"(a) : "memory");
		}
	}
	return moved;
}

int main(void)
{
	pthread_t t;
	long moved;

	signal(SIGUSR1, on_usr1);
	victim = pthread_self();
	pthread_create(&t, NULL, bomber, NULL);
	for (long i = 0; i < N; i++) {
		static_call(sc_pad)(&c_pad);
		static_call(sc_full)(&c_full);
		static_call(sc_popf)(0x202);
	}
	moved = run_cs(N);
	stop = 1;
	pthread_join(t, NULL);
	printf("native lock incq, 4 bytes + NOP1: %ld increments for %ld "
	       "passes (%+ld), %ld through the detour\n", c_pad, N, c_pad - N,
	       detour_pad);
	printf("native lock incq, 5 bytes, no NOP: %ld increments for %ld "
	       "passes (%+ld), %ld through the detour\n", c_full, N,
	       c_full - N, detour_full);
	printf("ordinary site, native push; popfq: %ld passes through the "
	       "detour, %ld of them called the target with a misaligned "
	       "stack\n", detour_popf, misaligned);
	printf("callee-save site, native push; popfq: rsp 8 lower after the "
	       "site %ld times\n", moved);
	return c_pad != N || c_full != N || misaligned;
}
