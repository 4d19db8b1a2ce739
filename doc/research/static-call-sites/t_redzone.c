/* Test (a): leaf callers with red-zone locals and register-held values across a site. */
#include <stdio.h>
#include <string.h>
#include "sc.h"

extern long sc_clobber_callee(void);
extern int sc_entry_rsp_mod;
extern long sc_seen_args[6];
#if defined(SY_SC_TRAMP) && SY_SC_TRAMP
SY_TRAMP_DECLARE(sc_clobber_callee, long, ());
SY_TRAMP_DEFINE(sc_clobber_callee, sc_clobber_callee);
#endif

static int fails;
#define CHECK(c, ...) do { if (!(c)) { fails++; printf("  FAIL %s:%d: ", __func__, __LINE__); printf(__VA_ARGS__); printf("\n"); } } while (0)

static void check_common(const char *who, long r, int n, const long *exp_args)
{
	long e = 0;
	for (int i = 0; i < 6; i++) e += (i + 1) * sc_seen_args[i];
	CHECK(sc_entry_rsp_mod == 8, "%s: callee entry rsp%%16 = %d (want 8)", who, sc_entry_rsp_mod);
	CHECK(r == e, "%s: return %ld want %ld", who, r, e);
	for (int i = 0; i < n; i++)
		CHECK(sc_seen_args[i] == exp_args[i], "%s: arg%d = %#lx want %#lx", who, i + 1, sc_seen_args[i], exp_args[i]);
}

/* Locals are volatile so they live in memory; the function makes no compiler-visible
 * call, so at -O2 gcc/clang put them in the red zone below rsp.  k1..k4 / f1,f2 are
 * values the compiler wants to keep in registers across the site. */
#define LEAF(N, CALLEXPR, ...) \
__attribute__((noinline)) long leaf##N(long x, double y, long *out_ok) \
{ \
	volatile long l0 = x + 1, l1 = x + 2, l2 = x + 3, l3 = x + 4, l4 = x + 5, \
		l5 = x + 6, l6 = x + 7, l7 = x + 8, l8 = x + 9, l9 = x + 10; \
	volatile double d0 = y * 2, d1 = y * 3; \
	long k1 = x * 3, k2 = x * 5, k3 = x * 7, k4 = x ^ 0x5555, k5 = x * 11, k6 = x * 13, k7 = x*17, k8 = x * 19, k9 = x * 23; \
	double f1 = y * 1.5, f2 = y * 2.5, f3 = y * 3.5; \
	long r = CALLEXPR; \
	long ok = l0 == x + 1 && l1 == x + 2 && l2 == x + 3 && l3 == x + 4 && l4 == x + 5 && \
		l5 == x + 6 && l6 == x + 7 && l7 == x + 8 && l8 == x + 9 && l9 == x + 10 && \
		d0 == y * 2 && d1 == y * 3; \
	long ok2 = k1 == x * 3 && k2 == x * 5 && k3 == x * 7 && k4 == (x ^ 0x5555) && k5 == x * 11 && \
		k6 == x * 13 && k7 == x * 17 && k8 == x * 19 && k9 == x * 23 && \
		f1 == y * 1.5 && f2 == y * 2.5 && f3 == y * 3.5; \
	*out_ok = ok | (ok2 << 1); \
	return r; \
}

LEAF(0, SY_SC_CALL0(sc_clobber_callee))
LEAF(1, SY_SC_CALL1(sc_clobber_callee, x + 100))
LEAF(2, SY_SC_CALL2(sc_clobber_callee, x + 100, x + 200))
LEAF(3, SY_SC_CALL3(sc_clobber_callee, x + 100, x + 200, x + 300))
LEAF(6, SY_SC_CALL6(sc_clobber_callee, x + 100, x + 200, x + 300, x + 400, x + 500, x + 600))

/* Different stack alignments at the site: callers with odd numbers of pushes. */
__attribute__((noinline)) long nonleaf_odd(long x, long *ok)
{
	long a = x * 3, b = x * 5, c = x * 7, d = x * 9, e = x * 11;
	__asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e));
	long r = SY_SC_CALL1(sc_clobber_callee, x + 100);
	*ok = a == x * 3 && b == x * 5 && c == x * 7 && d == x * 9 && e == x * 11;
	return r;
}

int main(int argc, char **argv)
{
	(void)argv;
	long x = argc + 1000; double y = argc + 0.25;
	long exp[6] = { x + 100, x + 200, x + 300, x + 400, x + 500, x + 600 };
	long ok, r;
#define RUN(N) \
	sc_entry_rsp_mod = -1; memset(sc_seen_args, 0, sizeof sc_seen_args); \
	r = leaf##N(x, y, &ok); \
	check_common("leaf" #N, r, N, exp); \
	CHECK(ok & 1, "leaf%d: red-zone locals corrupted", N); \
	CHECK(ok & 2, "leaf%d: register-held values corrupted (missing clobber?)", N);
	RUN(0) RUN(1) RUN(2) RUN(3) RUN(6)
	sc_entry_rsp_mod = -1;
	r = nonleaf_odd(x, &ok);
	check_common("nonleaf_odd", r, 1, exp);
	CHECK(ok, "nonleaf_odd: values corrupted");
	printf("t_redzone: %s (%d failures)\n", fails ? "FAIL" : "PASS", fails);
	return fails != 0;
}
