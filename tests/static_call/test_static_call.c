/* SPDX-License-Identifier: MIT */
/*
 * test_static_call.c - static calls (<switchyard/static_call.h>): the
 * kernel self-test's sequence in our own code (a key with a target, updated
 * to another and back, then to NULL and back), RET0 and cond keys, six
 * arguments, pointer and floating-point returns, the update's type check
 * (at compile time: see compile_fail.c), and updates while threads call
 * through the key, every call counted per target (none lost, none doubled,
 * none to a third place). Compiled as C and, from test_static_call_cxx.cpp,
 * as C++.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#include "sy_sc_sites.h"
#include "sy_test.h"

#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
/*
 * The sites (AArch64): one word each, after every update the fastest
 * call of the key's target (a BL to it, or to a stub near the site for
 * one out of reach such as the library's __static_call_return0; a NOP for
 * NULL); with SWITCHYARD_STATIC_CALL=detour, the BL to the veneer.
 */
static int check_sites(struct static_call_key *key)
{
	int n = 0;

	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++) {
		if (r->meta->key != key)
			continue;
		n++;
		if (!sy_sc_patched_mode())
			CHECK(sy_sc_bl_dest(r) == sy_sc_veneer(r));
		else
			CHECK(sy_sc_calls(r, (uintptr_t)key->func));
	}
	return n;
}
#define CHECK_SITES(key) CHECK(check_sites(key) >= 1)
#define patched_mode sy_sc_patched_mode
#elif defined(SY__ARCH_HAVE_STATIC_CALL)
/*
 * The sites: this object's records (the glue's section), and what each
 * site of a key must hold for the key's target: with rseq, the guard
 * TEST32 (a9) and a direct call to the target (e8 rel32), a NOP5 for NULL,
 * xor %eax,%eax for RET0, the guard JMP32 to the detour (e9) for a target
 * out of reach; without (SWITCHYARD_STATIC_CALL=detour, valgrind), the
 * guard JMP32. Offsets: src/arch/x86_64/sy_arch.h.
 */
#define SC_ARM_OP SY_SC_ARM_OP
#define SC_GUARD SY_SC_GUARD
#define SC_PAYLOAD SY_SC_PAYLOAD
#define SC_END (SY_SC_PAYLOAD + 5)
#define patched_mode sy_sc_patched_mode

/* Check every site of key: returns the number of sites. */
static int check_sites(struct static_call_key *key)
{
	int n = 0;

	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++) {
		const uint8_t *c = sy_sc_code(r);
		uintptr_t f = (uintptr_t)key->func;
		int32_t rel;

		if (r->meta->key != key)
			continue;
		n++;
		if (!patched_mode()) {
			CHECK_EQ(c[SC_GUARD], 0xe9);
			continue;
		}
		CHECK_EQ(c[SC_ARM_OP], 0xc7);	/* the arm stores */
		CHECK_EQ(c[SC_GUARD], 0xa9);	/* the guard lets the payload run */
		memcpy(&rel, c + SC_PAYLOAD + 1, 4);
		if (!f)
			CHECK(!memcmp(c + SC_PAYLOAD, "\x0f\x1f\x44\x00\x00", 5));
		else if (f == (uintptr_t)__static_call_return0)
			CHECK(!memcmp(c + SC_PAYLOAD, "\x0f\x1f\x00\x31\xc0", 5));
		else
			CHECK(c[SC_PAYLOAD] == 0xe8 &&
			      (uintptr_t)(c + SC_END) + rel == f);
	}
	return n;
}
#define CHECK_SITES(key) CHECK(check_sites(key) >= 1)
#else	/* no patched sites in this build: nothing to look at */
#define CHECK_SITES(key) ((void)(key))
#endif

static int func_a(int x) { return x + 1; }
static int func_b(int x) { return x + 2; }

DEFINE_STATIC_CALL(sc_selftest, func_a);

static void test_selftest_sequence(void)
{
	static const struct {
		int (*func)(int);
		int val, expect;
	} seq[] = {
		{ NULL, 2, 3 },		/* as defined: func_a */
		{ func_b, 2, 4 },
		{ func_a, 2, 3 },
		{ func_b, 7, 9 },
		{ func_a, 7, 8 },
	};

	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		if (seq[i].func)
			CHECK_EQ(static_call_update(sc_selftest, seq[i].func), 0);
		CHECK_EQ(static_call(sc_selftest)(seq[i].val), seq[i].expect);
		CHECK(static_call_query(sc_selftest) ==
		      (seq[i].func ? seq[i].func : func_a));
		CHECK_SITES(&STATIC_CALL_KEY(sc_selftest));
	}
	/* NULL, then back: query says so; static_call_cond() is for void */
	CHECK_EQ(static_call_update(sc_selftest, NULL), 0);
	CHECK(static_call_query(sc_selftest) == NULL);
	CHECK_SITES(&STATIC_CALL_KEY(sc_selftest));
	CHECK_EQ(static_call_update(sc_selftest, func_a), 0);
	CHECK_EQ(static_call(sc_selftest)(1), 2);
}

/* cond: a void call with no target does nothing */
static int hits;
static void hook(int x) { hits += x; }
DEFINE_STATIC_CALL_NULL(sc_hook, hook);

static void test_cond(void)
{
	hits = 0;
	CHECK(static_call_query(sc_hook) == NULL);
	static_call_cond(sc_hook)(5);
	CHECK_EQ(hits, 0);
	CHECK_EQ(static_call_update(sc_hook, hook), 0);
	static_call_cond(sc_hook)(5);
	static_call(sc_hook)(1);
	CHECK_EQ(hits, 6);
	CHECK_EQ(static_call_update(sc_hook, NULL), 0);
	static_call_cond(sc_hook)(5);
	CHECK_EQ(hits, 6);
}

/* RET0: returns 0 (or NULL) whatever the arguments */
static long six(long a, long b, long c, long d, long e, long f)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}
DEFINE_STATIC_CALL_RET0(sc_six, six);

static const char *name_of(int i) { return i ? "one" : "zero"; }
DEFINE_STATIC_CALL_RET0(sc_name, name_of);

#ifdef __cplusplus	/* C refuses a double parameter at compile time
			   (compile_fail.c); C++ calls it indirectly */
static double half(double x) { return x / 2; }
DEFINE_STATIC_CALL(sc_half, half);
#endif

static void test_ret0_and_signatures(void)
{
	CHECK_EQ(static_call(sc_six)(1, 2, 3, 4, 5, 6), 0);
	CHECK((void (*)(void))static_call_query(sc_six) ==
	      (void (*)(void))__static_call_return0);
	CHECK_EQ(static_call_update(sc_six, six), 0);
	CHECK_EQ(static_call(sc_six)(1, 2, 3, 4, 5, 6), 91);
	CHECK(static_call(sc_name)(1) == NULL);
	CHECK_EQ(static_call_update(sc_name, name_of), 0);
	CHECK(strcmp(static_call(sc_name)(1), "one") == 0);
#ifdef __cplusplus
	CHECK(static_call(sc_half)(5.0) == 2.5);
#endif
}

/* Updates while threads call: every call lands on a or b, counted. */
#define CALLERS 2
static long count_a, count_b;
static void tick_a(long *n) { (*n)++; __atomic_fetch_add(&count_a, 1, __ATOMIC_RELAXED); }
static void tick_b(long *n) { (*n)++; __atomic_fetch_add(&count_b, 1, __ATOMIC_RELAXED); }
DEFINE_STATIC_CALL(sc_tick, tick_a);
static int stop;

static void *caller(void *arg)
{
	long *made = (long *)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		static_call(sc_tick)(made);
	return NULL;
}

static void test_update_while_calling(void)
{
	pthread_t t[CALLERS];
	long made[CALLERS] = { 0 }, total = 0;
	int updates = 0;

	for (int i = 0; i < CALLERS; i++)
		pthread_create(&t[i], NULL, caller, &made[i]);
	/* the callers are calling before the updates start, and the updates
	 * go on until both made calls meanwhile (a loaded machine may not
	 * schedule them at all during 20,000 updates) */
	while (__atomic_load_n(&count_a, __ATOMIC_RELAXED) < 1000)
		sched_yield();
	long before = __atomic_load_n(&count_a, __ATOMIC_RELAXED) +
		      __atomic_load_n(&count_b, __ATOMIC_RELAXED);

	for (; updates < 20000 ||
	       (__atomic_load_n(&count_a, __ATOMIC_RELAXED) +
		__atomic_load_n(&count_b, __ATOMIC_RELAXED) < before + 1000 &&
		updates < 100000000);
	     updates++)
		CHECK_EQ(static_call_update(sc_tick, updates % 2 ? tick_a : tick_b), 0);
	if (updates % 2)	/* end on tick_a */
		CHECK_EQ(static_call_update(sc_tick, tick_a), 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(t[i], NULL);
		total += made[i];
	}
	CHECK(total > 0);
	CHECK_EQ(count_a + count_b, total);
	CHECK(static_call_query(sc_tick) == tick_a);
}

#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
#include <sys/mman.h>

static int ref_a(int x) { return x + 10; }
static int ref_b(int x) { return x + 20; }
DEFINE_STATIC_CALL(sc_refuse, ref_a);

__attribute__((noinline)) static int call_refuse(int x)
{
	return static_call(sc_refuse)(x);
}

/* Store w at the site of r (an mprotect window: under qemu-user a write
 * through /proc/self/mem is not seen by the code), with the cache
 * maintenance. Only while no thread runs the site. */
static void poke_word(const struct sy_sc_rec *r, uint32_t w)
{
	uintptr_t c = (uintptr_t)sy_sc_code(r), pg = c & ~(uintptr_t)4095;

	CHECK_EQ(mprotect((void *)pg, 4096, PROT_READ | PROT_WRITE |
			  PROT_EXEC), 0);
	__atomic_store_n((uint32_t *)c, w, __ATOMIC_RELAXED);
	CHECK_EQ(mprotect((void *)pg, 4096, PROT_READ | PROT_EXEC), 0);
	__builtin___clear_cache((char *)c, (char *)c + 4);
}

/*
 * A site holding a word the library did not write is refused, never
 * overwritten: the update fails with -EFAULT and changes nothing (the key
 * keeps its target). A debugger's BRK over a site whose word must change
 * fails it with -EBUSY, nothing changed; an update that leaves the hidden
 * word as it is succeeds. Once the site holds its word again, updates
 * patch it.
 */
static void test_refused_payload(void)
{
	struct sy_sc_rec *r = NULL;
	uint32_t saved;

	if (!patched_mode())
		return;
	CHECK_EQ(call_refuse(1), 11);
	for (struct sy_sc_rec *p = __start_sy_static_call_sites;
	     p < __stop_sy_static_call_sites; p++)
		if (p->meta->key == &STATIC_CALL_KEY(sc_refuse))
			r = p;
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK(sy_sc_calls(r, (uintptr_t)ref_a));
	saved = sy_sc_word(r);
	poke_word(r, 0x00000001u);			/* udf #1 */
	CHECK_EQ(static_call_update(sc_refuse, ref_b), -EFAULT);
	CHECK_EQ(sy_sc_word(r), 0x00000001u);		/* not overwritten */
	CHECK(static_call_query(sc_refuse) == ref_a);	/* nothing changed */
	poke_word(r, 0xd4200000u);			/* brk #0 */
	CHECK_EQ(static_call_update(sc_refuse, ref_b), -EBUSY);
	CHECK(static_call_query(sc_refuse) == ref_a);
	CHECK_EQ(static_call_update(sc_refuse, ref_a), 0);	/* no change */
	CHECK_EQ(sy_sc_word(r), 0xd4200000u);
	poke_word(r, saved);				/* "delete" */
	CHECK_EQ(static_call_update(sc_refuse, ref_b), 0);
	CHECK(sy_sc_calls(r, (uintptr_t)ref_b));
	CHECK_EQ(call_refuse(1), 21);
}

/*
 * What an update costs on AArch64, counted by the engine: one batch
 * (one word per site of the key) and one core sync; none for the target
 * the key has; two of each the first time a far target needs its stub
 * (the stub, synced before any site can branch to it; then the sites).
 */
static int cnt_a(int x) { return x + 30; }
static int cnt_b(int x) { return x + 40; }
DEFINE_STATIC_CALL(sc_cnt, cnt_a);

__attribute__((noinline)) static int call_cnt(int x)
{
	return static_call(sc_cnt)(x) + static_call(sc_cnt)(x + 1);
}

static void stats_delta(struct switchyard_stats *before, uint64_t *batches,
			uint64_t *syncs, uint64_t *sites)
{
	struct switchyard_stats now;

	CHECK_EQ(switchyard_get_stats(&now), 0);
	*batches = now.patch_batches - before->patch_batches;
	*syncs = now.sync_calls - before->sync_calls;
	*sites = now.patched_sites - before->patched_sites;
	*before = now;
}

static void test_update_counts(void)
{
	struct switchyard_stats st;
	uint64_t b, y, n;
	int sites = 0;

	if (!patched_mode())
		return;
	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		sites += r->meta->key == &STATIC_CALL_KEY(sc_cnt);
	CHECK_EQ(call_cnt(1), 31 + 32);
	CHECK_EQ(switchyard_get_stats(&st), 0);
	CHECK_EQ(static_call_update(sc_cnt, cnt_b), 0);
	stats_delta(&st, &b, &y, &n);
	printf("an update of %d sites: %llu batch(es), %llu sync(s), %llu "
	       "site(s) written\n", sites, (unsigned long long)b,
	       (unsigned long long)y, (unsigned long long)n);
	CHECK_EQ(b, 1);
	CHECK_EQ(y, 1);
	CHECK_EQ(n, (uint64_t)sites);
	CHECK_EQ(call_cnt(1), 41 + 42);
	CHECK_EQ(static_call_update(sc_cnt, cnt_b), 0);	/* the same */
	stats_delta(&st, &b, &y, &n);
	CHECK_EQ(b, 0);
	CHECK_EQ(y, 0);
	/* __static_call_return0 lies in the library, beyond reach of this
	 * program's text here (a stub) or not: 2 batches and syncs or 1 */
	CHECK_EQ(static_call_update(sc_cnt,
				    (int (*)(int))(void (*)(void))
				    __static_call_return0), 0);
	stats_delta(&st, &b, &y, &n);
	CHECK(b == y && (b == 1 || b == 2));
	printf("to a target in the library: %llu batch(es), %llu sync(s)\n",
	       (unsigned long long)b, (unsigned long long)y);
	CHECK_EQ(call_cnt(1), 0);
	CHECK_EQ(static_call_update(sc_cnt, cnt_a), 0);
	CHECK_EQ(call_cnt(1), 31 + 32);
}

/*
 * A target beyond a BL's reach (+-128 MiB): a function copied into a page
 * mapped 4 GiB and more away from this program (under qemu-user the
 * libraries lie within reach of the program). Its sites call it through a
 * stub near them, made and synced before any site branches to it: the
 * first update costs two batches and two syncs, the next one to it one.
 */
DEFINE_STATIC_CALL(sc_far, cnt_a);

__attribute__((noinline)) static int call_far(int x)
{
	return static_call(sc_far)(x);
}

static void test_far_target(void)
{
	static const uint32_t code[2] = {
		0x11001400u,	/* add w0, w0, #5 */
		0xd65f03c0u,	/* ret */
	};
	struct switchyard_stats st;
	uint64_t b, y, n;
	void *p = MAP_FAILED;
	int (*far)(int);

	if (!patched_mode())
		return;
	for (uintptr_t d = 4ul << 30; d < (64ul << 30) && p == MAP_FAILED;
	     d += 1ul << 30) {
		uintptr_t hint = ((uintptr_t)call_far + d) & ~(uintptr_t)4095;

		p = mmap((void *)hint, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		if (p != MAP_FAILED && (uintptr_t)p != hint) {
			munmap(p, 4096);
			p = MAP_FAILED;
		}
	}
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	memcpy(p, code, sizeof(code));
	CHECK_EQ(mprotect(p, 4096, PROT_READ | PROT_EXEC), 0);
	__builtin___clear_cache((char *)p, (char *)p + sizeof(code));
	far = (int (*)(int))p;
	CHECK_EQ(far(1), 6);
	CHECK_EQ(call_far(1), 31);
	CHECK_EQ(switchyard_get_stats(&st), 0);
	CHECK_EQ(static_call_update(sc_far, far), 0);
	stats_delta(&st, &b, &y, &n);
	CHECK_EQ(b, 2);		/* the stub, then the sites */
	CHECK_EQ(y, 2);
	CHECK_SITES(&STATIC_CALL_KEY(sc_far));	/* through the stub */
	CHECK_EQ(call_far(1), 6);
	CHECK_EQ(static_call_update(sc_far, cnt_a), 0);
	CHECK_EQ(call_far(1), 31);
	CHECK_EQ(static_call_update(sc_far, far), 0);	/* the stub exists */
	stats_delta(&st, &b, &y, &n);
	CHECK_EQ(b, 2);		/* to cnt_a and back: one batch each */
	CHECK_EQ(y, 2);
	CHECK_EQ(call_far(2), 7);
	CHECK_EQ(static_call_update(sc_far, cnt_a), 0);
}

static void test_cc_in_rel(void)
{
	test_update_counts();
	test_far_target();
}
#elif defined(SY__ARCH_HAVE_STATIC_CALL)
/* A payload holding unexpected bytes is refused, never overwritten; the
 * update still takes effect, through the site's detour. */
static int ref_a(int x) { return x + 10; }
static int ref_b(int x) { return x + 20; }
DEFINE_STATIC_CALL(sc_refuse, ref_a);

__attribute__((noinline)) static int call_refuse(int x)
{
	return static_call(sc_refuse)(x);
}

static void test_refused_payload(void)
{
	const uint8_t *c;
	uint8_t bad[5] = { 0xcc, 0xcc, 0xcc, 0xcc, 0xcc };
	int fd;

	if (!patched_mode())
		return;
	CHECK_EQ(call_refuse(1), 11);
	c = sy_sc_site_of(&STATIC_CALL_KEY(sc_refuse));
	CHECK(c != NULL);
	if (!c)
		return;
	fd = open("/proc/self/mem", O_RDWR);
	CHECK(fd >= 0);
	/* the guard first (the site must not run the payload meanwhile) */
	CHECK(pwrite(fd, "\xe9", 1, (off_t)(uintptr_t)(c + SC_GUARD)) == 1);
	CHECK(pwrite(fd, bad, 5, (off_t)(uintptr_t)(c + SC_PAYLOAD)) == 5);
	close(fd);
	CHECK_EQ(static_call_update(sc_refuse, ref_b), 0);
	CHECK(!memcmp(c + SC_PAYLOAD, bad, 5));	/* not overwritten */
	CHECK_EQ(c[SC_GUARD], 0xe9);		/* parked on its detour */
	CHECK_EQ(call_refuse(1), 21);		/* the new target */
}

/*
 * A target whose call puts 0xcc, int3's opcode, in the site's rel32: data,
 * not a debugger's breakpoint. Such a site must be patched like any other
 * (before the fix, the payload with a cc operand was taken for one under a
 * breakpoint and every update parked the site on its detour; 1 site in 64,
 * seen in a Debug build). sy_rets: 256 one-byte functions (ret), so that
 * some target gives each byte value in the rel32's low byte.
 */
__asm__(".pushsection .text.sy_rets,\"ax\",@progbits\n"
	"sy_rets:\n\t.fill 256,1,0xc3\n"
	".popsection");
#ifdef __cplusplus
extern "C"
#endif
void sy_rets(void) __asm__("sy_rets");
static void ret_nothing(void)
{
	__asm__ volatile("");
}
DEFINE_STATIC_CALL(sc_ccrel, ret_nothing);

__attribute__((noinline)) static void call_ccrel(void)
{
	static_call(sc_ccrel)();
}

static void test_cc_in_rel(void)
{
	const uint8_t *c = sy_sc_site_of(&STATIC_CALL_KEY(sc_ccrel));
	uintptr_t base = (uintptr_t)sy_rets, end;

	if (!patched_mode() || !c)
		return;
	end = (uintptr_t)(c + SC_END);
	for (unsigned b = 0; b < 4; b++) {	/* cc in each byte it can */
		uintptr_t i = ((0xccu << (8 * b)) + end - base) & 0xff;
		int32_t rel;
		void (*f)(void);

		if (b) {	/* higher bytes: only where the distance has it */
			uintptr_t d = base - end;

			if (((d >> (8 * b)) & 0xff) != 0xcc)
				continue;
			i = 0;
		}
		f = (void (*)(void))(base + i);
		CHECK_EQ(static_call_update(sc_ccrel, f), 0);
		memcpy(&rel, c + SC_PAYLOAD + 1, 4);
		if (!b)
			CHECK_EQ((uint8_t)rel, 0xcc);
		CHECK_SITES(&STATIC_CALL_KEY(sc_ccrel));
		call_ccrel();
		CHECK_EQ(static_call_update(sc_ccrel, ret_nothing), 0);
		CHECK_SITES(&STATIC_CALL_KEY(sc_ccrel));
	}
}
#else
static void test_refused_payload(void)
{
}

static void test_cc_in_rel(void)
{
}
#endif

int main(void)
{
	test_selftest_sequence();
	test_cond();
	test_ret0_and_signatures();
	test_update_while_calling();
	test_refused_payload();
	test_cc_in_rel();
	return sy_test_done("static_call");
}
