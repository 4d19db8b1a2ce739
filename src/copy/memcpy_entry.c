/* SPDX-License-Identifier: MIT */
/*
 * memcpy_entry.c - what the name switchyard_memcpy stands for: the arch's
 * dispatcher, or the C library's memcpy itself.
 *
 * Where the C library has GNU indirect functions (glibc), switchyard_memcpy
 * is one: the dynamic linker asks mc_resolve() once which code the name
 * stands for, and every caller's call then goes straight there. So where the
 * C library's memcpy takes every size (libc_min 0: a CPU that no
 * measurement covers, or one where our code lost somewhere, memcpy.c), a
 * call of switchyard_memcpy IS a call of that function: not one
 * instruction or jump more (a tail jump in between cost a cycle, 12% of a
 * small copy, on the AMD EPYC measured).
 *
 * Compiled twice (CMakeLists.txt):
 *  - for the shared library, SY_MC_RESOLVER_DECIDES: the resolver runs
 *    while the dynamic linker relocates an object that refers to
 *    switchyard_memcpy (or, with lazy binding, at its first call), after
 *    this library and the C library are relocated (dependencies first), so
 *    it may call them: sy_mc_decided() reads the table, the file and the
 *    environment (the same calls as the constructor's, only earlier).
 *    memcpy's address here is this library's GOT entry: the C library's own
 *    IFUNC choice for this CPU.
 *  - for the static library: the resolver runs while the program itself is
 *    relocated, before its calls into the C library work (a call crashed),
 *    so it calls nothing and takes the dispatcher, which routes sizes from
 *    129 bytes to the C library when libc_min is 0 (the run-time constant,
 *    written by the constructor) and keeps the short ones.
 */
#include <string.h>

#include "memcpy_impl.h"

/*
 * Not in a library built with AddressSanitizer or ThreadSanitizer: the
 * resolver runs while the dynamic linker relocates, before the
 * sanitizer's run-time has set up its shadow memory, and the instrumented
 * code it calls (the configuration's reading) crashed on its first
 * access. Such a build takes the jump through a pointer below.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SY__NO_IFUNC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define SY__NO_IFUNC 1
#endif
#endif

#if defined(__GLIBC__) && defined(__ELF__) && !defined(SY__NO_IFUNC) && \
	(defined(SY_MC_RESOLVER_DECIDES) || defined(SY_ARCH_HAVE_MEMCPY))
int sy_mc_entry_is_libc(void)
{
#ifdef SY_MC_RESOLVER_DECIDES
	return !sy_arch_mc_entry() || !sy_mc_decided()->libc_min;
#else
	/* the static library's: the dispatcher, always (above) */
	return 0;
#endif
}

/* The static library's resolver calls only sy_arch_mc_entry(), a direct
 * call within the program, and takes no address through the GOT. */
static __attribute__((used)) switchyard_memcpy_fn mc_resolve(void)
{
	return sy_mc_entry_is_libc() ? memcpy : sy_arch_mc_entry();
}

void *switchyard_memcpy(void *dst, const void *src, size_t n)
	__attribute__((ifunc("mc_resolve")));
#elif !defined(SY_ARCH_HAVE_MEMCPY)
/* No code of our own (and no resolver that may read memcpy's address this
 * early): the C library's, one tail call away. */
int sy_mc_entry_is_libc(void)
{
	return 1;
}

void *switchyard_memcpy(void *dst, const void *src, size_t n)
{
	return memcpy(dst, src, n);
}
#else
/* No indirect functions: one jump through a pointer, chosen once. */
int sy_mc_entry_is_libc(void)
{
	return !sy_mc_decided()->libc_min;
}

void *switchyard_memcpy(void *dst, const void *src, size_t n)
{
	static switchyard_memcpy_fn fn;
	switchyard_memcpy_fn f = __atomic_load_n(&fn, __ATOMIC_RELAXED);

	if (!f) {
		f = sy_mc_entry_is_libc() ? memcpy : sy_arch_mc_entry();
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
	}
	return f(dst, src, n);
}
#endif
