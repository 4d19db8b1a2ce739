/* SPDX-License-Identifier: MIT */
/*
 * peers_flip.c - latency of one enable + one disable of a key with 1, 100,
 * 1,000 and 10,000 sites, with 0 and with 2 other threads running every
 * site in a loop meanwhile. Site counts are interleaved round-robin;
 * medians with 95% CIs; the synchronising calls and write calls per batch
 * come from switchyard_get_stats(). Raw samples go to the JSON file given
 * as argv[1], if any; argv[2] is the number of samples (201); argv[3], if
 * given, the most threads to run the sites with (0: the single-threaded
 * figures only, the suite's PEERS comparison with a crate that is not safe
 * with other threads running).
 *
 *   peers_flip [JSON [SAMPLES [MAX_THREADS]]]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "flip_sites.h"
#include "stats.h"

#define NCOUNTS 4
static const int counts[NCOUNTS] = { 1, 100, 1000, 10000 };
static struct static_key_false *const keys[NCOUNTS] = { &fk1, &fk100, &fk1000, &fk10000 };
static atomic_bool stop;

static void *runner(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (size_t i = 0; i < sizeof(flip_fns) / sizeof(flip_fns[0]); i++)
			flip_fns[i]();
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	FILE *json = argc > 1 ? fopen(argv[1], "w") : NULL;
	int samples = argc > 2 ? atoi(argv[2]) : 201;
	int max_threads = argc > 3 ? atoi(argv[3]) : 2;

	if (samples < 1 || max_threads < 0) {
		fprintf(stderr, "usage: peers_flip [JSON [SAMPLES>=1 "
			"[MAX_THREADS>=0]]]\n");
		return 2;
	}
	if (json)
		fprintf(json, "[\n");
	for (int threads = 0; threads <= max_threads; threads += 2) {
		double *t[NCOUNTS];
		pthread_t th[2];
		struct switchyard_stats a, b;
		uint64_t batches = 0, syncs = 0, writes = 0;

		atomic_store(&stop, false);
		for (int i = 0; i < threads; i++)
			pthread_create(&th[i], NULL, runner, NULL);
		for (int c = 0; c < NCOUNTS; c++) {
			t[c] = calloc((size_t)samples, sizeof(double));
			static_branch_enable(keys[c]);	/* warm-up */
			static_branch_disable(keys[c]);
		}
		for (int s = 0; s < samples; s++) {
			for (int c = 0; c < NCOUNTS; c++) {
				switchyard_get_stats(&a);
				double t0 = bench_now_ns();
				if (static_branch_enable(keys[c]) ||
				    static_branch_disable(keys[c])) {
					fprintf(stderr, "flip failed\n");
					return 1;
				}
				t[c][s] = bench_now_ns() - t0;
				switchyard_get_stats(&b);
				batches += b.patch_batches - a.patch_batches;
				syncs += b.sync_calls - a.sync_calls;
				writes += b.write_calls - a.write_calls;
			}
		}
		atomic_store(&stop, true);
		for (int i = 0; i < threads; i++)
			pthread_join(th[i], NULL);
		printf("== %d other thread%s running the sites; %.2f sync calls "
		       "and %.2f write calls per batch (%llu batches)\n", threads,
		       threads == 1 ? "" : "s", (double)syncs / (double)batches,
		       (double)writes / (double)batches,
		       (unsigned long long)batches);
		for (int c = 0; c < NCOUNTS; c++) {
			char what[64];

			snprintf(what, sizeof(what), "enable+disable, %5d sites",
				 counts[c]);
			bench_print(what, bench_summarize(t[c], (size_t)samples),
				    1e3, "us");
			if (json) {
				fprintf(json, "%s{\"impl\":\"switchyard\",\"threads\":%d,"
					"\"sites\":%d,\"samples_ns\":[",
					threads || c ? ",\n" : "", threads, counts[c]);
				for (int s = 0; s < samples; s++)
					fprintf(json, "%s%.0f", s ? "," : "", t[c][s]);
				fprintf(json, "]}");
			}
			free(t[c]);
		}
	}
	/*
	 * The flips above only say the calls returned 0: check, untimed and
	 * with no thread running, that enabling a key makes exactly its sites
	 * fire and disabling it again none.
	 */
	for (int c = 0; c < NCOUNTS; c++) {
		int before;

		static_branch_enable(keys[c]);
		before = flip_sink;
		for (size_t i = 0; i < sizeof(flip_fns) / sizeof(flip_fns[0]); i++)
			flip_fns[i]();
		if (flip_sink - before != counts[c]) {
			fprintf(stderr, "key of %d sites: %d fired\n", counts[c],
				flip_sink - before);
			return 1;
		}
		static_branch_disable(keys[c]);
		before = flip_sink;
		for (size_t i = 0; i < sizeof(flip_fns) / sizeof(flip_fns[0]); i++)
			flip_fns[i]();
		if (flip_sink != before) {
			fprintf(stderr, "key of %d sites: fired when disabled\n",
				counts[c]);
			return 1;
		}
	}
	if (json) {
		fprintf(json, "\n]\n");
		fclose(json);
	}
	return 0;
}
