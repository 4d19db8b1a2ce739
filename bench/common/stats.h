/* SPDX-License-Identifier: MIT */
/*
 * stats.h - the statistics every switchyard benchmark reports: the median
 * with a distribution-free 95% confidence interval (order statistics of the
 * binomial), and a Mann-Whitney U test between two interleaved samples,
 * printed as "<", ">" or "~" (not significant at 5%).
 */
#ifndef SY_BENCH_STATS_H
#define SY_BENCH_STATS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- raw samples, for the suite's harness (bench/sybench.py) ----------- */

/*
 * With SY_BENCH_RAW=FILE in the environment, every measured (loop,
 * variant) appends one JSON line {"loop", "variant", "unit", "samples"}
 * to FILE: the interleaved rounds as measured, for the harness to
 * summarise. Without it, nothing.
 */
static inline void bench_raw(const char *loop, const char *variant,
			    const char *unit, const double *s, int n)
{
	const char *path = getenv("SY_BENCH_RAW");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "{\"loop\": \"%s\", \"variant\": \"%s\", \"unit\": "
		"\"%s\", \"samples\": [", loop, variant, unit);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? ", " : "", s[i]);
	fprintf(f, "]}\n");
	fclose(f);
}

static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bench_summary {
	size_t n;
	double median, lo, hi, min, max;
};

/* Median and its 95% CI: ranks n/2 -+ 0.98 sqrt(n) (normal approximation
 * of the binomial(n, 1/2) order statistics). */
static inline struct bench_summary bench_summarize(const double *v, size_t n)
{
	struct bench_summary s;
	double *c = (double *)malloc(n * sizeof(*c));
	long lo, hi;

	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), bench_cmp_double);
	s.n = n;
	s.median = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	lo = (long)floor(n / 2.0 - 0.98 * sqrt((double)n));
	hi = (long)ceil(n / 2.0 + 1 + 0.98 * sqrt((double)n)) - 1;
	if (lo < 0)
		lo = 0;
	if (hi > (long)n - 1)
		hi = (long)n - 1;
	s.lo = c[lo];
	s.hi = c[hi];
	s.min = c[0];
	s.max = c[n - 1];
	free(c);
	return s;
}

/* Two-sided Mann-Whitney U, normal approximation with tie correction
 * ignored (continuous timings); returns the z score (>0: a larger). */
static inline double bench_mann_whitney_z(const double *a, size_t na,
					  const double *b, size_t nb)
{
	double u = 0;

	for (size_t i = 0; i < na; i++)
		for (size_t j = 0; j < nb; j++)
			u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
	double mu = na * (double)nb / 2;
	double sigma = sqrt(na * (double)nb * (na + nb + 1) / 12.0);
	return sigma > 0 ? (u - mu) / sigma : 0;
}

static inline const char *bench_verdict(double z)
{
	return fabs(z) < 1.96 ? "~" : z > 0 ? ">" : "<";
}

static inline void bench_print(const char *what, struct bench_summary s,
			       double scale, const char *unit)
{
	printf("%-44s median %10.2f %s  95%% CI [%.2f, %.2f]  n=%zu  "
	       "range [%.2f, %.2f]\n", what, s.median / scale, unit,
	       s.lo / scale, s.hi / scale, s.n, s.min / scale, s.max / scale);
}

/*
 * Run nv variants rounds times, interleaved, the starting variant rotated
 * each round (so that none always runs first or after the same one), each
 * call f[v](round) doing n iterations: s[v * rounds + round] = ns per
 * iteration.
 */
static inline void bench_interleave(int nv, int rounds, long (*const *f)(long),
				    long n, double *s)
{
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < nv; k++) {
			int v = (r + k) % nv;
			double t0 = bench_now_ns();
			volatile long sink = f[v](r);

			(void)sink;
			s[v * rounds + r] = (bench_now_ns() - t0) / (double)n;
		}
}

#endif /* SY_BENCH_STATS_H */
