/* SPDX-License-Identifier: MIT */
/*
 * switchyard/runtime_const.h - run-time constants, with the kernel's API
 * (<asm/runtime-const.h>): a value chosen once at start-up and written as
 * an immediate into every place that reads it, so the hot path loads
 * nothing.
 *
 *   static unsigned long table_base;     // any object, exported or not
 *   static unsigned int table_shift;
 *   ...
 *   table_base = ...; table_shift = ...;
 *   runtime_const_init(ptr, table_base);
 *   runtime_const_init(shift, table_shift);
 *   ...
 *   p = runtime_const_ptr(table_base) + (h >> ...);
 *   i = runtime_const_shift_right_32(h, table_shift);
 *   n = runtime_const_u32(limit);        // a 32-bit immediate (not kernel)
 *
 * Before runtime_const_init() for a variable, its sites read the variable
 * itself (an out-of-line load): the result is always the variable's value
 * at the time of the read, or the value it had at runtime_const_init().
 * Changing the variable after its init does not change the patched sites
 * (as in the kernel): init once. Where sites are not patched (other
 * architectures than x86-64 and AArch64, SWITCHYARD_NO_PATCHING) they
 * always read the variable.
 *
 * runtime_const_init(type, sym) - writes sym's current value into every
 * site of sym in every loaded object, and into the sites of objects loaded
 * later (dlopen). type is ptr (sym: 8 bytes), u32 (4 bytes) or shift
 * (4 bytes, the value masked to 0..31); a site of sym that reads it in
 * another form gets its own form of the value. Returns 0, -EBUSY (sites of
 * sym already hold another value: a second init with a different value
 * cannot be written while other threads may be reading them; nothing is
 * changed, reported), -EFAULT (a site holds unexpected bytes: reported),
 * -EDEADLK (from a signal handler that interrupted a switchyard call on the
 * same thread) or the write path's error. Thread-safe (the patch lock);
 * other threads may run the sites meanwhile (the immediate is written
 * behind a jump nobody takes, then the jump becomes a no-op: one byte on
 * x86-64, B -> NOP on AArch64; the keys' rule). Not async-signal-safe.
 *
 * The sites: x86-64 `movabs $imm64`, `mov $imm32`, `shr $imm8`
 * (arch/x86_64_runtime_const.h); AArch64 the kernel's arm64 forms, MOVZ +
 * 3 MOVK for a pointer, MOVZ + MOVK for a u32, LSR #imm for the shift
 * (arch/aarch64_runtime_const.h). Each behind its guard.
 *
 * runtime_const_ptr(sym), runtime_const_u32(sym),
 * runtime_const_shift_right_32(val, sym): the reads; thread-safe and
 * async-signal-safe. sym: an identifier, a variable of static storage.
 */
#ifndef SWITCHYARD_RUNTIME_CONST_H
#define SWITCHYARD_RUNTIME_CONST_H

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library side of runtime_const_init(); use the macro. */
SWITCHYARD_API int switchyard_runtime_const_init(const void *sym,
						 size_t size);

#ifdef __cplusplus
}
#endif

#define runtime_const_init(type, sym)                                          \
	switchyard_runtime_const_init(&(sym), sizeof(sym))

#if !defined(SWITCHYARD_NO_PATCHING) && defined(__x86_64__) &&               \
	(defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/x86_64_runtime_const.h>
#elif !defined(SWITCHYARD_NO_PATCHING) && defined(__aarch64__) &&            \
	(defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/aarch64_runtime_const.h>
#else
/* no patched sites: the variable, read each time */
#define runtime_const_ptr(sym)                                                 \
	((__typeof__(sym))__atomic_load_n(&(sym), __ATOMIC_RELAXED))
#define runtime_const_u32(sym)                                                 \
	((unsigned int)__atomic_load_n(&(sym), __ATOMIC_RELAXED))
#define runtime_const_shift_right_32(val, sym)                                 \
	((unsigned int)(val) >>                                                \
	 (__atomic_load_n(&(sym), __ATOMIC_RELAXED) & 31))
#endif

#endif /* SWITCHYARD_RUNTIME_CONST_H */
