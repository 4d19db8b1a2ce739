/* SPDX-License-Identifier: MIT */
/*
 * e4_memcpy.c - switchyard_memcpy() against each of its own strategies
 * and against glibc's memcpy, side by side in one run ([7/10], seed 003;
 * doc/BENCHMARKS-HISTORY.md "[7/10] The copy routine").
 *
 * Sizes 1..64 each, then 16 an octave to 8192. Four conditions: source and
 * destination 64-byte aligned, or misaligned (source + 3, destination +
 * 17); each size fixed, or drawn uniformly from [n - w, n + w] (w = n/4,
 * at least 2) from a sequence of 65,536 read on from batch to batch, so
 * that no contender meets the same sizes in the same order twice within
 * a point. (A shorter sequence, restarted each batch, was learnt: with
 * 2,000-4,000 calls a batch repeating the same random sizes, the branch
 * predictor of this Xeon learnt the order for code with few branches a
 * call - glibc's memcpy at random sizes 48..80 took 3.5 ns a call with a
 * repeating 4,096, 7.9 ns with 65,536 or 1 M - and the random conditions
 * then measured how well a contender's branches were memorised.) Every
 * contender is called through a
 * volatile function pointer (glibc's memcpy: the address the dynamic
 * linker's IFUNC resolution gives, i.e. the implementation glibc chose
 * for this CPU), in batches of K calls (K: about 10 us of the slowest),
 * interleaved, the first contender rotated each round; the same source
 * and destination each call (both in L1). Per point: medians with 95%
 * intervals (bench/common/stats.h) and two verdicts:
 *   5%   switchyard_memcpy within 5% of the best contender (its own
 *        strategies and glibc's memcpy): "no" only when its times are
 *        significantly above (Mann-Whitney, 5%) the best one's times
 *        scaled by 1.05
 *   libc switchyard_memcpy not slower than glibc's: "no" only when its
 *        times are significantly above glibc's and the ratio of the
 *        medians is above 1.02
 *
 * "e4_memcpy callgrind" is the suite's deterministic lane (sybench.py
 * runs it under valgrind --tool=callgrind with the cache and branch
 * simulations): CG_COPIES copies at each of a few sizes, fixed and random,
 * aligned, by switchyard_memcpy and glibc's memcpy, each point in a
 * function of its own (v_sy_64_fixed, v_glibc_64_random, ...) so that
 * callgrind_annotate attributes the copies to it.
 *
 * With SY_BENCH_RAW=FILE (sybench.py) each point's samples go to FILE,
 * and the perf lane's counts of the same batches (bench/common/perfctr.h)
 * beside them for every contender but the short moves.
 *
 * "e4_memcpy --control" is the A/A' control: glibc's memcpy against the
 * same code at another address, and against itself (A/A), at the same
 * points by the same rule (below, "the A/A' control").
 *
 *   e4_memcpy [--rounds N] [--quick] [--calibrate [--save]] [--control]
 *   e4_memcpy callgrind
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "e4_glibc_copy.h"
#include "perfctr.h"
#include "stats.h"

#define NSEQ 65536
#define LIBC_MARGIN 1.02	/* "slower than glibc": significant and over */
#define MAXSIZE (8192 + 2048)

/* the last two: --control's only (glibc's code at another address, and
 * glibc's memcpy again) */
enum { C_SHORT, C_SSE2, C_AVX2, C_AVX512, C_REP, C_SY, C_LIBC, C_COPY,
       C_AGAIN, NC };
static const char *const cname[NC] = {
	"short", "sse2", "avx2", "avx512", "rep", "sy_memcpy", "glibc",
	"glibc copy", "glibc again",
};
static const char *const condname[4] = {
	"aligned fixed", "misaligned fixed", "aligned random",
	"misaligned random",
};

static switchyard_memcpy_fn fn[NC];
static unsigned char *src_buf, *dst_buf;
static uint16_t seq[NSEQ];
static unsigned seq_pos;	/* where the next batch starts */
static struct bench_perf pc;	/* the perf lane: a slot per contender,
				   reset at each point */

/* one batch of k copies; slot and round say where its counters go (-1:
 * a warm-up, counted nowhere) */
static __attribute__((noinline)) double
time_batch(switchyard_memcpy_fn f, unsigned char *d, const unsigned char *s,
	   unsigned k, int slot, int round)
{
	switchyard_memcpy_fn volatile fv = f;
	unsigned p = seq_pos;
	double t0;

	bench_perf_start(&pc);
	t0 = bench_now_ns();
	for (unsigned i = 0; i < k; i++)
		fv(d, s, seq[(p + i) & (NSEQ - 1)]);
	t0 = bench_now_ns() - t0;
	bench_perf_stop(&pc, slot, round, k);
	seq_pos = p + k;
	return t0;
}

/* Fisher-Yates with xorshift: each round's order of the contenders */
static uint64_t order_rng = 0x853c49e6748fea9bull;

static void shuffle(int *v, int n, uint64_t *x)
{
	for (int i = n - 1; i > 0; i--) {
		int j, t;

		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		j = (int)(*x % (uint64_t)(i + 1));
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

/* One point of the grid for the contenders live[0..nl) (the default
 * run's, or --control's): the sizes of condition cond around n in seq, a
 * warm-up, K copies a batch, rounds rounds in a new order each (live[] is
 * shuffled in place); s[c * rounds + r]: ns per copy of contender c in
 * round r, sum[c] their summary, both to the raw file as loop "<n>
 * <condition><tag>" */
static void time_point(int cond, unsigned n, int *live, int nl, int rounds,
		       const char *tag, double *s, struct bench_summary *sum)
{
	int mis = cond == 1 || cond == 3, rnd = cond >= 2;
	unsigned char *d = dst_buf + (mis ? 17 : 0);
	const unsigned char *sp = src_buf + (mis ? 3 : 0);
	unsigned w = n / 4 < 2 ? 2 : n / 4;
	unsigned lo = n > w ? n - w : 1, hi = n + w;
	uint64_t x = 0x2545f4914f6cdd1dull ^ n;
	char loop[80];
	unsigned k = 8;
	double t;

	for (int i = 0; i < NSEQ; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		seq[i] = (uint16_t)(rnd ? lo + (unsigned)(x >> 20) %
				       (hi - lo + 1) : n);
	}
	for (int i = 0; i < nl; i++)
		time_batch(fn[live[i]], d, sp, 64, -1, -1);
	t = time_batch(fn[C_SSE2], d, sp, 512, -1, -1) / 512;
	if (t > 0 && 10000 / t > k)
		k = (unsigned)(10000 / t);
	/* the slots hold the last point's batches */
	bench_perf_reset(&pc);
	for (int r = 0; r < rounds; r++) {
		/* a new order each round: a fixed cyclic order gave each
		 * contender the same predecessor every round, and the one
		 * after an identical function (glibc after
		 * switchyard_memcpy resolved to it) ran with the branch
		 * predictors warmed for it: 2-10% "faster" at random sizes
		 * in an A/A run */
		shuffle(live, nl, &order_rng);
		for (int i = 0; i < nl; i++) {
			int c = live[i];

			s[c * rounds + r] = time_batch(fn[c], d, sp, k, c, r) /
					    k;
		}
	}
	snprintf(loop, sizeof(loop), "%u %s%s", n, condname[cond], tag);
	for (int i = 0; i < nl; i++) {
		int c = live[i];

		sum[c] = bench_summarize(s + c * rounds, (size_t)rounds);
		bench_raw(loop, cname[c], "ns/copy", s + c * rounds, rounds);
		/* counts for what the suite compares (E4: sy_memcpy, glibc,
		 * rep, the vector loops), not the short moves */
		if (c != C_SHORT)
			bench_perf_raw(&pc, c, loop, cname[c], "ns/copy");
	}
}

/* ---- the callgrind lane ---------------------------------------------- */

#define CG_COPIES 1000

/* gcc would fold the identical bodies below into one function (-fipa-icf)
 * and callgrind would then give all the points one name */
#if defined(__GNUC__) && !defined(__clang__)
#define CG_FN_ATTR __attribute__((noinline, no_icf))
#else
#define CG_FN_ATTR __attribute__((noinline))
#endif

/* one point: the contender through a volatile pointer, as time_batch
 * calls it, the sizes from seq (all n for a fixed size) */
#define CG_POINT(who, n, cond)                                                 \
	CG_FN_ATTR static void v_##who##_##n##_##cond(switchyard_memcpy_fn f, \
						      unsigned char *d,        \
						      const unsigned char *s)  \
	{                                                                      \
		switchyard_memcpy_fn volatile fv = f;                          \
                                                                               \
		for (unsigned i = 0; i < CG_COPIES; i++)                       \
			fv(d, s, seq[i]);                                      \
	}
#define CG_SIZE(n)                                                             \
	CG_POINT(sy, n, fixed) CG_POINT(glibc, n, fixed)                       \
	CG_POINT(sy, n, random) CG_POINT(glibc, n, random)
#define CG_SIZES(M) M(8) M(64) M(256) M(2048) M(8192)

CG_SIZES(CG_SIZE)

#define CG_ROW(n)                                                              \
	{ n, { { v_sy_##n##_fixed, v_glibc_##n##_fixed },                      \
	       { v_sy_##n##_random, v_glibc_##n##_random } } },
static const struct {
	unsigned n;
	void (*f[2][2])(switchyard_memcpy_fn, unsigned char *,
			const unsigned char *);
} cg_point[] = { CG_SIZES(CG_ROW) };

static const char *strategy_name(enum switchyard_memcpy_strategy s)
{
	static const char *const name[SWITCHYARD_MEMCPY_STRATEGIES] = {
		"short", "loop", "sse2", "avx2", "avx512", "rep movsb",
		"the C library's memcpy",
	};

	return (unsigned)s < SWITCHYARD_MEMCPY_STRATEGIES ? name[s] : "?";
}

/* Each point's sizes as the timed run draws them (aligned), a warm-up
 * outside the point's function (the code, the simulated predictors),
 * then the point; every copy checked. Under valgrind CPUID is valgrind's
 * (no AVX-512 in 3.19): switchyard_memcpy's flavour and glibc's IFUNC
 * choice follow it, and the first line says what switchyard picked. */
static int run_callgrind(void)
{
	static const char *const who[2] = { "sy_memcpy", "glibc" };
	switchyard_memcpy_fn fs[2] = { switchyard_memcpy, memcpy };
	struct switchyard_memcpy_thresholds th;
	unsigned char *src = aligned_alloc(64, MAXSIZE + 128);
	unsigned char *dst = aligned_alloc(64, MAXSIZE + 128);
	int bad = 0;

	if (!src || !dst)
		return 1;
	switchyard_memcpy_get_thresholds(&th);
	printf("switchyard_memcpy: loop %s, short_max %u, rep_min %u "
	       "(thresholds from %s)\n", strategy_name(th.loop), th.short_max,
	       th.rep_min, th.source == SWITCHYARD_MEMCPY_FROM_FILE ?
	       "the calibration file" : th.source == SWITCHYARD_MEMCPY_FROM_ENV ?
	       "SWITCHYARD_MEMCPY" : "the default table");
	for (unsigned i = 0; i < MAXSIZE + 128; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	for (size_t p = 0; p < sizeof(cg_point) / sizeof(cg_point[0]); p++) {
		unsigned n = cg_point[p].n, w = n / 4 < 2 ? 2 : n / 4;
		unsigned lo = n > w ? n - w : 1, hi = n + w;

		for (int rnd = 0; rnd < 2; rnd++) {
			uint64_t x = 0x2545f4914f6cdd1dull ^ n;

			for (int i = 0; i < CG_COPIES; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				seq[i] = (uint16_t)(rnd ? lo + (unsigned)(x >> 20) %
						       (hi - lo + 1) : n);
			}
			for (int c = 0; c < 2; c++) {
				for (int i = 0; i < CG_COPIES / 4; i++)
					fs[c](dst, src, seq[i]);
				memset(dst, 0, MAXSIZE + 128);
				cg_point[p].f[rnd][c](fs[c], dst, src);
				/* the last copy's bytes, and nothing past them */
				if (memcmp(dst, src, seq[CG_COPIES - 1]) ||
				    dst[hi] != 0) {
					fprintf(stderr, "%s: copy of %u bytes "
						"wrong\n", who[c],
						seq[CG_COPIES - 1]);
					bad = 1;
				}
			}
		}
	}
	free(src);
	free(dst);
	printf("ran each loop %d times\n", CG_COPIES);
	return bad;
}

static void print_cpu(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	int got = 0;

	while (f && fgets(line, sizeof(line), f) && got < 4) {
		if (!strncmp(line, "vendor_id", 9) ||
		    !strncmp(line, "cpu family", 10) ||
		    !strncmp(line, "model\t", 6) ||
		    !strncmp(line, "model name", 10)) {
			printf("# %s", line);
			got++;
		}
	}
	if (f)
		fclose(f);
}

/* ratio of the medians, and a verdict against b scaled by scale */
static int slower(const double *a, const double *b, size_t n, double scale,
		  double *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = b[i] * scale;
	return bench_mann_whitney_z(a, n, tmp, n) > 1.96;
}

static int run_calibration(int save, int quick)
{
	struct switchyard_memcpy_calibration c;
	static const char *const names[4] = {
		"aligned-fixed", "misaligned-fixed", "aligned-random",
		"misaligned-random",
	};
	unsigned flags = (save ? SWITCHYARD_CALIBRATE_SAVE : 0) |
			 (quick ? SWITCHYARD_CALIBRATE_QUICK : 0);
	int r = switchyard_calibrate(flags, &c);
	char path[4096];

	if (r) {
		fprintf(stderr, "switchyard_calibrate: %s\n", strerror(-r));
		return 1;
	}
	printf("# calibration (%.1f s, loop %d): break-even sizes, lo size hi"
	       " (4294967295: none)\n", c.seconds, (int)c.loop);
	for (int i = 0; i < 4; i++)
		printf("%-18s short->loop %u %u %u   loop->rep %u %u %u\n",
		       names[i], c.short_loop[i].lo, c.short_loop[i].size,
		       c.short_loop[i].hi, c.loop_rep[i].lo, c.loop_rep[i].size,
		       c.loop_rep[i].hi);
	printf("chosen: short_max=%u rep_min=%u libc_min=%u\n", c.short_max,
	       c.rep_min, c.libc_min);
	if (save && !switchyard_memcpy_config_path(path, sizeof(path)))
		printf("saved to %s\n", path);
	return 0;
}

/* ---- the A/A' control (--control) ------------------------------------ */

/*
 * How much of "slower than glibc" is where the code lies? At copies of a
 * few cycles the branch predictors and the fetch, indexed by address,
 * make the same code at another address differ by a few percent at
 * some points, either way. The control times glibc's memcpy against its
 * own code linked a second time (e4_glibc_copy.so beside this program:
 * the variant objects of the toolchain's libc.a and a shim of ours,
 * bench/e4_glibc_copy.c; loaded and checked by bench/e4_control.c) with
 * the default run's rule at its 704 points: its count is the floor under
 * the default run's (it moves from run to run, with the addresses and
 * the pages the run gets: run it more than once). And glibc against
 * itself through a second pointer (A/A, one address): the harness's
 * sanity check. Each pair has a pass of its own through time_point(), as
 * the default run's contenders: with the three in one round glibc would
 * often follow its twin at its own address (warm predictors), the copy
 * never.
 */

/* the control's two passes over the default run's points */
static int run_control(int rounds, const unsigned *sizes, unsigned nsizes,
		       double *s, double *tmp)
{
	static const int pair[2][2] = { { C_LIBC, C_COPY },
					{ C_LIBC, C_AGAIN } };
	static const char *const tag[2] = { "", ", A/A" };
	long slow[2] = { 0, 0 }, fast[2] = { 0, 0 }, points = 0;
	double worst[2] = { 0, 0 };
	struct e4g_control ctl;
	size_t nchecked;
	char why[512];
	const char *no = e4g_load(&ctl, why, sizeof(why));

	if (no) {
		printf("SKIP: %s\n", no);
		return 0;
	}
	/* a copy that copies wrongly is a failure, not a reason */
	no = e4g_check(&ctl, &nchecked, why, sizeof(why));
	if (no) {
		printf("FAIL: %s\n", no);
		return 1;
	}
	printf("# the copy copied right: %zu sizes, 4 alignments\n",
	       nchecked);
	fn[C_LIBC] = ctl.glibc;
	fn[C_AGAIN] = ctl.glibc;
	fn[C_COPY] = ctl.copy;
	printf("# %d rounds; ns per copy, medians [95%% CI]; slower: "
	       "significantly (Mann-Whitney, 5%%) and the medians' ratio "
	       "above %.2f\n", rounds, LIBC_MARGIN);
	printf("%-5s %-17s %20s %20s %6s %5s %20s %6s %5s\n", "size",
	       "condition", "glibc", "copy", "co/gl", "slow", "glibc again",
	       "ag/gl", "slow");
	for (int cond = 0; cond < 4; cond++)
		for (unsigned si = 0; si < nsizes; si++) {
			struct bench_summary sum[NC];

			printf("%-5u %-17s", sizes[si], condname[cond]);
			for (int p = 0; p < 2; p++) {
				int live[2] = { pair[p][0], pair[p][1] };
				int b = pair[p][1];
				double r;
				char buf[40];
				int sl;

				time_point(cond, sizes[si], live, 2, rounds,
					   tag[p], s, sum);
				r = sum[b].median / sum[C_LIBC].median;
				sl = r > LIBC_MARGIN &&
				     slower(s + b * rounds, s + C_LIBC * rounds,
					    (size_t)rounds, 1.0, tmp);
				slow[p] += sl;
				if (sl && r > worst[p])
					worst[p] = r;
				/* and the other way: placement cuts both */
				fast[p] += r < 1 / LIBC_MARGIN &&
					   slower(s + C_LIBC * rounds,
						  s + b * rounds,
						  (size_t)rounds, 1.0, tmp);
				if (!p) {
					snprintf(buf, sizeof(buf),
						 "%.2f [%.2f,%.2f]",
						 sum[C_LIBC].median,
						 sum[C_LIBC].lo,
						 sum[C_LIBC].hi);
					printf(" %20s", buf);
				}
				snprintf(buf, sizeof(buf), "%.2f [%.2f,%.2f]",
					 sum[b].median, sum[b].lo, sum[b].hi);
				printf(" %20s %6.3f %5s", buf, r,
				       sl ? "yes" : "no");
			}
			printf("\n");
			fflush(stdout);
			points++;
		}
	print_cpu();
	for (int p = 0; p < 2; p++) {
		char w[32];

		if (slow[p])
			snprintf(w, sizeof(w), "%.3f", worst[p]);
		else
			snprintf(w, sizeof(w), "-");
		printf("%s: slower at %ld of %ld points (worst %s)\n", p ?
		       "A/A control: glibc's memcpy against itself through "
		       "two pointers" :
		       "A/A' control: glibc's memcpy against the same code "
		       "at another address", slow[p], points, w);
	}
	printf("# faster by the same rule (significantly, the medians' ratio "
	       "below 1/%.2f): the copy at %ld, glibc again at %ld of %ld "
	       "points\n", LIBC_MARGIN, fast[0], fast[1], points);
	return 0;
}

int main(int argc, char **argv)
{
	struct switchyard_memcpy_thresholds th;
	unsigned sizes[256], nsizes = 0;
	int rounds = 201, quick = 0, calibrate = 0, save = 0, control = 0;
	long miss5 = 0, misslibc = 0, points = 0;
	double worst5 = 0, worstlibc = 0;
	double *s, *tmp;

	if (argc > 1 && !strcmp(argv[1], "callgrind"))
		return run_callgrind();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--calibrate"))
			calibrate = 1;
		else if (!strcmp(argv[i], "--save"))
			save = 1;
		else if (!strcmp(argv[i], "--control"))
			control = 1;
		else {
			fprintf(stderr, "usage: %s [--rounds N] [--quick] "
				"[--calibrate [--save]] [--control] | "
				"callgrind\n", argv[0]);
			return 2;
		}
	}
	print_cpu();
	if (calibrate)
		return run_calibration(save, quick);
	if (quick)
		rounds = 31;
	switchyard_memcpy_get_thresholds(&th);
	printf("# switchyard_memcpy: short_max %u rep_min %u loop %d source %d"
	       " patched %d; %d rounds\n", th.short_max, th.rep_min,
	       (int)th.loop, (int)th.source, th.patched, rounds);
	fn[C_SHORT] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_SHORT);
	fn[C_SSE2] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_SSE2);
	fn[C_AVX2] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_AVX2);
	fn[C_AVX512] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_AVX512);
	fn[C_REP] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_REP_MOVSB);
	fn[C_SY] = switchyard_memcpy;
	/* glibc's: the implementation its IFUNC resolver chose */
	fn[C_LIBC] = memcpy;

	for (unsigned n = 1; n <= 64; n++)
		sizes[nsizes++] = n;
	for (unsigned o = 64; o < 8192; o *= 2)
		for (unsigned k = 1; k <= 16; k++)
			sizes[nsizes++] = o + o / 16 * k;
	src_buf = aligned_alloc(64, MAXSIZE + 128);
	dst_buf = aligned_alloc(64, MAXSIZE + 128);
	s = malloc(sizeof(*s) * NC * (size_t)rounds);
	tmp = malloc(sizeof(*tmp) * (size_t)rounds);
	if (!src_buf || !dst_buf || !s || !tmp)
		return 1;
	memset(src_buf, 0x5a, MAXSIZE + 128);
	memset(dst_buf, 0, MAXSIZE + 128);
	/* (no perf lane: the control's samples are its clock's) */
	if (control) {
		int r = run_control(rounds, sizes, nsizes, s, tmp);

		free(s);
		free(tmp);
		return r;
	}
	bench_perf_open(&pc, NC, rounds);

	printf("# ns per copy, medians [95%% CI]; best = fastest own strategy;"
	       " 5%% / libc: goal met (yes), missed (no)\n");
	printf("%-5s %-17s %7s %7s %7s %7s %7s %20s %20s %-6s %5s %5s %6s\n",
	       "size", "condition", "short", "sse2", "avx2", "avx512", "rep",
	       "sy_memcpy", "glibc", "best", "5%", "libc", "sy/gl");
	for (int cond = 0; cond < 4; cond++) {
		int rnd = cond >= 2;

		for (unsigned si = 0; si < nsizes; si++) {
			unsigned n = sizes[si], w = n / 4 < 2 ? 2 : n / 4;
			unsigned hi = n + w;
			struct bench_summary sum[NC];
			int live[NC], nl = 0, best = -1;

			for (int c = 0; c < NC; c++) {
				if (!fn[c])
					continue;
				/* short moves: only where they are the strategy */
				if (c == C_SHORT && (rnd ? hi : n) >
				    SWITCHYARD_MEMCPY_SHORT_LIMIT)
					continue;
				live[nl++] = c;
			}
			time_point(cond, n, live, nl, rounds, "", s, sum);
			/* the best contender, the C library's included */
			for (int i = 0; i < nl; i++) {
				int c = live[i];

				if (c != C_SY && (best < 0 || sum[c].median <
							      sum[best].median))
					best = c;
			}
			int ok5 = !slower(s + C_SY * rounds, s + best * rounds,
					  (size_t)rounds, 1.05, tmp);
			double r5 = sum[C_SY].median / sum[best].median;
			double rl = sum[C_SY].median / sum[C_LIBC].median;
			/* slower than the C library: significantly, and by
			 * more than 2% (a shift of a fraction of a cycle
			 * is significant with enough rounds) */
			int oklibc = rl <= LIBC_MARGIN ||
				     !slower(s + C_SY * rounds,
					     s + C_LIBC * rounds,
					     (size_t)rounds, 1.0, tmp);

			points++;
			miss5 += !ok5;
			misslibc += !oklibc;
			if (!ok5 && r5 > worst5)
				worst5 = r5;
			if (!oklibc && rl > worstlibc)
				worstlibc = rl;
			printf("%-5u %-17s", n, condname[cond]);
			for (int c = 0; c < C_SY; c++) {
				int on = 0;

				for (int i = 0; i < nl; i++)
					on |= live[i] == c;
				if (on)
					printf(" %7.2f", sum[c].median);
				else
					printf(" %7s", "-");
			}
			for (int c = C_SY; c <= C_LIBC; c++) {
				char buf[40];

				snprintf(buf, sizeof(buf), "%.2f [%.2f,%.2f]",
					 sum[c].median, sum[c].lo, sum[c].hi);
				printf(" %20s", buf);
			}
			printf(" %-6s %5s %5s %6.3f\n", cname[best],
			       ok5 ? "yes" : "no", oklibc ? "yes" : "no", rl);
			fflush(stdout);
		}
	}
	printf("# %ld points: within 5%% of the best own strategy: %ld missed"
	       " (worst %.3f); not slower than glibc: %ld missed (worst "
	       "%.3f)\n", points, miss5, worst5, misslibc, worstlibc);
	bench_perf_close(&pc);
	free(s);
	free(tmp);
	return 0;
}
