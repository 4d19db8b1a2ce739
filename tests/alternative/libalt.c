/* SPDX-License-Identifier: MIT */
/*
 * libalt.c - a library with alternatives, opened by test_alternative after
 * start-up: its sites must be chosen before dlopen() returns. One site is
 * spoiled before registration (an int3 over its first byte, a BRK over its
 * first word on AArch64, written by a constructor that runs before the
 * header's glue), standing for a debugger's breakpoint: it must be
 * refused, not overwritten, and the others still chosen.
 */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "sy_check.h"
#include "alt_cases.h"

extern const char __start_sy_altinstr[] __attribute__((visibility("hidden")));
extern const char __stop_sy_altinstr[] __attribute__((visibility("hidden")));

const void *alt_lib_start = __start_sy_altinstr;
const void *alt_lib_stop = __stop_sy_altinstr;
uintptr_t alt_lib_spoiled;

#if defined(__aarch64__)
#define LIB_F1 KERNEL_HWCAP_ATOMICS
#define LIB_F2 KERNEL_HWCAP_CRC32
#define LIB_F3 KERNEL_HWCAP_AES
#define LIB_F4 KERNEL_HWCAP_SVE
#define LIB_MOV(n) "mov %w0, #" #n
#else
#define LIB_F1 X86_FEATURE_AVX2
#define LIB_F2 X86_FEATURE_XMM2
#define LIB_F3 X86_FEATURE_ERMS
#define LIB_F4 X86_FEATURE_AVX512F
#define LIB_MOV(n) "mov $" #n ", %k0"
#endif

ALT_CASES(lib_f1, LIB_F1)
ALT_CASES(lib_f2, LIB_F2)
ALT_CASES_2(lib_two, LIB_F3, LIB_F4)

__attribute__((noinline)) int alt_lib_bad(void)
{
	int x;

	/* one of the two applies on any CPU: the site always changes */
	__asm__ volatile(ALTERNATIVE_2(LIB_MOV(1), LIB_MOV(2), LIB_F2,
				       LIB_MOV(3), ALT_NOT(LIB_F2))
			 : "=r"(x));
	return x;
}

static void spoil(void)
{
	const int32_t *r = (const int32_t *)alt_lib_start;

	/* through /proc/self/mem, as a debugger writes (no change of
	 * protection: this very code may share the page) */
	for (; (const void *)r < alt_lib_stop; r += 4) {
		uintptr_t site = (uintptr_t)r + (intptr_t)r[0];
		int fd;

		if (site < (uintptr_t)alt_lib_bad ||
		    site >= (uintptr_t)alt_lib_bad + 32)
			continue;
		fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return;
		if (pwrite(fd, alt_trap, ALT_TRAP_LEN, (off_t)site) ==
		    ALT_TRAP_LEN)
			alt_lib_spoiled = site;
		close(fd);
		return;
	}
}

/* The library's own checks: failures, 0 if none. */
int alt_lib_run(void)
{
	ALT_CHECK(lib_f1, LIB_F1);
	ALT_CHECK(lib_f2, LIB_F2);
	ALT_CHECK_2(lib_two, LIB_F3, LIB_F4);
	return sy_test_failures;
}

/* Before the glue's constructor (.init_array.00099); the priority is below
 * what constructor() accepts without a warning, hence the section. */
__attribute__((section(".init_array.00098"), used))
static void (*const spoil_early)(void) = spoil;
