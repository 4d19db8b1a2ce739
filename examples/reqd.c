/* SPDX-License-Identifier: MIT */
/*
 * reqd.c - a small request-processing daemon: the showcase's subject
 * (scripts/showcase.sh), written as a user would.
 *
 * Worker threads take requests from a per-thread generator and answer
 * them: a checksum of the body (a static call whose target is chosen at
 * start-up from the CPU's features: crc32c where the CPU has SSE4.2 (x86-64)
 * or CRC32 (AArch64), a portable loop elsewhere), a tracepoint (static key trace_requests) and
 * debug checks (static key debug_checks). The same handler written the
 * usual way, with flags and a function pointer, is a second target of the
 * static call `handler`: the showcase switches between the two while the
 * workers run, which interleaves them in one process.
 *
 * A monitor thread prints a line per 200 ms:
 *     sample <requests answered in the last 200 ms> <handler>
 * and, when it sees a key or a call change, the site it patched:
 *     change: trace_requests on -- site handle_keyed+0x1b: eb 4d (jmp)
 * (on AArch64: "1f 20 03 d5 (nop" and "... 14 (b").
 * The process serves its control socket (switchyard_control_start()), so
 * `switchyard list|set|call PID ...` drive it. It stops when its standard
 * input closes.
 *
 *   reqd [THREADS]        default 2
 */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__aarch64__)
#include <arm_acle.h>
#endif

#include <switchyard.h>

struct request {
	uint32_t id;
	char path[44];
	uint8_t body[64];
};

struct worker {
	pthread_t thread;
	uint64_t answered;	/* atomic: read by the monitor */
	uint64_t seed;
	uint32_t out;
	char trace[4][128];	/* the tracepoint's ring */
	unsigned trace_n;
	char pad[64];
};

DEFINE_STATIC_KEY_FALSE(trace_requests);
SWITCHYARD_KEY_DESCRIPTION(trace_requests, "log every request (a tracepoint)");
DEFINE_STATIC_KEY_FALSE(debug_checks);
SWITCHYARD_KEY_DESCRIPTION(debug_checks, "verify every answer twice");
DEFINE_STATIC_KEY_FALSE(paused);
SWITCHYARD_KEY_DESCRIPTION(paused, "workers sleep instead of working");

/* ---- the checksum: chosen for the CPU at start-up ---------------------- */

static uint32_t checksum_portable(const uint8_t *p, size_t n)
{
	uint32_t h = 0x811c9dc5;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x01000193;	/* FNV-1a */
	return h;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t checksum_crc32c(const uint8_t *p, size_t n)
{
	uint64_t h = ~0u, w;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = __builtin_ia32_crc32di(h, w);
	}
	return (uint32_t)~h;
}
#define HAVE_CRC32C static_cpu_has(X86_FEATURE_XMM4_2)
#elif defined(__aarch64__)
__attribute__((target("+crc")))
static uint32_t checksum_crc32c(const uint8_t *p, size_t n)
{
	uint32_t h = ~0u;
	uint64_t w;

	for (size_t i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = __crc32cd(h, w);
	}
	return ~h;
}
#define HAVE_CRC32C static_cpu_has(KERNEL_HWCAP_CRC32)
#endif

DEFINE_STATIC_CALL(checksum, checksum_portable);
SWITCHYARD_STATIC_CALL_TARGET(checksum, checksum_portable);
#if defined(HAVE_CRC32C)
SWITCHYARD_STATIC_CALL_TARGET(checksum, checksum_crc32c);
#endif

/* ---- the handler, with static keys and a static call ------------------- */

static void trace(struct worker *w, const struct request *r)
{
	snprintf(w->trace[w->trace_n++ % 4], sizeof(w->trace[0]),
		 "req %u %s %02x%02x", r->id, r->path, r->body[0], r->body[1]);
}

static void verify(const struct request *r, uint32_t sum,
		   uint32_t (*f)(const uint8_t *, size_t))
{
	if (f(r->body, sizeof(r->body)) != sum) {
		fprintf(stderr, "reqd: request %u: checksum mismatch\n", r->id);
		abort();
	}
}

__attribute__((noinline)) static void handle_keyed(struct worker *w,
						   const struct request *r)
{
	uint32_t sum;

	if (static_branch_unlikely(&trace_requests))
		trace(w, r);
	sum = static_call(checksum)(r->body, sizeof(r->body));
	if (static_branch_unlikely(&debug_checks))
		verify(r, sum, static_call_query(checksum));
	w->out ^= sum;
}

/* ---- the same, written the usual way: flags and a function pointer ---- */

static volatile bool flag_trace, flag_debug;
static uint32_t (*volatile checksum_ptr)(const uint8_t *, size_t) =
	checksum_portable;

__attribute__((noinline)) static void handle_flags(struct worker *w,
						   const struct request *r)
{
	uint32_t sum;

	if (__builtin_expect(flag_trace, 0))
		trace(w, r);
	sum = checksum_ptr(r->body, sizeof(r->body));
	if (__builtin_expect(flag_debug, 0))
		verify(r, sum, checksum_ptr);
	w->out ^= sum;
}

DEFINE_STATIC_CALL(handler, handle_keyed);
SWITCHYARD_STATIC_CALL_TARGET(handler, handle_keyed);
SWITCHYARD_STATIC_CALL_TARGET(handler, handle_flags);

/* ---- workers and monitor ------------------------------------------------ */

static int stop;	/* atomic */

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct request r;

	memset(&r, 0, sizeof(r));
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if (static_branch_unlikely(&paused)) {
			usleep(1000);
			continue;
		}
		for (int i = 0; i < 64; i++) {
			uint64_t x = next_rand(&w->seed);

			r.id++;
			memcpy(r.body + (x & 56), &x, 8);
			snprintf(r.path, 8, "/%u", (unsigned)(x >> 40) & 0xfff);
			static_call(handler)(w, &r);
		}
		__atomic_add_fetch(&w->answered, 64, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int first_site(const struct switchyard_site_info *s, void *arg)
{
	const unsigned char *b = s->addr;
	char *out = arg;
	int n;

	if (!s->function || strcmp(s->function, "handle_keyed"))
		return 0;
	n = sprintf(out, "site %s+%#zx:", s->function, s->offset);
	for (int i = 0; i < s->length; i++)
		n += sprintf(out + n, " %02x", b[i]);
#if defined(__aarch64__)
	sprintf(out + n, " (%s)", s->jumps ? "b: the branch is taken" :
		"nop: falls through");
#else
	sprintf(out + n, " (%s)", s->jumps ? "jmp: the branch is taken" :
		"test: falls through, a no-op");
#endif
	return 1;
}

static void show_key(const char *name, struct static_key *k)
{
	char site[256] = "no site";

	switchyard_for_each_site(k, first_site, site);
	printf("change: %s %s -- %s\n", name,
	       static_key_enabled(k) ? "on" : "off", site);
}

static const char *handler_name(void)
{
	void (*h)(struct worker *, const struct request *) =
		static_call_query(handler);

	return h == handle_flags ? "flags" : "keys";
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void monitor(struct worker *w, int n)
{
	int tr = 0, dc = 0;
	void *ck = (void *)static_call_query(checksum);
	uint64_t last = 0, t0 = now_ns();

	for (;;) {
		uint64_t sum = 0, t;

		for (int i = 0; i < n; i++)
			sum += __atomic_load_n(&w[i].answered, __ATOMIC_RELAXED);
		t = now_ns();
		if (last)
			printf("sample %.0f %s\n", (double)(sum - last) * 1e9 /
			       (double)(t - t0), handler_name());
		last = sum;
		t0 = t;
		if (static_key_enabled(&trace_requests) != tr) {
			tr = !tr;
			show_key("trace_requests", &trace_requests.key);
		}
		if (static_key_enabled(&debug_checks) != dc) {
			dc = !dc;
			show_key("debug_checks", &debug_checks.key);
		}
		if ((void *)static_call_query(checksum) != ck) {
			ck = (void *)static_call_query(checksum);
			printf("change: checksum -> %s\n",
			       ck == (void *)checksum_portable ? "checksum_portable"
							       : "checksum_crc32c");
		}
		/* 200 ms, or until standard input closes */
		struct pollfd p = { 0, POLLIN, 0 };
		char buf[64];

		if (poll(&p, 1, 200) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
	}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	struct worker *w;

	if (n < 1 || n > 64) {
		fprintf(stderr, "usage: reqd [THREADS]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
#if defined(HAVE_CRC32C)
	/* the CPU-selected implementation, as a start-up choice */
	if (HAVE_CRC32C)
		static_call_update(checksum, checksum_crc32c);
#endif
	checksum_ptr = static_call_query(checksum);
	if (switchyard_control_start())
		fprintf(stderr, "reqd: no control socket (see the log above)\n");
	w = aligned_alloc(64, sizeof(*w) * (size_t)n);
	if (!w)
		return 1;
	memset(w, 0, sizeof(*w) * (size_t)n);
	for (int i = 0; i < n; i++) {
		w[i].seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	}
	printf("ready %d: %d workers, checksum %s\n", (int)getpid(), n,
	       (void *)checksum_ptr == (void *)checksum_portable ?
	       "checksum_portable" : "checksum_crc32c");
	monitor(w, n);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
	free(w);
	return 0;
}
