/* SPDX-License-Identifier: MIT */
/*
 * e3_popf.c - seed 000 (LKML 2016, "POPF_IF") in user space: the
 * kernel's irqrestore was a paravirt call site patched to `push %rdi;
 * popfq`; Denys Vlasenko patched in `testw $0x200,%di; jz 1f; sti; 1:`
 * instead and measured it A/B with perf stat: popf is a slow, microcoded
 * instruction, test/jz/sti is cheap. Here the same "restore flags"
 * operation goes through a static call, three ways:
 *
 *   call      the site holds a call to restore_fl_c(), the C form of the
 *             seed's native_cond_irq_enable() (DEFINE_STATIC_CALL, room 5)
 *   popf      inline native `push %rdi; popfq` (2 bytes + NOP3, room 5)
 *   test      inline native `testw $0x1,%di; jz 1f; stc; 1:` (8 bytes,
 *             DEFINE_STATIC_CALL_NATIVE(..., 8))
 *
 * and, for scale, the two instruction sequences inline with no site.
 *
 * The flag. `sti` is privileged; in user space popf silently leaves IF
 * alone. The stand-in must be a flag that user code may set with one
 * instruction and whose value at the site is the ABI's business only: CF
 * (`stc`). A static call site declares the flags clobbered, so no caller
 * relies on CF after it, and the ABI asks nothing of CF at calls and
 * returns. DF (`std`) would not do: the ABI requires DF clear at every call
 * and return, and a restore that left it set would break any string
 * instruction after it. AC has no unprivileged setter (stac is CPL 0).
 *
 * The operation's contract, as the seed's: it is called with the flag
 * clear (the "interrupts disabled" state: here `clc`; the site's own
 * `and $-16,%rsp` clears CF too) and sets it iff the saved word has it.
 * For such calls the C function and both natives do the same: popf
 * restores the whole word (CF with it; the other arithmetic flags are
 * clobbered for the caller anyway, DF is clear in the word, IF cannot
 * change in user mode), testw clears CF and stc sets it if bit 0 is set.
 *
 * The loop: save (`bt` puts the chosen bit in CF, `pushfq; popq`, like
 * native_save_fl()), clear (`clc`), restore through the site, then read CF
 * back (`setc`) right after the site. That check relies on the patched
 * path (the detour's `add $8,%rsp` clears CF: the C functions count the
 * passes through the detour, which the check subtracts) and on the
 * compiler putting no flag-writing instruction between the site and the
 * setc (gcc 12 and clang 14 emit the setc right after the site's `mov
 * SV,%rsp`); a wrong count of restored flags exits 1. Two columns: CF set
 * in the saved word (the common irqrestore, stc runs) and clear (stc
 * skipped).
 *
 * Times: ns per save/clear/restore/read iteration (the thread's CPU time:
 * the machine is shared), medians with 95% CIs, variants interleaved with
 * the starting one rotated each round, Mann-Whitney against "call". Instructions per iteration: single-stepped
 * on the patched path (seeds.h); "e3_popf callgrind" runs each loop
 * once for valgrind, where the sites are parked on their detour.
 */
#define _GNU_SOURCE
#include "seeds.h"
#include "perfctr.h"

#if !defined(__x86_64__) || !defined(SY__ARCH_HAVE_STATIC_CALL)
#error "e3_popf measures x86-64 patched static call sites"
#endif

#define N 10000000
#define ROUNDS 41
#define CG_N 100000
#define SEED_CF 0x1UL	/* X86_EFLAGS_CF */

void restore_fl_c(unsigned long flags);
void restore_fl_c_checked(unsigned long flags);
void restore_fl_popf(unsigned long flags);
void restore_fl_test(unsigned long flags);

/*
 * A pass that goes through the detour (an rseq abort: the thread was
 * preempted or signalled between the arm and the end of the payload) calls
 * the C function and returns through the detour's `add $8,%rsp`, which
 * clears CF: the restore happened, but its CF cannot be read after the
 * site. The natives' C functions run only on the detour: they count their
 * calls, and the check is exact (CF read back = iterations - detoured
 * passes). The call variant's target is measured as it is; its check runs
 * are separate: the key is updated to restore_fl_c_checked(), which also
 * counts the calls that do not return to the site's payload end, and
 * back. In the timed runs of the call variant a lost CF is taken for a
 * detoured pass (at most 1 in 10,000 allowed).
 */
static const void *site_end[3];	/* payload end of each site (NULL: none) */
static long detoured[3];
#define COUNT_DETOUR(i)                                                        \
	do {                                                                   \
		if (__builtin_expect(__builtin_return_address(0) !=            \
				     site_end[i], 0))                          \
			detoured[i]++;                                         \
	} while (0)

/* The C form of the seed's native_cond_irq_enable(). */
__attribute__((noinline)) SEED_NO_ICF void restore_fl_c(unsigned long flags)
{
	if (flags & SEED_CF)
		__asm__ volatile("stc" ::: "cc");
}

/* The same, counting its passes through the detour: the check runs. */
__attribute__((noinline)) SEED_NO_ICF void
restore_fl_c_checked(unsigned long flags)
{
	COUNT_DETOUR(0);
	if (flags & SEED_CF)
		__asm__ volatile("stc" ::: "cc");
}

/* The C form of native_restore_fl(): what a popf site's detour runs. */
__attribute__((noinline)) SEED_NO_ICF void restore_fl_popf(unsigned long flags)
{
	COUNT_DETOUR(1);
	__asm__ volatile("push %0\n\tpopfq" : : "g"(flags) : "memory", "cc");
}

/* The same as restore_fl_c(): what a test site's detour runs. */
__attribute__((noinline)) SEED_NO_ICF void restore_fl_test(unsigned long flags)
{
	COUNT_DETOUR(2);
	if (flags & SEED_CF)
		__asm__ volatile("stc" ::: "cc");
}

SWITCHYARD_STATIC_CALL_NATIVE(restore_fl_popf, "push %rdi\n\tpopfq");
SWITCHYARD_STATIC_CALL_NATIVE(restore_fl_test,
			      "testw $0x1, %di\n\tjz 1f\n\tstc\n1:");

DEFINE_STATIC_CALL(sc_restore_c, restore_fl_c);
DEFINE_STATIC_CALL(sc_restore_popf, restore_fl_popf);
DEFINE_STATIC_CALL_NATIVE(sc_restore_test, restore_fl_test, 8);

/* the bit the loops put in CF before they save the flags */
static volatile long cf_bit;

/* native_save_fl() with CF = bit 0 of b; steps over the red zone (the
 * compiler may keep locals there: the function has no call it can see) */
static inline __attribute__((always_inline)) unsigned long save_fl(long b)
{
	unsigned long fl;

	__asm__ volatile("lea -128(%%rsp), %%rsp\n\t"
			 "bt $0, %[b]\n\t"
			 "pushfq\n\t"
			 "popq %[fl]\n\t"
			 "lea 128(%%rsp), %%rsp"
			 : [fl] "=r"(fl) : [b] "r"(b) : "cc", "memory");
	return fl;
}

static inline __attribute__((always_inline)) void clear_cf(void)
{
	__asm__ volatile("clc" ::: "cc");
}

static inline __attribute__((always_inline)) long read_cf(void)
{
	unsigned char c;

	__asm__ volatile("setc %0" : "=qm"(c));
	return c;
}

#define LOOP(name, restore)                                                    \
	SEED_BENCHFN name(long n)                                              \
	{                                                                      \
		long b = cf_bit, got = 0;                                      \
                                                                               \
		for (long i = 0; i < n; i++) {                                 \
			unsigned long fl = save_fl(b);                         \
                                                                               \
			clear_cf();                                            \
			restore;                                               \
			got += read_cf();                                      \
		}                                                              \
		return got;                                                    \
	}

LOOP(v_call, static_call(sc_restore_c)(fl))
LOOP(v_popf, static_call(sc_restore_popf)(fl))
LOOP(v_test, static_call(sc_restore_test)(fl))
LOOP(v_inline_popf,
     __asm__ volatile("lea -128(%%rsp), %%rsp\n\tpush %0\n\tpopfq\n\t"
		      "lea 128(%%rsp), %%rsp" : : "r"(fl) : "cc", "memory"))
LOOP(v_inline_test,
     __asm__ volatile("testw $0x1, %w0\n\tjz 1f\n\tstc\n1:"
		      : : "r"(fl) : "cc", "memory"))

#define NV 5
static long (*const fns[NV])(long) = { v_call, v_popf, v_test, v_inline_popf,
				       v_inline_test };
static const char *const names[NV] = {
	"call restore_fl_c()", "native push %rdi; popfq",
	"native testw; jz; stc", "no site: push; popfq", "no site: testw; jz; stc"
};
static struct static_call_key *const keys[NV] = {
	&STATIC_CALL_KEY(sc_restore_c), &STATIC_CALL_KEY(sc_restore_popf),
	&STATIC_CALL_KEY(sc_restore_test), NULL, NULL
};

static int failed;
static long aborts[2][NV];

/*
 * got: the passes that read CF set after the restore. Exact: every pass
 * but the detoured ones shows the saved bit. Inferred (the call variant's
 * timed runs): lost CFs are the detoured passes, a few at most.
 */
static void check(int col, int v, long got, long n, long bit, int exact)
{
	long det = v < 3 ? detoured[v] : 0;
	long want = bit ? n - det : 0;

	if (v < 3)
		detoured[v] = 0;
	if (!exact) {
		/* parked (the detour every time): every CF is lost */
		long slack = seed_site_patched(keys[0]) ? n / 10000 : n;

		det = bit ? n - got : 0;
		want = got;
		if (det < 0 || det > slack || (!bit && got))
			want = -1;
	}
	/* a pass through the detour (an rseq abort: rare) runs the C
	 * function, which restores CF too, unless the detour's own code
	 * changes the flags after it: either count is right, for the call
	 * as for the natives (seen once in ten runs under load: the call
	 * variant's one detoured pass kept CF) */
	if (exact && v < 3 && bit && got >= n - det && got <= n)
		want = got;
	aborts[col][v] += det;
	if (got != want || det > n) {
		printf("FAIL: %s: CF set after %ld of %ld restores, want %ld "
		       "(%ld through the detour)\n", names[v], got, n, want,
		       det);
		failed = 1;
	}
}

/* the call variant's exact check: its key on the counting twin */
static void check_call_exact(void)
{
	if (static_call_update(sc_restore_c, restore_fl_c_checked)) {
		printf("FAIL: static_call_update\n");
		failed = 1;
		return;
	}
	for (int c = 0; c < 2; c++) {
		cf_bit = c == 0;
		check(c, 0, v_call(N / 10), N / 10, cf_bit, 1);
	}
	if (static_call_update(sc_restore_c, restore_fl_c)) {
		printf("FAIL: static_call_update\n");
		failed = 1;
	}
}

static double samples[2][NV][ROUNDS];
static struct bench_perf pc;	/* the perf lane: slot c * NV + v */

/* both columns in the same rounds: the 2 x NV runs interleaved, the
 * starting one rotated each round */
static void measure(void)
{
	for (int c = 0; c < 2; c++) {	/* warm up, and the check */
		cf_bit = c == 0;
		for (int v = 0; v < NV; v++)
			check(c, v, fns[v](N / 10), N / 10, cf_bit, v != 0);
	}
	bench_perf_open(&pc, 2 * NV, ROUNDS);
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < 2 * NV; k++) {
			int j = (r + k) % (2 * NV), c = j / NV, v = j % NV;
			double t0, t1;
			long got;

			cf_bit = c == 0;
			bench_perf_start(&pc);
			t0 = seed_cpu_ns();
			got = fns[v](N);
			t1 = seed_cpu_ns();
			bench_perf_stop(&pc, j, r, N);
			samples[c][v][r] = (t1 - t0) / N;
			check(c, v, got, N, cf_bit, v != 0);
		}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "callgrind")) {
		/* under valgrind: each loop once (sites parked on the detour) */
		cf_bit = 1;
		for (int v = 0; v < NV; v++)
			fns[v](CG_N);
		printf("ran each loop %d times, CF set\n", CG_N);
		return 0;
	}
	static const uint8_t nat_popf[] = { 0x57, 0x9d };
	static const uint8_t nat_test[] = { 0x66, 0xf7, 0xc7, 0x01, 0x00,
					    0x74, 0x01, 0xf9 };

	if (seed_site_patched(keys[0]))
		site_end[0] = seed_site(keys[0]) + SEED_SC_PAYLOAD +
			      seed_site_room(keys[0]);
	/* patched natives must be in place (a call there would pass the
	 * check below as detoured passes) */
	/* a native ends its site's room (NOPs before it: its last
	 * instruction is the commit of the rseq section) */
	if ((seed_site_patched(keys[1]) &&
	     memcmp(seed_site(keys[1]) + SEED_SC_PAYLOAD +
		    seed_site_room(keys[1]) - 2, nat_popf, 2)) ||
	    (seed_site_patched(keys[2]) &&
	     memcmp(seed_site(keys[2]) + SEED_SC_PAYLOAD +
		    seed_site_room(keys[2]) - 8, nat_test, 8))) {
		printf("FAIL: a native is not in its site\n");
		failed = 1;
	}
	seed_banner("seed 000: restore flags through a static call "
		    "(push; popfq vs testw; jz; stc)");
	printf("sites as patched:\n");
	for (int v = 0; v < NV; v++)
		if (keys[v])
			seed_print_site(names[v], keys[v]);
	printf("inline bytes per site: stack step + restore 15, arm 13, guard 5,"
	       " payload = room (5 or 8): 38 (call, popf) and 41 (test)\n");

	check_call_exact();
	measure();
	check_call_exact();

	printf("\nns per iteration (save; clc; restore; read CF; CPU time), %d "
	       "rounds of "
	       "%d, interleaved; verdict vs the call\n", ROUNDS, N);
	printf("| variant | instructions/iter (single-stepped) | CF set in "
	       "the word | CF clear in the word |\n| --- | --- | --- | --- |\n");
	for (int v = 0; v < NV; v++) {
		double ic[2];

		for (int c = 0; c < 2; c++) {
			cf_bit = c == 0;
			ic[c] = seed_icount(fns[v], 200);
		}
		printf("| %s | %.0f / %.0f |", names[v], ic[0], ic[1]);
		for (int c = 0; c < 2; c++) {
			struct bench_summary s =
				bench_summarize(samples[c][v], ROUNDS);
			double z = bench_mann_whitney_z(samples[c][v], ROUNDS,
							samples[c][0], ROUNDS);

			bench_raw(c ? "CF clear" : "CF set", names[v], "ns/iter",
				 samples[c][v], ROUNDS);
			bench_perf_raw(&pc, c * NV + v, c ? "CF clear" :
				       "CF set", names[v], "ns/iter");

			printf(" %.2f [%.2f, %.2f] %s |", s.median, s.lo, s.hi,
			       v ? bench_verdict(z) : "");
		}
		printf("\n");
	}
	bench_perf_close(&pc);
	printf("(instructions: CF set / clear; a verdict compares the variant "
	       "with the call: < faster, > slower, ~ not significant)\n");
	for (int c = 0; c < 2; c++) {	/* the seed's A/B: popf -> test */
		struct bench_summary q =
			seed_ratio(samples[c][2], samples[c][1], ROUNDS);
		double z = bench_mann_whitney_z(samples[c][2], ROUNDS,
						samples[c][1], ROUNDS);

		printf("the seed's A/B, native test vs native popf, CF %s: "
		       "%+.1f%% [%+.1f, %+.1f] %s (median of per-round "
		       "ratios - 1, 95%% CI)\n", c ? "clear" : "set",
		       100 * (q.median - 1), 100 * (q.lo - 1),
		       100 * (q.hi - 1), bench_verdict(z));
	}
	printf("passes through the detour (rseq aborts), all runs, CF set / "
	       "clear (call: counted in its check runs, inferred from lost CF "
	       "in its timed runs):");
	for (int v = 0; v < 3; v++)
		printf(" %s %ld / %ld;", names[v], aborts[0][v], aborts[1][v]);
	printf("\n");
	if (failed) {
		printf("FAILED: a restore did not restore CF\n");
		return 1;
	}
	printf("check: every patched restore set CF exactly when the saved "
	       "word had it\n");
	return 0;
}
