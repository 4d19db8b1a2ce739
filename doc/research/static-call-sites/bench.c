/* Test (e): cost of one call through each kind of site.  loop_X(n) performs n calls.
 * usage: bench            -> wall clock, interleaved rounds, medians
 *        bench X N        -> just run loop X with N iterations (for callgrind) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sc.h"

extern long tgt3(long, long, long);
extern long (*volatile tgt3_ptr)(long, long, long);
SY_TRAMP_DECLARE(tgt3, long, (long, long, long));
SY_TRAMP_DEFINE(tgt3, tgt3);

#define LOOP(name, CALL) \
__attribute__((noinline)) long loop_##name(long n) { \
	long acc = 0; \
	for (long i = 0; i < n; i++) { long r = CALL; acc += r; } \
	return acc; }

LOOP(empty, ({ __asm__ volatile("" ::: "memory"); i + acc + 1; }))
LOOP(direct, tgt3(i, acc, 1))
LOOP(fptr, tgt3_ptr(i, acc, 1))
LOOP(tramp, sy_tramp_tgt3(i, acc, 1))
LOOP(site_dcr, SY_SC_CALL3_V(DCR, tgt3, i, acc, 1))
LOOP(site_fp, SY_SC_CALL3_V(FP, tgt3, i, acc, 1))
LOOP(site_fake, SY_SC_CALL3_V(FAKE, tgt3, i, acc, 1))
LOOP(site_naive, SY_SC_CALL3_V(NAIVE, tgt3, i, acc, 1))   /* incorrect ABI-wise; cost reference only */

static struct { const char *name; long (*fn)(long); } V[] = {
	{ "empty", loop_empty }, { "direct", loop_direct }, { "fptr", loop_fptr },
	{ "tramp", loop_tramp }, { "site_dcr", loop_site_dcr }, { "site_fp", loop_site_fp },
	{ "site_fake", loop_site_fake }, { "site_naive", loop_site_naive },
};
#define NV (int)(sizeof V / sizeof V[0])

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }

int main(int argc, char **argv)
{
	if (argc == 3) {
		for (int v = 0; v < NV; v++)
			if (!strcmp(V[v].name, argv[1])) { printf("%ld\n", V[v].fn(atol(argv[2]))); return 0; }
		return 2;
	}
	long ref = loop_direct(1000);
	for (int v = 1; v < NV; v++)
		if (V[v].fn(1000) != ref) { printf("result mismatch for %s\n", V[v].name); return 1; }
	enum { ROUNDS = 15 };
	const long N = 20000000;
	static double t[16][ROUNDS];
	for (int r = 0; r < ROUNDS; r++)
		for (int k = 0; k < NV; k++) {
			int v = (k + r) % NV;               /* rotate order each round */
			double t0 = now(); V[v].fn(N); t[v][r] = (now() - t0) / N;
		}
	for (int v = 0; v < NV; v++) {
		qsort(t[v], ROUNDS, sizeof(double), cmpd);
		printf("%-11s median %6.3f ns/iter  (min %6.3f, max %6.3f)\n", V[v].name, t[v][ROUNDS / 2], t[v][0], t[v][ROUNDS - 1]);
	}
	return 0;
}
