/* SPDX-License-Identifier: MIT */
/*
 * sy_check.h - the checks every test uses: CHECK() records a failure and
 * goes on; sy_test_done() prints the tally and gives the exit code (1 if
 * any check failed); SKIP() exits 77 (ctest SKIP_RETURN_CODE). Nothing here
 * needs libswitchyard: a test program that must not depend on it, not even
 * through <switchyard.h> (whose per-object glue calls into the library),
 * includes this alone; the others include sy_test.h.
 */
#ifndef SY_CHECK_H
#define SY_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sy_test_failures;
static int sy_test_checks;

#define CHECK(cond)                                                          \
	do {                                                                 \
		sy_test_checks++;                                            \
		if (!(cond)) {                                               \
			sy_test_failures++;                                  \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n",         \
				__FILE__, __LINE__, #cond);                  \
		}                                                            \
	} while (0)

#define CHECK_EQ(a, b)                                                       \
	do {                                                                 \
		long long sy_a_ = (long long)(a), sy_b_ = (long long)(b);    \
		sy_test_checks++;                                            \
		if (sy_a_ != sy_b_) {                                        \
			sy_test_failures++;                                  \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s "     \
				"(%lld != %lld)\n", __FILE__, __LINE__, #a,  \
				#b, sy_a_, sy_b_);                           \
		}                                                            \
	} while (0)

#define SKIP(...)                                                            \
	do {                                                                 \
		printf("SKIP: ");                                            \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
		exit(77);                                                    \
	} while (0)

/*
 * Whether this test runs under an emulator: a cross build's tests run
 * under qemu-user, which translates every instruction (SY_TEST_EMULATOR,
 * set by the build: CMakeLists.txt). The longest exhaustive checks sample
 * there, as under a sanitizer, and say so.
 */
static inline int sy_test_emulated(void)
{
	const char *e = getenv("SY_TEST_EMULATOR");

	return e && *e;
}

static inline int sy_test_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, sy_test_checks,
	       sy_test_failures);
	return sy_test_failures ? 1 : 0;
}

#endif /* SY_CHECK_H */
