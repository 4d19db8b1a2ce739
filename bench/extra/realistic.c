/* SPDX-License-Identifier: MIT */
/*
 * realistic.c - a small request-processing program written the way static
 * keys are used in practice: tracepoints at function entry and exit (a call
 * with arguments), debug checks that abort (cold, noreturn), statistics
 * counters (a few instructions), feature flags defaulting on (likely, with
 * an alternative implementation), and verbose logging inside loops. It
 * parses, routes and answers a batch of synthetic requests, then prints
 * its site statistics: the share of 2-byte sites is the figure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(trace_enabled);
DEFINE_STATIC_KEY_FALSE(debug_checks);
DEFINE_STATIC_KEY_FALSE(stats_enabled);
DEFINE_STATIC_KEY_FALSE(verbose_log);
DEFINE_STATIC_KEY_TRUE(fast_hash);
DEFINE_STATIC_KEY_TRUE(keepalive);
DEFINE_STATIC_KEY_FALSE(compress);

struct stats { unsigned long parsed, routed, bytes, errors, hits, misses; } st;

__attribute__((noinline)) static void trace_event(const char *ev, long a, long b)
{
	fprintf(stderr, "trace %s %ld %ld\n", ev, a, b);
}

__attribute__((cold, noreturn, noinline)) static void check_failed(const char *what)
{
	fprintf(stderr, "check failed: %s\n", what);
	abort();
}

__attribute__((cold, noinline)) static void log_error(const char *msg, int code)
{
	fprintf(stderr, "error: %s (%d)\n", msg, code);
}

#define TRACE(ev, a, b) do { if (static_branch_unlikely(&trace_enabled)) trace_event(ev, (long)(a), (long)(b)); } while (0)
#define DCHECK(c) do { if (static_branch_unlikely(&debug_checks) && !(c)) check_failed(#c); } while (0)
#define STAT(f, n) do { if (static_branch_unlikely(&stats_enabled)) st.f += (n); } while (0)
#define VLOG(...) do { if (static_branch_unlikely(&verbose_log)) fprintf(stderr, __VA_ARGS__); } while (0)

struct request { char method[8]; char path[64]; int version; size_t len; };
struct route { const char *prefix; int (*handler)(const struct request *, char *, size_t); };

static uint32_t hash_slow(const char *s)
{
	uint32_t h = 0;

	TRACE("hash_slow", strlen(s), 0);
	while (*s)
		h = h * 31 + (unsigned char)*s++;
	return h;
}

static uint32_t hash_fast(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static uint32_t path_hash(const char *s)
{
	if (static_branch_likely(&fast_hash))
		return hash_fast(s);
	return hash_slow(s);
}

static int parse(const char *line, struct request *r)
{
	TRACE("parse", strlen(line), 0);
	memset(r, 0, sizeof(*r));
	if (sscanf(line, "%7s %63s HTTP/1.%d", r->method, r->path, &r->version) != 3) {
		STAT(errors, 1);
		log_error("malformed request", 400);
		return -1;
	}
	DCHECK(r->version == 0 || r->version == 1);
	r->len = strlen(line);
	STAT(parsed, 1);
	STAT(bytes, r->len);
	VLOG("parsed %s %s\n", r->method, r->path);
	TRACE("parse_done", r->len, r->version);
	return 0;
}

static int h_index(const struct request *r, char *out, size_t n)
{
	TRACE("index", r->len, 0);
	return snprintf(out, n, "200 index %u", path_hash(r->path));
}

static int h_static(const struct request *r, char *out, size_t n)
{
	size_t i, sum = 0;

	TRACE("static", r->len, 0);
	for (i = 0; r->path[i]; i++) {
		sum += (unsigned char)r->path[i];
		VLOG("byte %zu\n", i);
	}
	DCHECK(i < sizeof(r->path));
	if (static_branch_unlikely(&compress))
		sum /= 2;
	STAT(hits, 1);
	return snprintf(out, n, "200 static %zu", sum);
}

static int h_api(const struct request *r, char *out, size_t n)
{
	uint32_t h = path_hash(r->path);

	TRACE("api", h, r->version);
	if (strcmp(r->method, "POST") && strcmp(r->method, "GET")) {
		STAT(errors, 1);
		log_error("method not allowed", 405);
		return snprintf(out, n, "405");
	}
	DCHECK(h != 0);
	STAT(hits, 1);
	return snprintf(out, n, "200 api %u", h % 1000);
}

static const struct route routes[] = {
	{ "/api/", h_api }, { "/static/", h_static }, { "/", h_index },
};

static int route(const struct request *r, char *out, size_t n)
{
	TRACE("route", r->len, 0);
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
		if (!strncmp(r->path, routes[i].prefix, strlen(routes[i].prefix))) {
			STAT(routed, 1);
			VLOG("route %s\n", routes[i].prefix);
			return routes[i].handler(r, out, n);
		}
	}
	STAT(misses, 1);
	log_error("no route", 404);
	return snprintf(out, n, "404");
}

static int respond(const char *line, char *out, size_t n)
{
	struct request r;
	int len;

	if (parse(line, &r))
		return snprintf(out, n, "400");
	len = route(&r, out, n);
	DCHECK(len > 0 && (size_t)len < n);
	if (static_branch_likely(&keepalive))
		STAT(bytes, 1);
	else
		TRACE("close", len, 0);
	TRACE("respond", len, r.version);
	return len;
}

int main(int argc, char **argv)
{
	static const char *reqs[] = {
		"GET / HTTP/1.1", "GET /static/app.js HTTP/1.1",
		"POST /api/items HTTP/1.0", "PUT /api/items HTTP/1.1",
		"GET /missing HTTP/1.1", "garbage",
	};
	struct switchyard_stats s;
	char out[128];
	unsigned long total = 0;
	int rounds = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < rounds; i++)
		total += (unsigned long)respond(reqs[i % 6], out, sizeof(out));
	switchyard_get_stats(&s);
	printf("sites %llu  2-byte %llu  5-byte %llu  share of 2-byte sites %.1f%%"
	       "  (checksum %lu)\n", (unsigned long long)s.sites,
	       (unsigned long long)s.sites_short, (unsigned long long)s.sites_long,
	       s.sites ? 100.0 * (double)s.sites_short / (double)s.sites : 0.0,
	       total);
	return 0;
}
