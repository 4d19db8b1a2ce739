/* SPDX-License-Identifier: MIT */
/*
 * bench_register.c - registration of a shared object with 100,000 sites.
 *
 * Interleaves dlopen+dlclose of two builds of the same code: A, 100,000
 * jump label sites (sites100k.so), and B, the same code compiled with
 * SWITCHYARD_NO_PATCHING (100,000 flag checks, sites100k_flag.so). Reports
 * the library's own registration time (switchyard_stats.register_ns) per
 * dlopen, and the dlopen+first-call wall time of A and B, each as a median
 * with a 95% CI, with the Mann-Whitney verdict of A vs B. Then the cold
 * case: a fresh process per sample (re-executing itself with --once), as a
 * program pays it at start-up, when nothing is in the caches and the
 * library's scratch memory is not yet faulted in.
 */
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
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

/* One dlopen in this (fresh) process: print the registration time. */
static int once(const char *path)
{
	double reg;

	open_close(path, &reg, NULL, NULL);
	printf("%.0f\n", reg);
	return 0;
}

static double cold_sample(const char *self, const char *path)
{
	char *args[] = { (char *)self, (char *)"--once", (char *)path, NULL };
	int fd[2], st;
	pid_t pid;
	char buf[64] = { 0 };
	posix_spawn_file_actions_t fa;
	extern char **environ;

	if (pipe(fd))
		exit(1);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	if (posix_spawn(&pid, self, &fa, NULL, args, environ))
		exit(1);
	close(fd[1]);
	if (read(fd[0], buf, sizeof(buf) - 1) <= 0)
		exit(1);
	close(fd[0]);
	waitpid(pid, &st, 0);
	posix_spawn_file_actions_destroy(&fa);
	return atof(buf);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--once"))
		return once(argv[2]);

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
	double cold[ROUNDS];
	for (int i = 0; i < ROUNDS; i++)
		cold[i] = cold_sample("/proc/self/exe", a);
	bench_print("registration in a fresh process (cold)",
		    bench_summarize(cold, ROUNDS), 1e6, "ms");
	return 0;
}
