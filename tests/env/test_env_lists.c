/* SPDX-License-Identifier: MIT */
/*
 * test_env_lists.c - one rule for every list-valued variable
 * (switchyard(3) ENVIRONMENT): items are separated by commas, an empty
 * item (a leading, trailing or doubled comma) is skipped, and a blank is
 * part of an item. Each variable is given the same list with and without
 * extra commas, in a child started with it; both must have the same
 * effect, without a message:
 *   SWITCHYARD_KEYS      the keys set;
 *   SWITCHYARD_MEMCPY    the thresholds (source: the environment);
 *   SWITCHYARD_CPU_MASK  the features hidden; "erms avx2" is one unknown
 *                        name (reported), not two.
 * And the one-word variables (SWITCHYARD_CONTROL, _PATCH_METHOD,
 * _STATIC_CALL): a value none of theirs is reported, naming the variable
 * and the value, where any value used to be taken silently for the
 * default; an empty value and each documented one say nothing.
 * Near misses of every one-word variable and of SWITCHYARD_CPU_MASK's
 * names (prefixes, suffixes, case, blanks, separators, non-ASCII; the
 * table near[]): each is reported and changes nothing, which the child's
 * line shows (the control socket served or not, writes through a
 * writable+executable window, code written by a static call update, the
 * features seen); the good values have their effect, silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_exec.h"
#include "sy_test.h"

DEFINE_STATIC_KEY_FALSE(list_a);
DEFINE_STATIC_KEY_TRUE(list_b);

static __attribute__((noinline)) int a_on(void)
{
	return static_branch_unlikely(&list_a);
}

static __attribute__((noinline)) int b_on(void)
{
	return static_branch_likely(&list_b);
}

static int call_one(int x)
{
	return x + 1;
}

static int call_two(int x)
{
	return x + 2;
}

DEFINE_STATIC_CALL(env_call, call_one);

/*
 * Its state on one line: the keys, the thresholds, some features, and what
 * the one-word variables chose: ctl=1 if the control socket was served
 * (SWITCHYARD_CONTROL), rwx= the writes through a writable+executable
 * window to flip a key (SWITCHYARD_PATCH_METHOD: none with procmem, some
 * with mprotect), scw= the code writes of a static call update (none with
 * SWITCHYARD_STATIC_CALL=detour).
 */
/* Two features a mask hides, by this architecture's names. */
#if defined(__aarch64__)
#define F1 "crc32"
#define F2 "atomics"
#define F1_BIT KERNEL_HWCAP_CRC32
#define F2_BIT KERNEL_HWCAP_ATOMICS
#else
#define F1 "erms"
#define F2 "movbe"
#define F1_BIT X86_FEATURE_ERMS
#define F2_BIT X86_FEATURE_MOVBE
#endif

static int child(void)
{
	struct switchyard_memcpy_thresholds t;
	struct switchyard_stats s0, s1, s2;
	int ctl = switchyard_control_stop() == 0, a = a_on(), b = b_on();
	int r;

	switchyard_memcpy_get_thresholds(&t);
	/* code is written (SWITCHYARD_PATCH_METHOD is read) and a static
	 * call is updated (SWITCHYARD_STATIC_CALL is read) */
	switchyard_get_stats(&s0);
	r = static_branch_enable(&list_a) | static_branch_disable(&list_a);
	switchyard_get_stats(&s1);
	static_call_update(env_call, call_two);
	switchyard_get_stats(&s2);
	printf("a=%d b=%d short_max=%u rep_min=%u source=%d " F1 "=%d "
	       F2 "=%d sse2=%d ctl=%d rwx=%llu scw=%llu\n", a, b,
	       t.short_max, t.rep_min, (int)t.source,
	       boot_cpu_has(F1_BIT), boot_cpu_has(F2_BIT),
	       boot_cpu_has(X86_FEATURE_XMM2), ctl,
	       (unsigned long long)(s1.rwx_windows - s0.rwx_windows),
	       (unsigned long long)(s2.write_calls - s1.write_calls));
	fflush(stdout);
	return r || static_call(env_call)(1) != 3;
}

static char self[4096];

/* SWITCHYARD_STATIC_CALL is read where static calls are patched (on an
 * architecture with patched sites; the fallback's calls are pointers) */
#ifdef SY__ARCH_HAVE_STATIC_CALL
#define SC_PATCHED 1
#else
#define SC_PATCHED 0
#endif

/* Run the child with name=value; its stdout in out, stderr in err. */
static void run(const char *name, const char *value, char *out, char *err,
		size_t size)
{
	int po[2], pe[2], st;
	ssize_t n;
	size_t len;
	pid_t pid;

	if (pipe(po) || pipe(pe))
		SKIP("pipe");
	pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		unsetenv("SWITCHYARD_KEYS");
		unsetenv("SWITCHYARD_MEMCPY");
		unsetenv("SWITCHYARD_CPU_MASK");
		unsetenv("SWITCHYARD_CONTROL");
		unsetenv("SWITCHYARD_PATCH_METHOD");
		unsetenv("SWITCHYARD_STATIC_CALL");
		setenv("XDG_CACHE_HOME", "/nonexistent", 1);
		if (name)
			setenv(name, value, 1);
		char *const av[] = { (char *)"test_env_lists",
				     (char *)"--child", NULL };

		sy_test_execv(self, av);
		_exit(126);
	}
	close(po[1]);
	close(pe[1]);
	/* stdout is one short line; stderr may be longer: drain both */
	for (len = 0; (n = read(po[0], out + len, size - 1 - len)) > 0;)
		len += (size_t)n;
	out[len] = 0;
	for (len = 0; (n = read(pe[0], err + len, size - 1 - len)) > 0;)
		len += (size_t)n;
	err[len] = 0;
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* value and each extra-comma form of it: the same output, no message */
static void same(const char *name, const char *clean,
		 const char *const *forms, size_t nforms, const char *want)
{
	char out0[512], err0[2048], out[512], err[2048];

	run(name, clean, out0, err0, sizeof(out0));
	if (want && !strstr(out0, want)) {
		fprintf(stderr, "%s=%s: wanted '%s' in: %s", name, clean,
			want, out0);
		CHECK(!"effect");
	}
	for (size_t i = 0; i < nforms; i++) {
		run(name, forms[i], out, err, sizeof(out));
		CHECK(!strcmp(out, out0));
		CHECK(!strstr(err, "SWITCHYARD_KEYS: item") &&
		      !strstr(err, "ignored") && !strstr(err, "unknown"));
		if (strcmp(out, out0) || strstr(err, "ignored") ||
		    strstr(err, "unknown") || strstr(err, ": item"))
			fprintf(stderr, "%s=\"%s\": %s%s  (\"%s\": %s)\n",
				name, forms[i], out, err, clean, out0);
	}
}

/* name=bad is reported as such; name=good and name= say nothing */
static void word(const char *name, const char *bad, const char *good)
{
	char out[512], err[2048], want[256];

	snprintf(want, sizeof(want), "%s=\"%s\" is not", name, bad);
	run(name, bad, out, err, sizeof(out));
	if (!strstr(err, want))
		fprintf(stderr, "%s=\"%s\": wanted '%s' in: %s\n", name, bad,
			want, err);
	CHECK(strstr(err, want) != NULL);
	run(name, good, out, err, sizeof(out));
	CHECK(!strstr(err, name));
	run(name, "", out, err, sizeof(out));
	CHECK(!strstr(err, name));
}

/*
 * Near misses ([11/15]): a value one character or one habit away from a
 * good one. msg: what stderr must say (NULL: no complaint); want: what
 * the child's line must hold (NULL: exactly the line of a child without
 * the variable, i.e. nothing changed).
 */
static const struct near_miss {
	const char *name, *value, *msg, *want;
} near[] = {
#define CTL(v) { "SWITCHYARD_CONTROL", v, \
		 "SWITCHYARD_CONTROL=\"" v "\" is not 1 or 0", NULL }
	CTL("01"), CTL("10"), CTL("1 "), CTL(" 1"), CTL("1\n"), CTL("+1"),
	CTL("-1"), CTL("0x1"), CTL("1,"), CTL("on"), CTL("true"), CTL("O"),
	CTL("\xc2\xb9"),				/* superscript one */
	{ "SWITCHYARD_CONTROL", "1", NULL, " ctl=1 " },
	{ "SWITCHYARD_CONTROL", "0", NULL, NULL },
	{ "SWITCHYARD_CONTROL", "", NULL, NULL },	/* empty: default */
#define PM(v) { "SWITCHYARD_PATCH_METHOD", v, "SWITCHYARD_PATCH_METHOD=\"" \
		v "\" is not procmem, mprotect or auto: ignored (auto)", NULL }
	PM("mprotec"), PM("mprotectx"), PM("MPROTECT"), PM("Mprotect"),
	PM(" mprotect"), PM("mprotect "), PM("mprotect\n"), PM("m protect"),
	PM("mprotect,procmem"), PM("mprotect=1"), PM("procme"), PM("PROCMEM"),
	PM("proc-mem"), PM("Auto"), PM("autox"), PM("au"),
	PM("mpr\xc3\xb6tect"),
	{ "SWITCHYARD_PATCH_METHOD", "auto", NULL, NULL },
	{ "SWITCHYARD_PATCH_METHOD", "", NULL, NULL },
#define SC(v) { "SWITCHYARD_STATIC_CALL", v, "SWITCHYARD_STATIC_CALL=\"" v \
		"\" is not detour or patch: ignored (patch)", NULL }
	SC("detou"), SC("detours"), SC("Detour"), SC("DETOUR"), SC(" detour"),
	SC("detour "), SC("detour\t"), SC("de tour"), SC("detour,patch"),
	SC("detour=1"), SC("pat"), SC("patchx"), SC("PATCH"), SC("patch "),
	SC("d\xc3\xa9tour"),
	{ "SWITCHYARD_STATIC_CALL", "detour", NULL, " scw=0\n" },
	{ "SWITCHYARD_STATIC_CALL", "patch", NULL, NULL },
	{ "SWITCHYARD_STATIC_CALL", "", NULL, NULL },
#define CM(v) { "SWITCHYARD_CPU_MASK", v, \
		"unknown CPU feature '" v "' ignored", NULL }
	CM("SSE2"), CM("Sse2"), CM("sse22"), CM("sse2x"), CM("ss"),
	CM("sse_2"), CM(" sse2"), CM("sse2 "), CM("sse2\t"), CM("sse2=1"),
	CM("sse2=0"), CM("-sse2"), CM("!sse2"), CM("sse2;erms"), CM("sse2:"),
	CM("sse\xc2\xb2"), CM("avx512"), CM("avx512_cop"), CM("rep_goo"),
	CM("sse2xxxxxxxxxxxxxxxxxxxxxxxxxxx"),		/* 31 characters */
	CM("sse2xxxxxxxxxxxxxxxxxxxxxxxxxxxx"),		/* 32: too long */
	/* an unknown item does not spoil the known ones beside it */
	{ "SWITCHYARD_CPU_MASK", "SSE2,sse2", "unknown CPU feature 'SSE2'",
	  " sse2=0 " },
	{ "SWITCHYARD_CPU_MASK", "sse2 ,movbe", "unknown CPU feature 'sse2 '",
	  "movbe=0 sse2=1 " },
	{ "SWITCHYARD_CPU_MASK", "sse2,sse2", NULL, " sse2=0 " },
	{ "SWITCHYARD_CPU_MASK", "", NULL, NULL },
};

static void near_misses(void)
{
	char out0[512], out[512], err[2048];

	run(NULL, NULL, out0, err, sizeof(out0));
	CHECK(strstr(out0, " ctl=0 ") != NULL);
	if (!SC_PATCHED)
		printf("(static calls are not patched here: "
		       "SWITCHYARD_STATIC_CALL not tried)\n");
	if (!strstr(out0, " sse2=1 "))
		printf("(no sse2: the mask's near misses not tried)\n");
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		const struct near_miss *m = &near[i];
		bool ok;

		if (!strcmp(m->name, "SWITCHYARD_CPU_MASK") &&
		    !strstr(out0, " sse2=1 "))
			continue;
		if (!strcmp(m->name, "SWITCHYARD_STATIC_CALL") && !SC_PATCHED)
			continue;
		run(m->name, m->value, out, err, sizeof(out));
		ok = m->want ? strstr(out, m->want) != NULL :
			       !strcmp(out, out0);
		if (m->msg)
			ok = ok && strstr(err, m->msg);
		else
			/* the complaints' forms ('NAME="value" is not',
			 * "unknown CPU feature"); not an INFO such as "rseq
			 * is not registered" under valgrind */
			ok = ok && !strstr(err, "\" is not") &&
			     !strstr(err, "unknown CPU feature");
		CHECK(ok);
		if (!ok)
			fprintf(stderr, "%s=\"%s\": wanted '%s' and %s; "
				"got: %s%s(unset: %s)\n", m->name, m->value,
				m->want ? m->want : "no change",
				m->msg ? m->msg : "no complaint", out, err,
				out0);
	}
	/* mprotect: a writable+executable window per write (where auto
	 * needs one too, the two cannot be told apart here) */
	run("SWITCHYARD_PATCH_METHOD", "mprotect", out, err, sizeof(out));
	CHECK(!strstr(out, " rwx=0 "));
	if (strstr(out0, " rwx=0 ")) {
		run("SWITCHYARD_PATCH_METHOD", "procmem", out, err,
		    sizeof(out));
		CHECK(!strcmp(out, out0));
	}
}

int main(int argc, char **argv)
{
	static const char *const keys[] = {
		"list_a=on,-list_b,", ",list_a=on,-list_b",
		"list_a=on,,-list_b", ",,list_a=on,,,-list_b,,",
	};
	static const char *const memcpy_v[] = {
		"short_max=40,rep_min=4096,", ",short_max=40,rep_min=4096",
		"short_max=40,,rep_min=4096",
	};
	static const char *const mask[] = {
		F1 "," F2 ",", "," F1 "," F2, F1 ",," F2, ",," F1 ",," F2 ",,",
	};
	char out[512], err[2048];
	ssize_t len;

	(void)argv;
	if (argc > 1)
		return child();
#if !SY_TEST_HAVE_SITES
	SKIP("no patched sites: keys set from the environment not visible");
#endif
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		SKIP("readlink /proc/self/exe");
	self[len] = 0;

	same("SWITCHYARD_KEYS", "list_a=on,-list_b", keys,
	     sizeof(keys) / sizeof(keys[0]), "a=1 b=0 ");
	same("SWITCHYARD_MEMCPY", "short_max=40,rep_min=4096", memcpy_v,
	     sizeof(memcpy_v) / sizeof(memcpy_v[0]), "short_max=40 ");
	same("SWITCHYARD_CPU_MASK", F1 "," F2, mask,
	     sizeof(mask) / sizeof(mask[0]), F1 "=0 " F2 "=0");
	/* nothing but commas: nothing set, nothing said (KEYS, CPU_MASK) */
	run("SWITCHYARD_KEYS", ",,", out, err, sizeof(out));
	CHECK(strstr(out, "a=0 b=1 ") != NULL);
	CHECK_EQ(err[0], 0);
	run("SWITCHYARD_CPU_MASK", ",", out, err, sizeof(out));
	CHECK_EQ(err[0], 0);
	/* a blank is no separator: one unknown name, reported */
	run("SWITCHYARD_CPU_MASK", F1 " " F2, out, err, sizeof(out));
	CHECK(strstr(err, "unknown CPU feature '" F1 " " F2 "'") != NULL);
	word("SWITCHYARD_CONTROL", "yes", "0");
	word("SWITCHYARD_PATCH_METHOD", "proc-mem", "mprotect");
	word("SWITCHYARD_PATCH_METHOD", "procmem ", "auto");
	if (SC_PATCHED)
		word("SWITCHYARD_STATIC_CALL", "detours", "patch");
	near_misses();
	return sy_test_done("env_lists");
}
