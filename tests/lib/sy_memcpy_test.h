/* SPDX-License-Identifier: MIT */
/*
 * sy_memcpy_test.h - what the copy routine's tests share about the name
 * switchyard_memcpy (src/copy/memcpy_entry.c).
 */
#ifndef SY_MEMCPY_TEST_H
#define SY_MEMCPY_TEST_H

/* The name resolves to the C library's function (an IFUNC), except in a
 * library built with ASan or TSan, whose run-time is not up when the
 * resolver would run: there a jump through a pointer. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SY_TEST_MEMCPY_IFUNC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SY_TEST_MEMCPY_IFUNC 0
#endif
#endif
#ifndef SY_TEST_MEMCPY_IFUNC
#define SY_TEST_MEMCPY_IFUNC 1
#endif

/* Two functions' addresses compared at run time: the compiler takes two
 * distinct functions to have distinct addresses and folds "==" to 0, but
 * an IFUNC may resolve to the other one. */
static __attribute__((unused)) int same_fn(void *a, void *b)
{
	__asm__("" : "+r"(a));
	return a == b;
}

#endif /* SY_MEMCPY_TEST_H */
