/* SPDX-License-Identifier: MIT */
/*
 * test_runtime_const.c - run-time constants (<switchyard/runtime_const.h>):
 * before init the sites read the variables (and follow them); init writes
 * the immediates while two threads read the sites (every read must give
 * the one value: a torn immediate would not), turns the guards, and the
 * sites keep the value when the variable changes afterwards; a second init
 * with another value is refused; a library opened afterwards has its sites
 * patched before its code runs. The sites are read as instructions: x86-64
 * JMP32/TEST32 and the immediate's bytes; AArch64 B/NOP and the MOVZ/MOVK
 * halves or LSR's shift, decoded.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "sy_test.h"

unsigned long rc_base = 0x1000;
unsigned int rc_limit = 77;
unsigned int rc_shift = 4;

struct rc_rec {
	const void *sym;
	int32_t code;
	uint8_t end, size;
	uint16_t pad;
};
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
extern struct rc_rec __start_sy_runtime_const[], __stop_sy_runtime_const[];
#endif

/* File-static variables, never given to runtime_const_init(): their sites
 * read them out of line for good. gcc names statics as a section anchor
 * plus an offset: an out-of-line read through the GOT lost the offset on
 * AArch64 (every one of them read the first's value). */
static unsigned long rc_sbase = 0x5000;
static unsigned int rc_slimit = 55;
static unsigned int rc_sshift = 2;

__attribute__((noinline)) static unsigned long read_statics(unsigned int x)
{
	return runtime_const_ptr(rc_sbase) + runtime_const_u32(rc_slimit) +
	       runtime_const_shift_right_32(x, rc_sshift);
}

__attribute__((noinline)) static unsigned long read_all(unsigned int x)
{
	return runtime_const_ptr(rc_base) + runtime_const_u32(rc_limit) +
	       runtime_const_shift_right_32(x, rc_shift);
}

static int stop, bad;

static void *reader(void *arg)
{
	unsigned long want = *(unsigned long *)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		if (read_all(0x100) != want)
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
	return NULL;
}

#if defined(__aarch64__)
static uint32_t word(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/* the guard: 1 a NOP (open), 0 the B to the out-of-line read, -1 else */
static int guard_open(const uint8_t *c)
{
	uint32_t w = word(c);

	return w == 0xd503201fu ? 1 : (w & 0xfc000000u) == 0x14000000u ? 0 : -1;
}

/*
 * The immediate after the guard, decoded from the instructions (MOVZ and
 * MOVK of 16-bit halves, in order, into one register; LSR #imm, which is
 * UBFM Wd, Wn, #imm, #31); ~0 if they are not those.
 */
static uint64_t site_imm(const uint8_t *c, unsigned end, unsigned size)
{
	uint64_t v = 0;
	uint32_t w = word(c + 4);

	if (size == 1)
		return (w & 0xffc0fc00u) == 0x53007c00u ? w >> 16 & 63 : ~0ull;
	for (unsigned i = 0; 4 + 4 * i < end; i++) {
		uint32_t x = word(c + 4 + 4 * i);
		/* MOVZ first, then MOVK; X for 8 bytes, W for 4 */
		uint32_t op = (size == 8 ? 0x80000000u : 0) |
			      (i ? 0x72800000u : 0x52800000u);

		if ((x & 0xff800000u) != op || (x >> 21 & 3) != i ||
		    (x & 31) != (w & 31))
			return ~0ull;
		v |= (uint64_t)(x >> 5 & 0xffff) << 16 * i;
	}
	return v;
}
#else
/* the guard: 1 TEST32 (open), 0 JMP32 to the out-of-line read, -1 else */
static int guard_open(const uint8_t *c)
{
	return c[0] == 0xa9 ? 1 : c[0] == 0xe9 ? 0 : -1;
}

/* the immediate: the bytes that end the instruction */
static uint64_t site_imm(const uint8_t *c, unsigned end, unsigned size)
{
	uint64_t imm = 0;

	memcpy(&imm, c + end - size, size);
	return imm;
}
#endif

/* every site of sym: the guard is open and the immediate holds v; or
 * (v == ~0: before init) the guard jumps out of line */
static void check_sites(const void *sym, uint64_t v)
{
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
	int n = 0;

	for (struct rc_rec *r = __start_sy_runtime_const;
	     r < __stop_sy_runtime_const; r++) {
		const uint8_t *c = (const uint8_t *)&r->code + r->code;

		if (r->sym != sym)
			continue;
		n++;
		if (v == ~0ull) {
			CHECK_EQ(guard_open(c), 0);
			continue;
		}
		CHECK_EQ(guard_open(c), 1);
		CHECK_EQ(site_imm(c, r->end, r->size),
			 r->size == 1 ? (v & 31) : v);
	}
	CHECK(n >= 1);
#else
	(void)sym;
	(void)v;
	(void)guard_open;
	(void)site_imm;
#endif
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	unsigned long want;

	/* before init: the guards jump out of line, to read the variables,
	 * as they change */
	check_sites(&rc_base, ~0ull);
	check_sites(&rc_limit, ~0ull);
	check_sites(&rc_shift, ~0ull);
	CHECK_EQ(read_all(0x100), 0x1000 + 77 + 0x10);
	rc_base = 0x2000;
	rc_shift = 8;
	CHECK_EQ(read_all(0x100), 0x2000 + 77 + 1);
	CHECK_EQ(read_statics(0x100), 0x5000 + 55 + 0x40);
	rc_slimit = 66;
	rc_sshift = 4;
	CHECK_EQ(read_statics(0x100), 0x5000 + 66 + 0x10);

	/* init while two threads read: one value throughout */
	want = read_all(0x100);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, reader, &want);
	CHECK_EQ(runtime_const_init(ptr, rc_base), 0);
	CHECK_EQ(runtime_const_init(u32, rc_limit), 0);
	CHECK_EQ(runtime_const_init(shift, rc_shift), 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(bad, 0);
	check_sites(&rc_base, 0x2000);
	check_sites(&rc_limit, 77);
	check_sites(&rc_shift, 8);

	/* after init: patched sites keep the value (unpatched ones read the
	 * variable), and init is once everywhere */
	rc_base = 0x3000;
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
	CHECK_EQ(read_all(0x100), want);
#endif
	switchyard_set_log(sy_test_log, NULL);
	CHECK_EQ(runtime_const_init(ptr, rc_base), -EBUSY);
	switchyard_set_log(NULL, NULL);
	/* reported, naming the variable */
	CHECK(strstr(sy_test_log_all, "runtime_const_init() of the variable "
		     "at rc_base") != NULL);
	rc_base = 0x2000;
	CHECK_EQ(runtime_const_init(ptr, rc_base), 0);	/* the same: fine */
	CHECK_EQ(read_all(0x100), want);

	/* a library loaded now: patched before its code runs */
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW);
		unsigned long (*rd)(unsigned, const unsigned char **) =
			h ? (unsigned long (*)(unsigned, const unsigned char **))
				    dlsym(h, "librc_read") : NULL;
		const unsigned char *guard = NULL;

		CHECK(rd != NULL);
		if (rd) {
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
			rc_base = 0x5000;	/* not what init wrote */
			CHECK_EQ(rd(0x100, &guard), want);
			CHECK(guard && guard_open(guard) == 1);
#else
			CHECK_EQ(rd(0x100, &guard), want);
#endif
			rc_base = 0x2000;
		}
		if (h)
			dlclose(h);
	}
	CHECK_EQ(switchyard_runtime_const_init(NULL, 8), -EINVAL);
	CHECK_EQ(switchyard_runtime_const_init(&rc_base, 2), -EINVAL);
	return sy_test_done("runtime_const");
}
