/* SPDX-License-Identifier: MIT */
/*
 * torture_sc.c - static call updates while threads call through the site,
 * every call counted per target, and the negative control that shows the
 * count can catch a wrong write path.
 *
 *   torture_sc SECONDS         both runs below, each in a child process
 *   torture_sc safe SECONDS    4 callers (2 block every signal) call
 *                              static_call(sc_t)(); the main thread flips
 *                              the target between tick_a and tick_b with
 *                              static_call_update(); at the end, every call
 *                              made was counted by exactly one target
 *   torture_sc unsafe SECONDS  the same, but the main thread rewrites the
 *                              payload's rel32 in place, as two 2-byte
 *                              writes, with no protocol: must be caught
 *                              (a crash or a miscount) within the time
 *   torture_sc kinds SECONDS   the other kinds of sites: a room-8 site
 *                              whose target flips between a call and an
 *                              inline native, and a callee-save site whose
 *                              target flips between a thunk and a
 *                              hand-written callee-save function; every
 *                              call counted per target (the native counts
 *                              too), and the callers' registers checked
 *                              across the callee-save site
 *
 * tick_a and tick_b are 128 KiB of int3 apart, so that a torn rel32 (the
 * high half of one, the low half of the other) lands on int3: a thread
 * that runs a torn call dies of SIGTRAP, even if it blocks every signal.
 *
 * AArch64: the site is one BL; the unsafe run writes it as two 16-bit
 * halves (the control the Arm ARM's rule predicts: a half-written word is
 * not on its list), the targets are 256 KiB of BRK apart; the native site
 * flips between a BL to ntick_a and a B to the block that runs ntick_b's
 * native.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sy_sc_sites.h"
#include "sy_test.h"

#define CALLERS 4
static long count_a, count_b;

#if defined(__aarch64__)
/* AArch64: 256 KiB of BRK inside each target, jumped over: a BL torn at
 * its 16-bit halves mixes the high bits of one imm26 with the low 16 of
 * the other, 256 KiB (2^16 words) away from a target, into the padding */
#define INT3_PAD                                                               \
	__asm__ volatile("b 1f\n\t.fill 65536, 4, 0xd4200000\n1:")
#else
/* 128 KiB of int3 inside each target, jumped over, whatever order the
 * compiler puts them in */
#define INT3_PAD __asm__ volatile("jmp 1f\n\t.fill 131072, 1, 0xcc\n1:")
#endif

__attribute__((noinline)) static void tick_a(long *n)
{
	INT3_PAD;
	(*n)++;
	__atomic_fetch_add(&count_a, 1, __ATOMIC_RELAXED);
}

__attribute__((noinline)) static void tick_b(long *n)
{
	INT3_PAD;
	(*n)++;
	__atomic_fetch_add(&count_b, 1, __ATOMIC_RELAXED);
}

DEFINE_STATIC_CALL(sc_t, tick_a);
static int stop;

static void *caller(void *arg)
{
	long *made = (long *)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		static_call(sc_t)(made);
	return NULL;
}

static void *caller_blocking(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return caller(arg);
}

#if defined(__aarch64__)
#include <sys/mman.h>

/* sc_t's site in caller() (the only one): one word. */
static uint32_t *the_site(void)
{
	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (r->meta->key == &STATIC_CALL_KEY(sc_t))
			return (uint32_t *)(uintptr_t)sy_sc_code(r);
	return NULL;
}

static uint32_t bl_to(const uint32_t *site, void (*f)(long *))
{
	intptr_t d = ((intptr_t)f - (intptr_t)site) / 4;

	return 0x94000000u | ((uint32_t)d & 0x03ffffffu);
}

static bool brk_at(const uint32_t *site, uint32_t bl)
{
	intptr_t imm = (int32_t)(bl << 6) >> 6;

	return ((const uint32_t *)site)[imm] == 0xd4200000u;
}

/*
 * The AArch64 control: the BL rewritten in place as two 16-bit stores
 * (low half, then high half), each followed by the cache maintenance, with
 * no protocol. A 16-bit store is single-copy atomic, but between the two
 * the word is neither the old BL nor the new one: not on the Arm ARM's
 * list (B2.2.5), and a thread that runs it goes into the BRK padding.
 * Returns 3 when the control cannot be built.
 */
static uint32_t *unsafe_site;

static int unsafe_setup(uint32_t *site, const uint32_t bl[2])
{
	uint32_t torn = (bl[0] & 0xffff0000u) | (bl[1] & 0xffffu);
	uint32_t torn2 = (bl[1] & 0xffff0000u) | (bl[0] & 0xffffu);
	uintptr_t pg = (uintptr_t)site & ~(uintptr_t)4095;

	if (*site != bl[0] || !brk_at(site, torn) || !brk_at(site, torn2) ||
	    mprotect((void *)pg, 8192, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		fprintf(stderr, "cannot build the negative control: torn "
			"calls would not land on BRK\n");
		return 3;
	}
	unsafe_site = site;
	return 0;
}

static void unsafe_write(uint32_t w)
{
	volatile uint16_t *h = (volatile uint16_t *)unsafe_site;
	char *c = (char *)unsafe_site;

	h[0] = (uint16_t)w;
	__builtin___clear_cache(c, c + 4);
	for (volatile int i = 0; i < 1000; i++)
		;
	h[1] = (uint16_t)(w >> 16);
	__builtin___clear_cache(c, c + 4);
}
#else
/* The payload of sc_t's site in caller() (the only one). */
static uint8_t *the_payload(void)
{
	const uint8_t *c = sy_sc_site_of(&STATIC_CALL_KEY(sc_t));

	return c ? (uint8_t *)(uintptr_t)(c + SY_SC_PAYLOAD) : NULL;
}
#endif

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int run(int unsafe, double seconds)
{
	pthread_t t[CALLERS];
	long made[CALLERS] = { 0 }, total = 0;
	long updates = 0;
#if defined(__aarch64__)
	uint32_t *site = the_site(), bl[2];

	CHECK(site != NULL);
	if (!site)
		return 1;
	bl[0] = bl_to(site, tick_a);
	bl[1] = bl_to(site, tick_b);
	if (unsafe && unsafe_setup(site, bl))
		return 3;
#else
	uint8_t *pl = the_payload();
	int32_t rel[2];
	int fd = -1;

	CHECK(pl != NULL);
	if (!pl)
		return 1;
	rel[0] = (int32_t)((intptr_t)tick_a - (intptr_t)(pl + 5));
	rel[1] = (int32_t)((intptr_t)tick_b - (intptr_t)(pl + 5));
	if (unsafe) {
		/* the control is only as good as its torn values */
		int32_t torn = (rel[0] & ~0xffff) | (rel[1] & 0xffff);
		int32_t torn2 = (rel[1] & ~0xffff) | (rel[0] & 0xffff);

		fd = open("/proc/self/mem", O_RDWR);
		if (!(pl[0] == 0xe8 && pl[-5] == 0xa9) || fd < 0 ||
		    *(uint8_t *)(pl + 5 + torn) != 0xcc ||
		    *(uint8_t *)(pl + 5 + torn2) != 0xcc) {
			fprintf(stderr, "cannot build the negative control: "
				"torn calls would not land on int3\n");
			return 3;
		}
	}
#endif
	for (int i = 0; i < CALLERS; i++)
		pthread_create(&t[i], NULL, i % 2 ? caller_blocking : caller,
			       &made[i]);
	for (double end = now() + seconds; now() < end; updates++) {
		int to = (int)(updates % 2) ^ 1;	/* a -> b -> a ... */

		if (!unsafe) {
			CHECK_EQ(static_call_update(sc_t, to ? tick_b : tick_a),
				 0);
			continue;
		}
#if defined(__aarch64__)
		unsafe_write(bl[to]);
#else
		/* no protocol: the rel32 in place, low half then high half */
		if (pwrite(fd, &rel[to], 2, (off_t)(uintptr_t)(pl + 1)) != 2 ||
		    pwrite(fd, (char *)&rel[to] + 2, 2,
			   (off_t)(uintptr_t)(pl + 3)) != 2)
			CHECK(0);
#endif
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(t[i], NULL);
		total += made[i];
	}
	printf("%s: %ld updates, %ld calls (a %ld, b %ld)\n",
	       unsafe ? "unsafe" : "safe", updates, total, count_a, count_b);
	CHECK(total > 0);
	CHECK_EQ(count_a + count_b, total);
	return sy_test_done(unsafe ? "torture_sc unsafe" : "torture_sc safe");
}

/* ---- kinds: natives and callee-save sites ----------------------------- */

/* c[0] calls made, c[1] c[2] by ntick_a / its native twin ntick_b, c[3]
 * c[4] by ctick_a (through its thunk) / the hand-written ctick_b */
#ifdef __cplusplus
extern "C" {
#endif
void ntick_a(long *c);
void ntick_b(long *c);
void ctick_a(long *c);
void ctick_b(long *c);
#ifdef __cplusplus
}
#endif

__attribute__((noinline)) void ntick_a(long *c)
{
	c[1]++;
}

__attribute__((noinline)) void ntick_b(long *c)
{
	c[2]++;
}
#if defined(__aarch64__)	/* run out of line, in a block near the site */
SWITCHYARD_STATIC_CALL_NATIVE(ntick_b, "ldr x16, [x0, #16]\n\t"
			      "add x16, x16, #1\n\tstr x16, [x0, #16]");
#define NAT_ROOM 12
#else
#define NAT_ROOM 8
SWITCHYARD_STATIC_CALL_NATIVE(ntick_b, "incq 16(%rdi)");
#endif

__attribute__((noinline)) void ctick_a(long *c)
{
	c[3]++;
}
SWITCHYARD_CALLEE_SAVE_THUNK(ctick_a);
#if defined(__aarch64__)
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(ctick_b)
	"ldr x16, [x0, #32]\n\t"
	"add x16, x16, #1\n\t"
	"str x16, [x0, #32]\n\t"
	"ret\n\t"
	".size ctick_b, . - ctick_b");
#else
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(ctick_b)
	"incq 32(%rdi)\n\t"
	"ret\n\t"
	".size ctick_b, . - ctick_b");
#endif

DEFINE_STATIC_CALL_NATIVE(nat_t, ntick_a, NAT_ROOM);
DEFINE_STATIC_CALL_CALLEE_SAVE(cs_t, SWITCHYARD_CALLEE_SAVE(ctick_a));

static volatile long seed[6] = { 11, 22, 33, 44, 55, 66 };
static long bad_regs;

/* values live in registers across the callee-save site, checked after */
__attribute__((noinline)) static void kinds_pass(long *c)
{
	long a = seed[0], b = seed[1], d = seed[2], e = seed[3], f = seed[4];
	long g = seed[5];

	static_call(nat_t)(c);
	static_call(cs_t)(c);
	c[0]++;
	if (a + 2 * b + 3 * d + 4 * e + 5 * f + 6 * g != 11 + 44 + 99 + 176 +
	    275 + 396)
		__atomic_fetch_add(&bad_regs, 1, __ATOMIC_RELAXED);
}

static void *kinds_caller(void *arg)
{
	long *c = (long *)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		kinds_pass(c);
	return NULL;
}

static void *kinds_caller_blocking(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return kinds_caller(arg);
}

static int run_kinds(double seconds)
{
	pthread_t t[CALLERS];
	long c[CALLERS][8], updates = 0, made = 0, n = 0, cs = 0;

	memset(c, 0, sizeof(c));
#if defined(__aarch64__)
	{	/* the native's form: a B (to its block), not a BL */
		uint32_t w = 0;

		CHECK_EQ(static_call_update(nat_t, ntick_b), 0);
		for (struct sy_sc_rec *r = __start_sy_static_call_sites;
		     r < __stop_sy_static_call_sites; r++)
			if (r->meta->key == &STATIC_CALL_KEY(nat_t))
				w = sy_sc_word(r);
		CHECK_EQ(w & 0xfc000000u, 0x14000000u);
		CHECK_EQ(static_call_update(nat_t, ntick_a), 0);
	}
#endif
	for (int i = 0; i < CALLERS; i++)
		pthread_create(&t[i], NULL,
			       i % 2 ? kinds_caller_blocking : kinds_caller,
			       c[i]);
	for (double end = now() + seconds; now() < end; updates++) {
		int to = (int)(updates % 2) ^ 1;

		CHECK_EQ(static_call_update(nat_t, to ? ntick_b : ntick_a), 0);
		CHECK_EQ(static_call_update(cs_t, to ? ctick_b :
					    SWITCHYARD_CALLEE_SAVE(ctick_a)),
			 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(t[i], NULL);
		made += c[i][0];
		n += c[i][1] + c[i][2];
		cs += c[i][3] + c[i][4];
		CHECK_EQ(c[i][1] + c[i][2], c[i][0]);
		CHECK_EQ(c[i][3] + c[i][4], c[i][0]);
		CHECK(c[i][2] > 0 && c[i][4] > 0);	/* the native ran */
	}
	printf("kinds: %ld updates, %ld passes, native site %ld, callee-save "
	       "site %ld, registers lost %ld\n", updates, made, n, cs,
	       bad_regs);
	CHECK(made > 0);
	CHECK_EQ(bad_regs, 0);
	return sy_test_done("torture_sc kinds");
}

/* Run a mode in a child (forked before any thread exists, not exec'ed: under
 * qemu-user a guest cannot exec a binary of its own architecture); its
 * exit status (128 + signal if killed). */
static int child(const char *mode, const char *secs)
{
	int st;
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		int r = !strcmp(mode, "kinds") ? run_kinds(atof(secs)) :
			run(!strcmp(mode, "unsafe"), atof(secs));

		fflush(stdout);
		_exit(r);
	}
	if (p < 0)
		return 127;
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "kinds"))
		return run_kinds(atof(argv[2]));
	if (argc == 3)
		return run(!strcmp(argv[1], "unsafe"), atof(argv[2]));
	if (argc != 2) {
		fprintf(stderr, "usage: torture_sc SECONDS | "
			"safe|unsafe|kinds SECONDS\n");
		return 2;
	}
	if (!sy_sc_patched_mode()) {
		printf("SKIP: sites are not patched here (no rseq)\n");
		return 77;
	}
#ifdef SY__SC_BROKEN
	/* Against a library whose protocol is broken on purpose (and whose
	 * writes go byte by byte, SY__POKE_SLOW): the safe run must fail,
	 * of a torn call (SIGTRAP in the padding) or a miscount. */
	{
		int broken = child("safe", argv[1]);

		bool caught = broken != 0 && broken != 3 && broken != 127;

		printf("broken protocol (SY__SC_BROKEN=%d, %s): safe run "
		       "status %d: %s%s\n", SY__SC_BROKEN,
		       SY__SC_BROKEN == 6 ? "the payloads written before the "
		       "guards close" : "see test_sc_protocol.c", broken,
		       caught ? "caught" : "NOT caught (want a failure)",
		       broken == 128 + SIGTRAP ? " (killed by SIGTRAP: a thread "
		       "ran a torn call into the int3 padding)" : "");
		CHECK(caught);
		return sy_test_done("torture_sc (broken protocol)");
	}
#endif
	int safe = child("safe", argv[1]);
	int unsafe = child("unsafe", argv[1]);
	int kinds = child("kinds", argv[1]);

	printf("safe run: status %d (want 0); unsafe run: status %d "
	       "(want a failure%s); kinds run: status %d (want 0)\n", safe,
	       unsafe, unsafe == 128 + SIGTRAP ? ": killed by SIGTRAP, a "
	       "thread ran a torn call into the int3 padding" : "", kinds);
	CHECK_EQ(safe, 0);
	CHECK_EQ(kinds, 0);
	CHECK(unsafe != 0 && unsafe != 3 && unsafe != 127);
	return sy_test_done("torture_sc");
}
