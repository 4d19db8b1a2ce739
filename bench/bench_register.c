/* SPDX-License-Identifier: MIT */
/*
 * bench_register.c - registration of a shared object with 100,000 sites.
 *
 * Interleaves dlopen+dlclose of two builds of the same code: A, 100,000
 * jump label sites (sites100k.so), and B, the same code compiled with
 * SWITCHYARD_NO_PATCHING (100,000 flag checks, sites100k_flag.so). Reports
 * the library's own registration time (switchyard_stats.register_ns) per
 * dlopen, and the dlopen+first-call wall time of A and B, each as a median
 * with a 95% CI, with the Mann-Whitney verdict of A vs B.
 */
#include <dlfcn.h>
#include <stdint.h>

#include <switchyard.h>

#include "stats.h"

#define ROUNDS 31

static double open_close(const char *path, double *reg_ns, uint64_t *sites,
			 uint64_t *shorts)
{
	struct switchyard_stats a, b;
	double t0, t1;

	switchyard_get_stats(&a);
	t0 = bench_now_ns();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
	void (*run)(void) = (void (*)(void))dlsym(h, "bench_run_all");
	run();
	t1 = bench_now_ns();
	switchyard_get_stats(&b);
	if (reg_ns)
		*reg_ns = (double)(b.register_ns - a.register_ns);
	if (sites) {
		*sites = b.sites - a.sites;
		*shorts = b.sites_short - a.sites_short;
	}
	dlclose(h);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	const char *a = argc > 2 ? argv[1] : "./sites100k.so";
	const char *b = argc > 2 ? argv[2] : "./sites100k_flag.so";
	double ta[ROUNDS], tb[ROUNDS], reg[ROUNDS];
	uint64_t sites = 0, shorts = 0;

	/* warm-up: page cache, dynamic linker */
	open_close(a, NULL, NULL, NULL);
	open_close(b, NULL, NULL, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		ta[i] = open_close(a, &reg[i], &sites, &shorts);
		tb[i] = open_close(b, NULL, NULL, NULL);
	}
	printf("object: %s, %llu sites (%llu 2-byte, %.1f%%)\n", a,
	       (unsigned long long)sites, (unsigned long long)shorts,
	       sites ? 100.0 * (double)shorts / (double)sites : 0);
	bench_print("registration (sort, verify, NOP the sites)",
		    bench_summarize(reg, ROUNDS), 1e6, "ms");
	bench_print("  per site", bench_summarize(reg, ROUNDS),
		    sites ? (double)sites : 1, "ns");
	struct bench_summary sa = bench_summarize(ta, ROUNDS);
	struct bench_summary sb = bench_summarize(tb, ROUNDS);
	bench_print("A dlopen+run+dlclose, 100k sites", sa, 1e6, "ms");
	bench_print("B dlopen+run+dlclose, 100k flag checks", sb, 1e6, "ms");
	double z = bench_mann_whitney_z(ta, ROUNDS, tb, ROUNDS);
	printf("A %s B (Mann-Whitney z = %.2f); difference of medians %.2f ms "
	       "= %.1f ns per site\n", bench_verdict(z), z,
	       (sa.median - sb.median) / 1e6,
	       sites ? (sa.median - sb.median) / (double)sites : 0);
	return 0;
}
