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
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static int child(void)
{
	struct switchyard_memcpy_thresholds t;
	int r;

	switchyard_memcpy_get_thresholds(&t);
	printf("a=%d b=%d short_max=%u rep_min=%u source=%d erms=%d "
	       "movbe=%d\n", a_on(), b_on(), t.short_max, t.rep_min,
	       (int)t.source, boot_cpu_has(X86_FEATURE_ERMS),
	       boot_cpu_has(X86_FEATURE_MOVBE));
	fflush(stdout);
	/* code is written (SWITCHYARD_PATCH_METHOD is read) and a static
	 * call is updated (SWITCHYARD_STATIC_CALL is read) */
	r = static_branch_enable(&list_a) | static_branch_disable(&list_a);
	static_call_update(env_call, call_two);
	return r || static_call(env_call)(1) != 3;
}

static char self[4096];

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
		execl(self, "test_env_lists", "--child", (char *)NULL);
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
		"erms,movbe,", ",erms,movbe", "erms,,movbe", ",,erms,,movbe,,",
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
	same("SWITCHYARD_CPU_MASK", "erms,movbe", mask,
	     sizeof(mask) / sizeof(mask[0]), "erms=0 movbe=0");
	/* nothing but commas: nothing set, nothing said (KEYS, CPU_MASK) */
	run("SWITCHYARD_KEYS", ",,", out, err, sizeof(out));
	CHECK(strstr(out, "a=0 b=1 ") != NULL);
	CHECK_EQ(err[0], 0);
	run("SWITCHYARD_CPU_MASK", ",", out, err, sizeof(out));
	CHECK_EQ(err[0], 0);
	/* a blank is no separator: one unknown name, reported */
	run("SWITCHYARD_CPU_MASK", "erms movbe", out, err, sizeof(out));
	CHECK(strstr(err, "unknown CPU feature 'erms movbe'") != NULL);
	word("SWITCHYARD_CONTROL", "yes", "0");
	word("SWITCHYARD_PATCH_METHOD", "proc-mem", "mprotect");
	word("SWITCHYARD_PATCH_METHOD", "procmem ", "auto");
	word("SWITCHYARD_STATIC_CALL", "detours", "patch");
	return sy_test_done("env_lists");
}
