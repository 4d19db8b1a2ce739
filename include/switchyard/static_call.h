/* SPDX-License-Identifier: MIT */
/*
 * switchyard/static_call.h - static calls, with the API of the Linux kernel's
 * <linux/static_call.h>: a call whose target is chosen at run time and
 * changed rarely.
 *
 *   DEFINE_STATIC_CALL(my_call, default_impl);     // in one file
 *   DECLARE_STATIC_CALL(my_call, default_impl);    // in a header
 *   ret = static_call(my_call)(arg1, arg2);
 *   static_call_update(my_call, other_impl);
 *
 * What this build does, on every architecture: a static call loads its
 * key's target (one load, acquire) and calls it indirectly; an update is
 * one atomic store, under the patch lock. Patched call sites (a direct
 * `call rel32` at each site) are not built yet; they will keep this API and
 * the key's layout (its reserved fields are for them).
 *
 * Signatures: any function type works (integer, pointer, floating point or
 * struct arguments and returns, any number of them, variadic): the call is
 * an ordinary C call through a pointer of the function's type. A target of
 * another type does not build: static_call_update() checks it at compile
 * time, in C (an incompatible pointer is made an error, whatever the
 * warning flags) and in C++. NULL is accepted as a target.
 *
 * NULL and RET0 targets. static_call() of a NULL target calls address 0,
 * as in the kernel (a crash): use static_call_cond() for calls that may
 * have none. static_call_cond() is for functions returning void: with a
 * NULL target it calls an empty function instead, with the call's
 * arguments, which it ignores; a DEFINE_STATIC_CALL_RET0() target is
 * __static_call_return0(), which returns 0 (or NULL) whatever it is passed.
 * Both rest on what the kernel's generic static calls rest on: in the
 * x86-64 and AArch64 calling conventions, arguments a callee does not read
 * are harmless (C calls that undefined behaviour; clang's
 * -fsanitize=function reports it).
 *
 * Keys are global variables like static keys: defined in one object,
 * declared and called from others (executable, shared libraries, dlopen).
 * Every call here is thread-safe; static_call(), static_call_cond() and
 * static_call_query() are also async-signal-safe (a load).
 */
#ifndef SWITCHYARD_STATIC_CALL_H
#define SWITCHYARD_STATIC_CALL_H

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The key: the current target, and room for the registry of patched sites
 * (zero until then). Its size is ABI: fields are appended into the reserved
 * room, never moved.
 */
struct static_call_key {
	void (*func)(void);	/* the current target, cast; NULL for none */
	void *sy_reserved[3];
};

/* The kernel's names for a static call's key and for the symbol whose type
 * is the call's type (declared, never defined here: only its type is used). */
#define STATIC_CALL_KEY(name) __SCK__##name
#define STATIC_CALL_TRAMP(name) __SCT__##name

/*
 * __static_call_return0 - returns 0, ignoring its arguments: the target of
 * DEFINE_STATIC_CALL_RET0() keys. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API long __static_call_return0(void);

/*
 * __static_call_update - set key's target (use static_call_update(), which
 * checks the type). Returns 0, or -EDEADLK from a signal handler that
 * interrupted a switchyard call on the same thread (then nothing changed).
 * Thread-safe: takes the patch lock (or notices the caller holds it).
 */
SWITCHYARD_API int __static_call_update(struct static_call_key *key,
					void (*func)(void));

/* Acquire: a caller that gets the new target also sees what the updater
 * wrote before the update (pairs with the release in static_call.c). */
static inline void (*sy__static_call_load(struct static_call_key *key))(void)
{
	return __atomic_load_n(&key->func, __ATOMIC_ACQUIRE);
}

static inline void sy__static_call_nop(void)
{
}

static inline void (*sy__static_call_cond_load(struct static_call_key *key))(void)
{
	void (*f)(void) = sy__static_call_load(key);

	return f ? f : sy__static_call_nop;
}

#ifdef __cplusplus
}
#endif

#define DECLARE_STATIC_CALL(name, func)                                        \
	extern struct static_call_key STATIC_CALL_KEY(name);                   \
	extern __typeof__(func) STATIC_CALL_TRAMP(name)

#define SY__DEFINE_STATIC_CALL(name, func, init)                               \
	DECLARE_STATIC_CALL(name, func);                                       \
	struct static_call_key STATIC_CALL_KEY(name) = {                       \
		(void (*)(void))(init), { 0, 0, 0 } }

/* A static call whose target is func. */
#define DEFINE_STATIC_CALL(name, func) SY__DEFINE_STATIC_CALL(name, func, func)
/* A static call with no target yet (static_call_cond() does nothing). */
#define DEFINE_STATIC_CALL_NULL(name, func)                                    \
	SY__DEFINE_STATIC_CALL(name, func, 0)
/* A static call whose target returns 0 (__static_call_return0). */
#define DEFINE_STATIC_CALL_RET0(name, func)                                    \
	SY__DEFINE_STATIC_CALL(name, func, __static_call_return0)

/* The kernel exports keys to modules; here every object sees them: a
 * declaration again, so that the user's ";" after it stays valid ISO C. */
#define EXPORT_STATIC_CALL(name)                                               \
	extern struct static_call_key STATIC_CALL_KEY(name)
#define EXPORT_STATIC_CALL_GPL(name) EXPORT_STATIC_CALL(name)
#define EXPORT_STATIC_CALL_TRAMP(name) EXPORT_STATIC_CALL(name)
#define EXPORT_STATIC_CALL_TRAMP_GPL(name) EXPORT_STATIC_CALL(name)

/* static_call(name)(args...) - call name's current target. */
#define static_call(name)                                                      \
	((__typeof__(&STATIC_CALL_TRAMP(name)))                                \
		 sy__static_call_load(&STATIC_CALL_KEY(name)))

/* static_call_cond(name)(args...) - the same for a void function, and
 * nothing when the target is NULL. */
#define static_call_cond(name)                                                 \
	(void)((__typeof__(&STATIC_CALL_TRAMP(name)))                          \
		       sy__static_call_cond_load(&STATIC_CALL_KEY(name)))

/* static_call_query(name) - the current target (NULL for none). */
#define static_call_query(name)                                                \
	((__typeof__(&STATIC_CALL_TRAMP(name)))                                \
		 sy__static_call_load(&STATIC_CALL_KEY(name)))

/*
 * static_call_update(name, func) - make func (NULL, or a function of the
 * call's type) the target of every later call; an expression: 0 or a
 * negative errno (see __static_call_update()). A function of another type
 * is a compile-time error in C and in C++.
 */
#ifdef __cplusplus
#define static_call_update(name, func)                                         \
	__extension__({                                                        \
		__typeof__(&STATIC_CALL_TRAMP(name)) sy__f = (func);           \
		__static_call_update(&STATIC_CALL_KEY(name),                   \
				     (void (*)(void))sy__f);                   \
	})
#else
#define static_call_update(name, func)                                         \
	__extension__({                                                        \
		_Pragma("GCC diagnostic push")                                 \
		_Pragma("GCC diagnostic error \"-Wincompatible-pointer-types\"") \
		__typeof__(&STATIC_CALL_TRAMP(name)) sy__f = (func);           \
		_Pragma("GCC diagnostic pop")                                  \
		__static_call_update(&STATIC_CALL_KEY(name),                   \
				     (void (*)(void))sy__f);                   \
	})
#endif

#endif /* SWITCHYARD_STATIC_CALL_H */
