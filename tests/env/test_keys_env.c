/* SPDX-License-Identifier: MIT */
/*
 * test_keys_env.c - SWITCHYARD_KEYS="GLOB=on|off,..." at start-up.
 *
 * The parent runs this program again as a child with a given
 * SWITCHYARD_KEYS and its stderr captured; the child prints which path
 * each key's site took (a site's path, not only the key's count: the
 * sites must have been patched) and the parent checks them and the
 * messages:
 *   - the program's keys are set before main(), a library's before its
 *     own constructor runs, a dlopen()ed plugin's before dlopen()
 *     returns, and again when it is loaded a second time;
 *   - the LAST matching item wins (env_*=on,env_b_2=off); +GLOB and
 *     -GLOB mean GLOB=on and GLOB=off;
 *   - an item that matches nothing is reported once, by its glob; one
 *     that matches a key is not;
 *   - a malformed value is reported and sets nothing at all;
 *   - near misses of a valid value (prefixes, suffixes, case, blanks,
 *     doubled separators) are refused or match nothing, exactly as
 *     switchyard(3) says, and set nothing;
 *   - without the variable nothing is printed and every key keeps its
 *     default.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_exec.h"
#include "sy_test.h"

#define CHECK_STR(got, want)                                                 \
	do {                                                                 \
		CHECK(!strcmp(got, want));                                   \
		if (strcmp(got, want))                                       \
			fprintf(stderr, "  got \"%s\"\n  want \"%s\"\n",   \
				got, want);                                  \
	} while (0)

DEFINE_STATIC_KEY_FALSE(env_a);
DEFINE_STATIC_KEY_TRUE(env_b_1);
DEFINE_STATIC_KEY_FALSE(env_b_2);
DEFINE_STATIC_KEY_FALSE(other_key);

extern int envlib_at_ctor;
int envlib_traced(void);

static int paths(void)
{
	int r = 0;

	if (static_branch_unlikely(&env_a))
		r |= 1;
	if (static_branch_likely(&env_b_1))
		r |= 2;
	if (static_branch_unlikely(&env_b_2))
		r |= 4;
	if (static_branch_unlikely(&other_key))
		r |= 8;
	return r;
}

/* Child: one line "main=M lib=L libctor=C plug1=P plug2=Q". */
static int child(const char *plugin)
{
	int plug[2] = { -1, -1 };

	for (int i = 0; i < 2; i++) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		int (*fn)(void);

		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", plugin, dlerror());
			return 1;
		}
		fn = (int (*)(void))dlsym(h, "envplug_path");
		plug[i] = fn ? fn() : -1;
		dlclose(h);
	}
	printf("main=%d lib=%d libctor=%d plug1=%d plug2=%d\n", paths(),
	       envlib_traced(), envlib_at_ctor, plug[0], plug[1]);
	return 0;
}

/* Run the child with SWITCHYARD_KEYS=env (NULL: unset); its stdout line
 * into out, its stderr into err. */
static void run(const char *self, const char *plugin, const char *env,
		char *out, size_t osize, char *err, size_t esize)
{
	char tmpl[] = "/tmp/sy-keys-env-XXXXXX";
	int fd = mkstemp(tmpl), po[2], status = 0;
	pid_t pid;
	ssize_t n;

	CHECK(fd >= 0 && !pipe(po));
	unlink(tmpl);
	pid = fork();
	if (!pid) {
		dup2(po[1], 1);
		dup2(fd, 2);
		if (env)
			setenv("SWITCHYARD_KEYS", env, 1);
		else
			unsetenv("SWITCHYARD_KEYS");
		char *const av[] = { (char *)self, (char *)"child",
				     (char *)plugin, NULL };

		sy_test_execv(self, av);
		_exit(127);
	}
	close(po[1]);
	for (size_t got = 0;; got += (size_t)n) {	/* to EOF */
		n = got < osize - 1 ? read(po[0], out + got, osize - 1 - got) : 0;
		if (n <= 0) {
			out[got] = '\0';
			break;
		}
	}
	close(po[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	n = pread(fd, err, esize - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

int main(int argc, char **argv)
{
	char out[256], err[4096];

	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
		return 2;
	}
#if !SY_TEST_HAVE_SITES
	SKIP("no patching on this architecture: the keys' counts are set "
	     "but there are no sites to check");
#endif

	/* 1. no variable: defaults, silence */
	run(argv[0], argv[1], NULL, out, sizeof(out), err, sizeof(err));
	CHECK_STR(out, "main=2 lib=0 libctor=0 plug1=1 plug2=1\n");
	CHECK_STR(err, "");

	/* 2. globs in order, the last match wins; an unknown name reported */
	run(argv[0], argv[1],
	    "env_*=on,env_b_2=off,envlib_trace=on,envplug_fast=off,nosuch_*=on",
	    out, sizeof(out), err, sizeof(err));
	/* env_a on (1), env_b_1 on (2), env_b_2 off, other_key off */
	CHECK_STR(out, "main=3 lib=1 libctor=1 plug1=0 plug2=0\n");
	CHECK(count(err, "\"nosuch_*\" matches no key") == 1);
	/* the plugin is loaded after start-up: named too, then set */
	CHECK(count(err, "\"envplug_fast\" matches no key") == 1);
	CHECK(count(err, "matches no key") == 2);
	CHECK(count(err, "SWITCHYARD_KEYS: envlib_trace on") == 1);
	CHECK(count(err, "SWITCHYARD_KEYS: env_a on") == 1);
	CHECK(count(err, "SWITCHYARD_KEYS: env_b_2 off") == 1);
	/* the plugin's key, decided at each of its two loads */
	CHECK(count(err, "SWITCHYARD_KEYS: envplug_fast off") == 2);

	/* 2b. the +GLOB / -GLOB convention, mixed with the other */
	run(argv[0], argv[1], "+env_*,-env_b_1,envlib_trace=on", out,
	    sizeof(out), err, sizeof(err));
	/* env_a on (1), env_b_1 off, env_b_2 on (4) */
	CHECK_STR(out, "main=5 lib=1 libctor=1 plug1=1 plug2=1\n");
	CHECK(count(err, "matches no key") == 0);

	/* 3. a malformed item: reported, nothing set (env_a stays off) */
	run(argv[0], argv[1], "env_a=on,env_b_1=maybe", out, sizeof(out),
	    err, sizeof(err));
	CHECK_STR(out, "main=2 lib=0 libctor=0 plug1=1 plug2=1\n");
	CHECK(count(err, "item 2 (\"env_b_1=maybe\") is not NAME=on") == 1);
	CHECK(count(err, "SWITCHYARD_KEYS: env_a on") == 0);

	/* 4. more malformed values, each refused as a whole */
	static const char *const bad[] = { "=on", "env_a", "env_a=ON", "+",
					   "-" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(argv[0], argv[1], bad[i], out, sizeof(out), err,
		    sizeof(err));
		CHECK_STR(out, "main=2 lib=0 libctor=0 plug1=1 plug2=1\n");
		CHECK(count(err, "is not NAME=on or NAME=off") == 1);
	}

	/*
	 * 5. near misses (prefixes, suffixes, case, blanks, doubled
	 * separators, the other field's word), each with its documented
	 * outcome (switchyard(3) ENVIRONMENT: a blank is part of its item;
	 * the value is exactly on or off; the last '=' splits, as a C++
	 * name may hold one):
	 *   BAD: reported as item ITEM, nothing set;
	 *   NONE: a glob that matches no key: reported by its glob, nothing
	 *         set;
	 *   otherwise: accepted, the program's keys as main=OUT.
	 */
	enum { BAD, NONE, SET };
	static const struct {
		const char *env;
		int kind;
		const char *what;	/* BAD: the item; NONE: the glob */
		int main;		/* SET: what main= must say */
	} near[] = {
		{ "env_a=of", BAD, "item 1 (\"env_a=of\")", 2 },
		{ "env_a=o", BAD, "item 1 (\"env_a=o\")", 2 },
		{ "env_a=onn", BAD, "item 1 (\"env_a=onn\")", 2 },
		{ "env_a=offx", BAD, "item 1 (\"env_a=offx\")", 2 },
		{ "env_a=Off", BAD, "item 1 (\"env_a=Off\")", 2 },
		{ "env_a=on ", BAD, "item 1 (\"env_a=on \")", 2 },
		{ "env_a= on", BAD, "item 1 (\"env_a= on\")", 2 },
		{ "env_a=on\t", BAD, "item 1 (\"env_a=on\t\")", 2 },
		{ "env_a=", BAD, "item 1 (\"env_a=\")", 2 },
		{ "env_a=1", BAD, "item 1 (\"env_a=1\")", 2 },
		{ "env_a=inc", BAD, "item 1 (\"env_a=inc\")", 2 },
		{ "env_a=env_b_1", BAD, "item 1 (\"env_a=env_b_1\")", 2 },
		{ "=", BAD, "item 1 (\"=\")", 2 },
		{ "+env_a=maybe", BAD, "item 1 (\"+env_a=maybe\")", 2 },
		{ "env_a=on;env_b_2", BAD, "item 1 (\"env_a=on;env_b_2\")", 2 },
		{ ",env_a=on,,env_b_2=of,", BAD, "item 4 (\"env_b_2=of\")", 2 },
		{ " env_a=on", NONE, "\" env_a\"", 2 },
		{ "env_a =on", NONE, "\"env_a \"", 2 },
		{ "ENV_A=on", NONE, "\"ENV_A\"", 2 },
		{ "Env_a=on", NONE, "\"Env_a\"", 2 },
		{ "env_=on", NONE, "\"env_\"", 2 },
		{ "env_aa=on", NONE, "\"env_aa\"", 2 },
		{ "env_a==on", NONE, "\"env_a=\"", 2 },
		{ "env_a=off=on", NONE, "\"env_a=off\"", 2 },
		{ "+env_a=on", NONE, "\"+env_a\"", 2 },
		{ "++env_a", NONE, "\"+env_a\"", 2 },
		{ "+ env_a", NONE, "\" env_a\"", 2 },
		{ "-=on", NONE, "\"-\"", 2 },
		{ "\xc3\xa9nv_a=on", NONE, "\"\xc3\xa9nv_a\"", 2 },
		{ ",,env_a=on,,", SET, NULL, 3 },
		{ "env_a=off,env_a=on", SET, NULL, 3 },
		{ "env_a=on,env_a=off", SET, NULL, 2 },
		{ "env_?=on", SET, NULL, 3 },
		{ "env_[a]=on", SET, NULL, 3 },
		{ "+env_a", SET, NULL, 3 },
		{ "-env_b_1", SET, NULL, 0 },
		{ "-env_b_?,+env_b_2", SET, NULL, 4 },
	};
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		char want[64];
		int before = sy_test_failures;
		int bad = near[i].kind == BAD, none = near[i].kind == NONE;

		run(argv[0], argv[1], near[i].env, out, sizeof(out), err,
		    sizeof(err));
		snprintf(want, sizeof(want), "main=%d lib=0 libctor=0 plug1=1 "
			 "plug2=1\n", near[i].main);
		CHECK_STR(out, want);
		CHECK(count(err, "is not NAME=on or NAME=off") == bad);
		CHECK(count(err, "matches no key") == none);
		if (near[i].what)
			CHECK(count(err, near[i].what) == 1);
		/* nothing set unless accepted (each set is logged) */
		if (near[i].kind != SET)
			CHECK(count(err, "SWITCHYARD_KEYS: env_") == 0);
		if (sy_test_failures != before)
			fprintf(stderr, "  SWITCHYARD_KEYS=\"%s\": %s\n",
				near[i].env, err);
	}
	return sy_test_done("test_keys_env");
}
