/* SPDX-License-Identifier: MIT */
/*
 * test_sc_kinds.c - inline natives and callee-save calls.
 *
 * Natives: sc_neg() has a registered native (mov %rdi,%rax; neg %rax: 6
 * bytes). The sites of nat8 (room 8) hold it, the sites of nat5 (room 5) a
 * call; the native was registered after the sites were patched (a
 * constructor runs after the glue), so the live re-patch is what put it
 * there. Updates away and back swap native and call, checked by bytes and
 * by results; bad registrations are refused.
 *
 * Callee-save: the targets write -1 into every caller-saved register but
 * rax. Through a thunk (SWITCHYARD_CALLEE_SAVE_THUNK), or a hand-written
 * callee-save function (which saves the one register it uses), a site
 * that keeps values in those registers across the call must get them back.
 * An ordinary target at a callee-save site must leave the site on its
 * detour (which saves them): checked by bytes and by the same results.
 * keep_live() is what would fail if the registers were not preserved: its
 * negative control runs the clobbering target through an asm call that
 * declares no clobbers, and must see a register change.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sy_sc_sites.h"
#include "sy_test.h"

#ifdef __cplusplus
extern "C" {
#endif
long sc_neg(long x);
long sc_twice(long x);
long cs_clobber(long x);
long cs_hand(long x);
#ifdef __cplusplus
}
#endif

__attribute__((noinline)) long sc_neg(long x) { return -x; }
__attribute__((noinline)) long sc_twice(long x) { return 2 * x; }

#if defined(__x86_64__)
SWITCHYARD_STATIC_CALL_NATIVE(sc_neg, "mov %rdi, %rax\n\tneg %rax");
#elif defined(__aarch64__)	/* 8 bytes: room 8 holds it, room 5 does not */
SWITCHYARD_STATIC_CALL_NATIVE(sc_neg, "mvn x0, x0\n\tadd x0, x0, #1");
#endif

DEFINE_STATIC_CALL_NATIVE(nat8, sc_neg, 8);
DEFINE_STATIC_CALL(nat5, sc_neg);

#if defined(__x86_64__)
/* writes -1 into every caller-saved general register but rax */
#define CLOBBER_ALL                                                            \
	__asm__ volatile("mov $-1, %%rcx\n\tmov $-1, %%rdx\n\t"                \
			 "mov $-1, %%rsi\n\tmov $-1, %%rdi\n\t"                \
			 "mov $-1, %%r8\n\tmov $-1, %%r9\n\t"                  \
			 "mov $-1, %%r10\n\tmov $-1, %%r11"                    \
			 ::: "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",    \
			 "r11")
#elif defined(__aarch64__)
/* writes -1 into every caller-saved general register but x0, x16, x17 */
#define CLOBBER_ALL                                                            \
	__asm__ volatile("mov x1, #-1\n\tmov x2, #-1\n\tmov x3, #-1\n\t"       \
			 "mov x4, #-1\n\tmov x5, #-1\n\tmov x6, #-1\n\t"       \
			 "mov x7, #-1\n\tmov x8, #-1\n\tmov x9, #-1\n\t"       \
			 "mov x10, #-1\n\tmov x11, #-1\n\tmov x12, #-1\n\t"    \
			 "mov x13, #-1\n\tmov x14, #-1\n\tmov x15, #-1\n\t"    \
			 "mov x18, #-1"                                        \
			 ::: "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8",   \
			 "x9", "x10", "x11", "x12", "x13", "x14", "x15", "x18")
#else
#define CLOBBER_ALL ((void)0)
#endif

__attribute__((noinline)) long cs_clobber(long x)
{
	CLOBBER_ALL;
	return x + 7;
}
SWITCHYARD_CALLEE_SAVE_THUNK(cs_clobber);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* hand-written: saves the one register it uses besides rax */
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(cs_hand)
	"push %rdx\n\t"
	"lea 9(%rdi), %rdx\n\t"
	"mov %rdx, %rax\n\t"
	"pop %rdx\n\t"
	"ret\n\t"
	".size cs_hand, . - cs_hand");
#define CS_HAND cs_hand
#define CS_HAND_ADD 9
#elif defined(__aarch64__)
/* hand-written: saves the one register it uses besides x0 */
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(cs_hand)
	"str x9, [sp, #-16]!\n\t"
	"add x9, x0, #9\n\t"
	"mov x0, x9\n\t"
	"ldr x9, [sp], #16\n\t"
	"ret\n\t"
	".size cs_hand, . - cs_hand");
#define CS_HAND cs_hand
#define CS_HAND_ADD 9
#else
#define CS_HAND cs_clobber	/* no hand-written code on this arch */
#define CS_HAND_ADD 7
#endif

DEFINE_STATIC_CALL_CALLEE_SAVE(csc, SWITCHYARD_CALLEE_SAVE(cs_clobber));

static volatile long in[8];

/* Values live across the site in (on x86-64, caller-saved) registers. */
__attribute__((noinline)) static long keep_live(long x)
{
	long a = in[0], b = in[1], c = in[2], d = in[3], e = in[4], f = in[5];
	long g = in[6], h = in[7], r;

	r = static_call(csc)(x);
	return r + a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

static long want_live(long r)
{
	long s = r;

	for (int i = 0; i < 8; i++)
		s += (i + 1) * in[i];
	return s;
}

__attribute__((noinline)) static long call_nat8(long x)
{
	return static_call(nat8)(x);
}

__attribute__((noinline)) static long call_nat5(long x)
{
	return static_call(nat5)(x);
}

#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
/* AArch64: a site is one word; a native runs out of line, in a block near
 * the site (its words, then a B back after the site) that the site
 * branches to. */
#define NATIVE_REFUSED -EEXIST
static const uint32_t native_neg[2] = {
	0xaa2003e0u,	/* mvn x0, x0 */
	0x91000400u,	/* add x0, x0, #1 */
};

static const struct sy_sc_rec *rec_of(const struct static_call_key *key)
{
	for (const struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (r->meta->key == key)
			return r;
	return NULL;
}

/* the site is a B to a block that holds the native, then a B back to
 * the word after the site */
static void check_native(struct static_call_key *key)
{
	const struct sy_sc_rec *r = rec_of(key);
	uint32_t w, back;
	const uint32_t *blk;
	uintptr_t site;

	CHECK(r != NULL);
	if (!r || !sy_sc_patched_mode())
		return;
	w = sy_sc_word(r);
	site = (uintptr_t)sy_sc_code(r);
	CHECK_EQ(w & 0xfc000000u, 0x14000000u);	/* B */
	if ((w & 0xfc000000u) != 0x14000000u)
		return;
	blk = (const uint32_t *)(site + (uintptr_t)((intptr_t)((int32_t)
					(w << 6) >> 6) * 4));
	CHECK(!memcmp(blk, native_neg, sizeof(native_neg)));
	back = blk[2];
	CHECK_EQ(back & 0xfc000000u, 0x14000000u);
	CHECK((uintptr_t)&blk[2] + (uintptr_t)((intptr_t)((int32_t)
		(back << 6) >> 6) * 4) == site + 4);
}

static void check_call(struct static_call_key *key, unsigned room, void *f)
{
	const struct sy_sc_rec *r = rec_of(key);

	(void)room;
	CHECK(r != NULL);
	if (r && sy_sc_patched_mode())
		CHECK(sy_sc_calls(r, (uintptr_t)f));
}

static void check_parked(struct static_call_key *key)
{
	const struct sy_sc_rec *r = rec_of(key);

	CHECK(r != NULL);
	if (r)	/* BL to the callee-save veneer */
		CHECK(sy_sc_bl_dest(r) == sy_sc_veneer(r));
}

/* the control: the clobbering target called with x10 declared kept */
static long unprotected_call(long x)
{
	register long x0 __asm__("x0") = x;
	register long x10v __asm__("x10") = 12345;

	__asm__ volatile("bl cs_clobber"
			 : "+r"(x0), "+r"(x10v)
			 : : "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8",
			   "x9", "x11", "x12", "x13", "x14", "x15", "x16",
			   "x17", "x18", "x30", "memory", "cc");
	return x10v;
}
#elif defined(SY__ARCH_HAVE_STATIC_CALL)
#define NATIVE_REFUSED -EEXIST
#define SC_GUARD SY_SC_GUARD
#define SC_PAYLOAD SY_SC_PAYLOAD
#define patched_mode sy_sc_patched_mode
#define site_of sy_sc_site_of

static const uint8_t native_neg[6] = { 0x48, 0x89, 0xf8, 0x48, 0xf7, 0xd8 };

/* the site (room 8) holds NOP2 and the native; or a call to f after NOPs */
static void check_native(struct static_call_key *key)
{
	const uint8_t *c = site_of(key);

	CHECK(c != NULL);
	if (!c || !patched_mode())
		return;
	CHECK_EQ(c[SC_GUARD], 0xa9);
	CHECK(!memcmp(c + SC_PAYLOAD, "\x66\x90", 2));	/* NOPs first */
	CHECK(!memcmp(c + SC_PAYLOAD + 2, native_neg, 6));
}

static void check_call(struct static_call_key *key, unsigned room, void *f)
{
	const uint8_t *c = site_of(key);
	int32_t rel;

	CHECK(c != NULL);
	if (!c || !patched_mode())
		return;
	CHECK_EQ(c[SC_GUARD], 0xa9);
	CHECK_EQ(c[SC_PAYLOAD + room - 5], 0xe8);
	memcpy(&rel, c + SC_PAYLOAD + room - 4, 4);
	CHECK((uintptr_t)(c + SC_PAYLOAD + room) + rel == (uintptr_t)f);
}

static void check_parked(struct static_call_key *key)
{
	const uint8_t *c = site_of(key);

	CHECK(c != NULL);
	if (c)
		CHECK_EQ(c[SC_GUARD], 0xe9);	/* JMP32 to the detour */
}

/* the control: the clobbering target called with nothing declared lost */
static long unprotected_call(long x)
{
	register long rdi __asm__("rdi") = x;
	register long r10v __asm__("r10") = 12345;
	long ret;

	__asm__ volatile("mov %%rsp, %%rbx\n\t"
			 "sub $128, %%rsp\n\tand $-16, %%rsp\n\t"
			 "call cs_clobber\n\t"
			 "mov %%rbx, %%rsp"
			 : "=a"(ret), "+r"(rdi), "+r"(r10v)
			 : : "rbx", "memory", "cc", "rcx", "rdx", "rsi", "r8",
			   "r9", "r11", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
			   "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
			   "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	(void)ret;
	return r10v;
}
#else
#define check_native(key) ((void)(key))
#define check_call(key, room, f) ((void)(key))
#define check_parked(key) ((void)(key))
#endif

int main(void)
{
	static const uint8_t nop[1] = { 0x90 };

	for (int i = 0; i < 8; i++)
		in[i] = 1000 + 17 * i;

	/* natives */
	CHECK_EQ(call_nat8(5), -5);
	CHECK_EQ(call_nat5(5), -5);
	check_native(&STATIC_CALL_KEY(nat8));
	check_call(&STATIC_CALL_KEY(nat5), 5, (void *)sc_neg);
	CHECK_EQ(static_call_update(nat8, sc_twice), 0);
	CHECK_EQ(call_nat8(5), 10);
	check_call(&STATIC_CALL_KEY(nat8), 8, (void *)sc_twice);
	CHECK_EQ(static_call_update(nat8, sc_neg), 0);
	CHECK_EQ(call_nat8(6), -6);
	check_native(&STATIC_CALL_KEY(nat8));
	CHECK_EQ(switchyard_static_call_native(NULL, nop, 1), -EINVAL);
	CHECK_EQ(switchyard_static_call_native((void (*)(void))sc_twice, nop,
					       16), -EINVAL);
#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
	/* whole words only; other code for sc_neg */
	CHECK_EQ(switchyard_static_call_native((void (*)(void))sc_neg, nop, 1),
		 -EINVAL);
	CHECK_EQ(switchyard_static_call_native((void (*)(void))sc_neg,
					       native_neg, 4), NATIVE_REFUSED);
#elif defined(SY__ARCH_HAVE_STATIC_CALL)
	CHECK_EQ(switchyard_static_call_native((void (*)(void))sc_neg, nop, 1),
		 NATIVE_REFUSED);
#endif
	CHECK_EQ(call_nat8(7), -7);

	/* callee-save: thunk, hand-written, ordinary (parked) */
	CHECK_EQ(keep_live(1), want_live(8));
	check_call(&STATIC_CALL_KEY(csc), 5,
		   (void *)SWITCHYARD_CALLEE_SAVE(cs_clobber));
	CHECK_EQ(static_call_update(csc, CS_HAND), 0);
	CHECK_EQ(keep_live(1), want_live(1 + CS_HAND_ADD));
	check_call(&STATIC_CALL_KEY(csc), 5, (void *)CS_HAND);
	CHECK_EQ(static_call_update(csc, cs_clobber), 0);
	CHECK_EQ(keep_live(1), want_live(8));
	check_parked(&STATIC_CALL_KEY(csc));
	CHECK_EQ(static_call_update(csc, SWITCHYARD_CALLEE_SAVE(cs_clobber)), 0);
	CHECK_EQ(keep_live(2), want_live(9));
#ifdef SY__ARCH_HAVE_STATIC_CALL
	CHECK(unprotected_call(1) != 12345);	/* the control */
#endif
	return sy_test_done("sc_kinds");
}
