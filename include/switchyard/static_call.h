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
 * On x86-64 (gcc, clang), every static_call() is a patched site: a direct
 * `call rel32` to the current target (arch/x86_64_static_call.h has the
 * bytes), re-targeted by static_call_update() while other threads call
 * through it, exactly (every call goes to the old or the new target, once),
 * with no signal, through the poke engine of the keys (src/static_call.c and
 * doc/DESIGN.md "Static calls" give the protocol and the rule behind each
 * step). A NULL target leaves no call at the site, a RET0 target an inline
 * `xor %eax,%eax`. A target beyond rel32 reach (a function in a shared
 * library called from the executable, usually) is called through a stub
 * within reach that jumps to it (or, when no page near the site can be
 * had, through the detour). A process where libc did not register rseq
 * (valgrind, GLIBC_TUNABLES=glibc.pthread.rseq=0), and
 * SWITCHYARD_STATIC_CALL=detour in the environment leave the site on its
 * detour: an indirect call through the key, as exact. On AArch64 (gcc,
 * clang) a site is one `bl` to the current target (to a stub near the site
 * for a far one; a NOP for NULL; RET0 is a call to __static_call_return0),
 * rewritten in place by one aligned word store (the Arm ARM lets BL and
 * NOP replace each other under running threads), or `bl` to the site's
 * veneer, which calls through the key (arch/aarch64_static_call.h).
 * Elsewhere, and with SWITCHYARD_NO_PATCHING, a static call loads its
 * key's target (acquire) and calls it indirectly.
 *
 * Signatures of a patched site: up to six arguments, each an integer or
 * pointer of at most 8 bytes, returning void, such an integer or a pointer.
 *  - C: the function's parameter types are not visible to a macro, so they
 *    are tested at compile time: other signatures (double, struct, char,
 *    short, _Bool or float parameters, variadic functions, double or struct
 *    returns, more than six arguments) do not build, with a message
 *    "static_call(): in C ..." or the compiler's "incompatible type for
 *    argument". Known gap: a __int128 parameter is not detected (do not).
 *    Each argument is passed as the 64-bit value of its own type, which is
 *    what the callee reads for int-sized and wider parameters.
 *  - C++: templates see the exact types (char, short, bool parameters
 *    work); any other signature, and in a build with exceptions a function
 *    type that is not noexcept, compiles to an indirect call through the
 *    key instead (correct for every signature; an exception cannot unwind
 *    through an asm statement). SWITCHYARD_STATIC_CALL_NOTHROW defined
 *    before the header promises that no target throws.
 * At a patched x86-64 site the enclosing function gets a frame pointer;
 * the site costs its call plus 6 instructions (stack step, arm, guard).
 * gdb steps over a site and backtraces through it (the detour has unwind
 * info). An AArch64 site is its BL; the function around it saves d8-d15
 * once (the asm says the vector registers change, and a callee keeps only
 * their low halves).
 *
 * Beyond the kernel's API (its paravirt ops have them, see below):
 * DEFINE_STATIC_CALL_NATIVE (sites with room for an inline native
 * instruction sequence) and DEFINE_STATIC_CALL_CALLEE_SAVE (sites that
 * clobber only rax, for targets that preserve every other register).
 *
 * Threads created with a raw clone() that libc did not register with rseq
 * are not protected by the protocol: do not call patched sites from them
 * while updates run.
 *
 * Without a patched site (detour or fallback), any function type works
 * (integer, pointer, floating point or struct arguments and returns, any
 * number of them, variadic): the call is an ordinary C call through a
 * pointer of the function's type. A target of another type does not build:
 * static_call_update() checks it at compile time, in C (an incompatible
 * pointer is made an error, whatever the warning flags) and in C++. NULL is
 * accepted as a target.
 *
 * NULL and RET0 targets. A patched site of a NULL target makes no call (the
 * return value is then undefined: use static_call_cond() for void
 * functions); an unpatched static_call() of a NULL target calls address 0,
 * as in the kernel (a crash). static_call_cond() is for functions returning
 * void: with a NULL target it calls nothing; a DEFINE_STATIC_CALL_RET0()
 * target is __static_call_return0(), which returns 0 (or NULL) whatever it
 * is passed. The unpatched forms rest on what the kernel's generic static
 * calls rest on: in the x86-64 and AArch64 calling conventions, arguments a
 * callee does not read are harmless (C calls that undefined behaviour;
 * clang's -fsanitize=function reports it).
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

/* The kernel's names for a static call's key and for its trampoline (no
 * trampoline exists here: the name is kept for code that spells it). The
 * call's type is a typedef, SY__SC_TYPE(name): a function declared for its
 * type alone made g++ and clang warn "declared static but never defined"
 * for a call defined in an anonymous namespace. */
#define STATIC_CALL_KEY(name) __SCK__##name
#define STATIC_CALL_TRAMP(name) __SCT__##name
#define SY__SC_TYPE(name) __SCTYPE__##name

/*
 * __static_call_return0 - returns 0, ignoring its arguments: the target of
 * DEFINE_STATIC_CALL_RET0() keys. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API long __static_call_return0(void);

/*
 * __static_call_update - set key's target (use static_call_update(), which
 * checks the type). Returns 0, or -EDEADLK from a signal handler that
 * interrupted a switchyard call on the same thread, or -EFAULT (a site's
 * guard holds unexpected bytes: reported), or -EBUSY (a debugger's
 * breakpoint on the guard of a site whose payload the update must rewrite,
 * planted while the site was patched: reported, naming the call and the
 * site; delete the breakpoint and retry), or the write path's error when
 * the first step of the update fails: then nothing changed. A failure in a later step is not an error: the update
 * took effect and the key's sites call the target through their detour
 * (reported).
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

/*
 * What the sites of a static call see at compile time, as the size of a
 * typedef every declaration makes (a redeclaration with another kind in the
 * same translation unit does not build): the payload's room in bytes (5 to
 * 15: what an inline native may take) plus 16 for a callee-save call.
 */
#define SY__SC_KIND(name) __SCKIND__##name
#define SY__DECLARE_STATIC_CALL(name, func, kind)                              \
	extern struct static_call_key STATIC_CALL_KEY(name);                   \
	typedef __typeof__(func) SY__SC_TYPE(name);                            \
	typedef char SY__SC_KIND(name)[kind]
#define SY__SC_ROOM(room) ((room) >= 5 && (room) <= 15 ? (room) : -1)

#define DECLARE_STATIC_CALL(name, func) SY__DECLARE_STATIC_CALL(name, func, 5)

#define SY__DEFINE_STATIC_CALL(name, func, init, kind)                         \
	SY__DECLARE_STATIC_CALL(name, func, kind);                             \
	struct static_call_key STATIC_CALL_KEY(name) = {                       \
		(void (*)(void))(init), { 0, 0, 0 } };                         \
	SY__NAME_RECORD(STATIC_CALL_KEY(name))

/* A static call whose target is func. */
#define DEFINE_STATIC_CALL(name, func)                                         \
	SY__DEFINE_STATIC_CALL(name, func, func, 5)
/* A static call with no target yet (static_call_cond() does nothing). */
#define DEFINE_STATIC_CALL_NULL(name, func)                                    \
	SY__DEFINE_STATIC_CALL(name, func, 0, 5)
/* A static call whose target returns 0 (__static_call_return0). */
#define DEFINE_STATIC_CALL_RET0(name, func)                                    \
	SY__DEFINE_STATIC_CALL(name, func, __static_call_return0, 5)

/*
 * Not in the kernel's static_call API (its paravirt ops have them):
 *
 * DECLARE_STATIC_CALL_NATIVE(name, func, room), DEFINE_STATIC_CALL_NATIVE()
 * - a static call whose sites have room bytes (5 to 15) for an inline
 * native (switchyard_static_call_native()) instead of 5. A site of such a
 * call that holds a call costs one NOP more.
 *
 * DECLARE_STATIC_CALL_CALLEE_SAVE(name, func),
 * DEFINE_STATIC_CALL_CALLEE_SAVE() - a static call whose sites clobber only
 * rax (AArch64: x0, x16, x17, lr), the flags and the vector state: its targets should be callee-save
 * functions (SWITCHYARD_CALLEE_SAVE_THUNK(), or hand-written with
 * SWITCHYARD_CALLEE_SAVE_ASM_ENTRY()). A site gets a direct call only to a
 * callee-save target; any other target is called through the site's
 * detour, which saves what a C function may change (correct, slower).
 *
 * Every declaration and definition of a static call in one translation unit
 * must be of the same kind.
 */
#define DECLARE_STATIC_CALL_NATIVE(name, func, room)                           \
	SY__DECLARE_STATIC_CALL(name, func, SY__SC_ROOM(room))
#define DEFINE_STATIC_CALL_NATIVE(name, func, room)                            \
	SY__DEFINE_STATIC_CALL(name, func, func, SY__SC_ROOM(room))
#define DECLARE_STATIC_CALL_CALLEE_SAVE(name, func)                            \
	SY__DECLARE_STATIC_CALL(name, func, 16 + 5)
#define DEFINE_STATIC_CALL_CALLEE_SAVE(name, func)                             \
	SY__DEFINE_STATIC_CALL(name, func, func, 16 + 5)

/*
 * switchyard_static_call_native - register code as the inline form of
 * func: a site whose target is func and whose room is at least len bytes
 * holds code (padded with a NOP) instead of a call; now and after every
 * later update. code must behave as a call to func at the site does (func
 * is what runs when the site goes through its detour), be position-
 * independent (no rip-relative operand, no branch out of it but to its
 * end), and change only rax, the flags and memory (callee-save sites rely
 * on that). A thread preempted before its last instruction restarts in the
 * detour, which calls func: every instruction but the last may change only
 * rax and the flags (say `movb $0,(%rdi)`, or `test; jz 1f; stc; 1:`);
 * at an ordinary site, not a callee-save one, a push is harmless too (the
 * detour aligns the stack itself, and the site restores rsp after its
 * payload: `push %rdi; popfq` is fine there).
 * len: 1 to 15.
 * On AArch64 a site is one word: it holds a B to a block near it that
 * runs code and then branches back after the site (written before any
 * site branches to it, never changed); code: whole 4-byte words, at most
 * 12 bytes (-EINVAL otherwise), position-independent, changing only x0,
 * x16, x17, the flags and memory; it runs whole (nothing restarts it).
 * Returns 0, -EINVAL (len, or func NULL), -ENOSPC (64 natives already),
 * -EEXIST (func has other code already), -EDEADLK (from a signal handler
 * that interrupted a switchyard call on the same thread), or an error of
 * the update of the sites already calling func (see __static_call_update).
 * Thread-safe (the patch lock); not async-signal-safe.
 */
#ifdef __cplusplus
extern "C" {
#endif
SWITCHYARD_API int switchyard_static_call_native(void (*func)(void),
						 const void *code,
						 size_t len);
#ifdef __cplusplus
}
#endif

/*
 * SWITCHYARD_STATIC_CALL_NATIVE(func, "insns") - assembles insns (AT&T
 * syntax on x86-64, A64 on AArch64) and registers them as func's inline
 * native before main() (or at dlopen). func: an identifier.
 */
#define SWITCHYARD_STATIC_CALL_NATIVE(func, insns)                             \
	__asm__(".pushsection .rodata.sy_native, \"a\"\n"                      \
		"sy__native_" #func ":\n\t" insns "\n"                         \
		"sy__native_" #func "_end:\n\t"                                \
		".popsection");                                                \
	extern const unsigned char sy__native_##func[]                         \
		__asm__("sy__native_" #func)                                   \
		__attribute__((visibility("hidden")));                         \
	extern const unsigned char sy__native_end_##func[]                     \
		__asm__("sy__native_" #func "_end")                            \
		__attribute__((visibility("hidden")));                         \
	__attribute__((constructor)) static void sy__native_reg_##func(void)   \
	{                                                                      \
		switchyard_static_call_native(                                 \
			(void (*)(void))func, sy__native_##func,               \
			(size_t)(sy__native_end_##func - sy__native_##func));  \
	}                                                                      \
	typedef char sy__native_semicolon_##func

/*
 * SWITCHYARD_CALLEE_SAVE_THUNK(func) - defines a callee-save function of
 * func's type that calls func (which must have external linkage, and C
 * linkage in C++) and preserves every general register but rax: the
 * kernel's PV_CALLEE_SAVE_REGS_THUNK. Name it SWITCHYARD_CALLEE_SAVE(func);
 * SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(func) declares it in other
 * translation units. Where static calls are not patched sites it is func
 * itself.
 */
#if (defined(__x86_64__) || (defined(__aarch64__) && defined(__LP64__))) && \
	(defined(__GNUC__) || defined(__clang__))
#if defined(__x86_64__)
#include <switchyard/arch/x86_64_callee_save.h>
#else
#include <switchyard/arch/aarch64_callee_save.h>
#endif
#define SWITCHYARD_CALLEE_SAVE(func) sy__callee_save_##func
#define SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(func)                             \
	extern __typeof__(func) SWITCHYARD_CALLEE_SAVE(func)                   \
		__asm__("sy__callee_save_" #func)
/* (the thunk's asm calls func by name, which -flto cannot see: the
 * pointer, kept, is a reference it does see) */
#define SWITCHYARD_CALLEE_SAVE_THUNK(func)                                     \
	SY__CALLEE_SAVE_THUNK(func, sy__callee_save_##func);                   \
	__attribute__((used)) static __typeof__(func) *const                   \
		sy__callee_save_ref_##func = func;                             \
	SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(func)
#else
#define SWITCHYARD_CALLEE_SAVE(func) func
#define SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(func)                             \
	extern __typeof__(func) func
#define SWITCHYARD_CALLEE_SAVE_THUNK(func)                                     \
	SWITCHYARD_DECLARE_CALLEE_SAVE_THUNK(func)
#endif

/* The kernel exports keys to modules; here every object sees them: a
 * declaration again, so that the user's ";" after it stays valid ISO C. */
#define EXPORT_STATIC_CALL(name)                                               \
	extern struct static_call_key STATIC_CALL_KEY(name)
#define EXPORT_STATIC_CALL_GPL(name) EXPORT_STATIC_CALL(name)
#define EXPORT_STATIC_CALL_TRAMP(name) EXPORT_STATIC_CALL(name)
#define EXPORT_STATIC_CALL_TRAMP_GPL(name) EXPORT_STATIC_CALL(name)

/*
 * struct sy__sc_meta - what a patched site knows of its static call (one per
 * site, emitted by static_call()); not API. Writable, not const: a const
 * one lands in .rodata in non-PIC code, and the linker then resolves its
 * key's address with a copy relocation, splitting a -Bsymbolic library's
 * key from the program's even under -fno-direct-access-external-data.
 */
struct sy__sc_meta {
	struct static_call_key *key;
	unsigned long kind;	/* room + 16 for a callee-save site */
};

#if !defined(SWITCHYARD_NO_PATCHING) && defined(__x86_64__) &&               \
	(defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/x86_64_static_call.h>
#elif !defined(SWITCHYARD_NO_PATCHING) && defined(__aarch64__) &&              \
	defined(__LP64__) && (defined(__GNUC__) || defined(__clang__))
#include <switchyard/arch/aarch64_static_call.h>
#endif

#ifdef SY__ARCH_HAVE_STATIC_CALL
/* ---- patched sites ------------------------------------------------------
 *
 * static_call(name)(args...) expands to
 *	({ <HEAD: the site's meta, the call's type> SY__SC_TAIL (args...) })
 * the preprocessor rescans SY__SC_TAIL together with the source's (args...):
 * that is how the arguments reach the asm with the kernel's syntax. The
 * argument count selects the asm (0..6, preprocessor-counted).
 */
#define SY__SC_ARG16(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13,   \
		     _14, _15, _16, ...)                                       \
	_16
#define SY__SC_NARGS(...)                                                      \
	SY__SC_ARG16(__VA_ARGS__, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, \
		     2, 1, 0)
#define SY__SC_HAS_COMMA(...)                                                  \
	SY__SC_ARG16(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, \
		     0)
#define SY__SC_COMMA(...) ,
#define SY__SC_CAT2_(a, b) a##b
#define SY__SC_CAT2(a, b) SY__SC_CAT2_(a, b)
#define SY__SC_CAT5(a, b, c, d, e) a##b##c##d##e
#define SY__SC_EMPTY_CASE_0001 ,
#define SY__SC_ISEMPTY_(a, b, c, d)                                            \
	SY__SC_HAS_COMMA(SY__SC_CAT5(SY__SC_EMPTY_CASE_, a, b, c, d))
/* 1 when called with no argument at all (Jens Gustedt's ISEMPTY) */
#define SY__SC_ISEMPTY(...)                                                    \
	SY__SC_ISEMPTY_(SY__SC_HAS_COMMA(__VA_ARGS__),                         \
			SY__SC_HAS_COMMA(SY__SC_COMMA __VA_ARGS__),            \
			SY__SC_HAS_COMMA(__VA_ARGS__()),                       \
			SY__SC_HAS_COMMA(SY__SC_COMMA __VA_ARGS__()))
#define SY__SC_N_1(...) 0
#define SY__SC_N_0(...) SY__SC_NARGS(__VA_ARGS__)
#define SY__SC_N(...)                                                          \
	SY__SC_CAT2(SY__SC_N_, SY__SC_ISEMPTY(__VA_ARGS__))(__VA_ARGS__)

#define SY__SC_TEMPS_0()
#define SY__SC_TEMPS_1(a) long sy__t1 = SY__SC_CONV(0, a);
#define SY__SC_TEMPS_2(a, b) SY__SC_TEMPS_1(a) long sy__t2 = SY__SC_CONV(1, b);
#define SY__SC_TEMPS_3(a, b, c)                                                \
	SY__SC_TEMPS_2(a, b) long sy__t3 = SY__SC_CONV(2, c);
#define SY__SC_TEMPS_4(a, b, c, d)                                             \
	SY__SC_TEMPS_3(a, b, c) long sy__t4 = SY__SC_CONV(3, d);
#define SY__SC_TEMPS_5(a, b, c, d, e)                                          \
	SY__SC_TEMPS_4(a, b, c, d) long sy__t5 = SY__SC_CONV(4, e);
#define SY__SC_TEMPS_6(a, b, c, d, e, f)                                       \
	SY__SC_TEMPS_5(a, b, c, d, e) long sy__t6 = SY__SC_CONV(5, f);

/* the site's asm: callee-save or not, as the call's kind says (both are
 * compiled, one is emitted: at -O0 clang emits both, one never runs) */
#ifdef __cplusplus
#define SY__SC_KIND_ASM(n)                                                     \
	(sy__sc_kind >= 16 ? SY__SC_ASM_CS(n, &sy__sc_meta, sy__sc_kind & 15)  \
			   : SY__SC_ASM(n, &sy__sc_meta, sy__sc_kind & 15))
#else
#define SY__SC_KIND_ASM(n)                                                     \
	__builtin_choose_expr(                                                 \
		sy__sc_kind >= 16,                                             \
		SY__SC_ASM_CS(n, &sy__sc_meta, sy__sc_kind & 15),              \
		SY__SC_ASM(n, &sy__sc_meta, sy__sc_kind & 15))
#endif
#define SY__SC_SITE(n, ...)                                                    \
	__extension__({                                                        \
		SY__SC_TEMPS_##n(__VA_ARGS__)                                  \
		SY__SC_KIND_ASM(n);                                            \
	})
#define SY__SC_SITE_N(n, ...) SY__SC_SITE(n, __VA_ARGS__)

#ifdef __cplusplus
#include <type_traits>
namespace sy {
template <unsigned I, class... A> struct sc_nth { typedef void type; };
template <class H, class... T> struct sc_nth<0, H, T...> { typedef H type; };
template <unsigned I, class H, class... T> struct sc_nth<I, H, T...> {
	typedef typename sc_nth<I - 1, T...>::type type;
};
/* A value that travels in one 64-bit integer register. */
template <class T> struct sc_word {
	static const bool value =
		(std::is_integral<T>::value || std::is_enum<T>::value ||
		 std::is_pointer<T>::value) && sizeof(T) <= 8;
};
template <> struct sc_word<void> { static const bool value = false; };
template <class... A> struct sc_words { static const bool value = true; };
template <class H, class... T> struct sc_words<H, T...> {
	static const bool value = sc_word<H>::value && sc_words<T...>::value;
};
#if defined(__cpp_exceptions) && !defined(SWITCHYARD_STATIC_CALL_NOTHROW)
#define SY__SC_EXCEPTIONS 1
#else
#define SY__SC_EXCEPTIONS 0
#endif
template <class F> struct sc_sig { static const bool direct = false; };
template <class R, class... A> struct sc_sig<R(A...)> {
	typedef R ret;
	template <unsigned I> struct arg { typedef typename sc_nth<I, A...>::type type; };
	static const bool direct = !SY__SC_EXCEPTIONS && sizeof...(A) <= 6 &&
		sc_words<A...>::value &&
		(std::is_void<R>::value || sc_word<R>::value);
};
template <class R, class... A> struct sc_sig<R(A..., ...)> {
	typedef R ret;
	static const bool direct = false;
};
#ifdef __cpp_noexcept_function_type
template <class R, class... A> struct sc_sig<R(A..., ...) noexcept> {
	typedef R ret;
	static const bool direct = false;
};
template <class R, class... A> struct sc_sig<R(A...) noexcept> {
	typedef R ret;
	template <unsigned I> struct arg { typedef typename sc_nth<I, A...>::type type; };
	static const bool direct = sizeof...(A) <= 6 && sc_words<A...>::value &&
		(std::is_void<R>::value || sc_word<R>::value);
};
#endif
template <class P> __attribute__((always_inline)) inline long sc_long(P p)
{
	return (long)p;
}
template <class P> __attribute__((always_inline)) inline long sc_long(P *p)
{
	return (long)reinterpret_cast<unsigned long>(p);
}
template <class F, unsigned I, class A>
__attribute__((always_inline)) inline long sc_arg(std::true_type, A &&a)
{
	typedef typename sc_sig<F>::template arg<I>::type P;
	P p = static_cast<A &&>(a);	/* the call's implicit conversion */
	return sc_long<P>(p);
}
template <class F, unsigned I, class A>
__attribute__((always_inline)) inline long sc_arg(std::false_type, A &&)
{
	return 0;	/* not a patched site: never runs */
}
template <class F, unsigned I, class A>
__attribute__((always_inline)) inline long sc_conv(A &&a)
{
	return sc_arg<F, I>(std::integral_constant<bool, sc_sig<F>::direct>(),
			    static_cast<A &&>(a));
}
template <class R> struct sc_ret {
	static R get(long raw) { return (R)raw; }
};
template <> struct sc_ret<void> { static void get(long) {} };
template <> struct sc_ret<bool> {
	static bool get(long raw) { return (unsigned char)raw != 0; }
};
template <class R> struct sc_ret<R *> {
	static R *get(long raw) { return reinterpret_cast<R *>(raw); }
};
template <class F, bool D = sc_sig<F>::direct> struct sc_finish_ {
	typedef typename sc_sig<F>::ret R;
	static R get(long raw) { return sc_ret<R>::get(raw); }
};
template <class F> struct sc_finish_<F, false> {
	typedef typename sc_sig<F>::ret R;
	static R get(long) { __builtin_unreachable(); }	/* never runs */
};
template <class F>
__attribute__((always_inline)) inline typename sc_sig<F>::ret sc_finish(long raw)
{
	return sc_finish_<F>::get(raw);
}
} /* namespace sy */
#define SY__SC_CONV(i, a) ::sy::sc_conv<sy__sc_fn_t, i>(a)
#define SY__SC_HEAD(name, load)                                                \
	typedef SY__SC_TYPE(name) sy__sc_fn_t;                                 \
	static struct sy__sc_meta sy__sc_meta = {                              \
		&STATIC_CALL_KEY(name), sizeof(SY__SC_KIND(name)) };           \
	enum { sy__sc_kind = sizeof(SY__SC_KIND(name)) };                      \
	void (*(*const sy__sc_load)(struct static_call_key *))(void) = load;    \
	(void)sy__sc_meta;                                                     \
	(void)sy__sc_load;
#define SY__SC_FALLBACK(load)                                                  \
	((sy__sc_fn_t *)load(sy__sc_meta.key))
#define SY__SC_CXX_7(...) SY__SC_FALLBACK(sy__sc_load)(__VA_ARGS__)
#define SY__SC_CXX_SITE(n, ...)                                                \
	(::sy::sc_sig<sy__sc_fn_t>::direct                                     \
		 ? ::sy::sc_finish<sy__sc_fn_t>(SY__SC_SITE_N(n, __VA_ARGS__)) \
		 : SY__SC_FALLBACK(sy__sc_load)(__VA_ARGS__))
#define SY__SC_CXX_0(...) SY__SC_CXX_SITE(0, )
#define SY__SC_CXX_1(...) SY__SC_CXX_SITE(1, __VA_ARGS__)
#define SY__SC_CXX_2(...) SY__SC_CXX_SITE(2, __VA_ARGS__)
#define SY__SC_CXX_3(...) SY__SC_CXX_SITE(3, __VA_ARGS__)
#define SY__SC_CXX_4(...) SY__SC_CXX_SITE(4, __VA_ARGS__)
#define SY__SC_CXX_5(...) SY__SC_CXX_SITE(5, __VA_ARGS__)
#define SY__SC_CXX_6(...) SY__SC_CXX_SITE(6, __VA_ARGS__)
#define SY__SC_CXX_8 SY__SC_CXX_7
#define SY__SC_CXX_9 SY__SC_CXX_7
#define SY__SC_CXX_10 SY__SC_CXX_7
#define SY__SC_CXX_11 SY__SC_CXX_7
#define SY__SC_CXX_12 SY__SC_CXX_7
#define SY__SC_CXX_13 SY__SC_CXX_7
#define SY__SC_CXX_14 SY__SC_CXX_7
#define SY__SC_CXX_15 SY__SC_CXX_7
#define SY__SC_TAIL(...)                                                       \
	SY__SC_CAT2(SY__SC_CXX_, SY__SC_N(__VA_ARGS__))(__VA_ARGS__); })
#define SY__SC_CALL(name, load)                                                \
	__extension__({ SY__SC_HEAD(name, load) SY__SC_TAIL
#else /* C */
#define SY__SC_CONV(i, a) ((long)(a))
#define SY__SC_HEAD(name)                                                      \
	SY__SC_TYPE(name) *const sy__sc_fn = 0;                                \
	static struct sy__sc_meta sy__sc_meta = {                              \
		&STATIC_CALL_KEY(name), sizeof(SY__SC_KIND(name)) };           \
	enum { sy__sc_kind = sizeof(SY__SC_KIND(name)) };
#define SY__SC_PTRS_0
#define SY__SC_PTRS_1 (void *)0
#define SY__SC_PTRS_2 SY__SC_PTRS_1, (void *)0
#define SY__SC_PTRS_3 SY__SC_PTRS_2, (void *)0
#define SY__SC_PTRS_4 SY__SC_PTRS_3, (void *)0
#define SY__SC_PTRS_5 SY__SC_PTRS_4, (void *)0
#define SY__SC_PTRS_6 SY__SC_PTRS_5, (void *)0
#define SY__SC_IS_VOID(...)                                                    \
	__builtin_types_compatible_p(__typeof__(sy__sc_fn(__VA_ARGS__)), void)
/* the return value, or 0 for a void function (not evaluated: in typeof) */
#define SY__SC_RVAL(...)                                                       \
	__builtin_choose_expr(SY__SC_IS_VOID(__VA_ARGS__), 0,                  \
			      sy__sc_fn(__VA_ARGS__))
#if defined(__clang__)
#define SY__SC_PRAGMA_NOPROTO                                                  \
	_Pragma("GCC diagnostic ignored \"-Wstrict-prototypes\"")
#else
#define SY__SC_PRAGMA_NOPROTO                                                  \
	_Pragma("GCC diagnostic ignored \"-Wstrict-prototypes\"")             \
	_Pragma("GCC diagnostic ignored \"-Wbad-function-cast\"")
#endif
/*
 * Compile-time checks of a C site (the function's type is known, its
 * parameter types are not, so they are tested):
 *  1. the call as written: arity, and types (an integer for a pointer or
 *     the converse is an error here, not a warning);
 *  2. every parameter accepts a pointer: only integer and pointer
 *     parameters do (double, struct parameters fail here);
 *  3. the type is compatible with an unprototyped one: no parameter narrower
 *     than int (char, short, _Bool, float) and no "...";
 *  4. the return value is void, or an integer or pointer of 8 bytes or less.
 */
#define SY__SC_C_CHECK(n, ...)                                                 \
	_Pragma("GCC diagnostic push")                                         \
	_Pragma("GCC diagnostic error \"-Wint-conversion\"")                   \
	_Pragma("GCC diagnostic error \"-Wincompatible-pointer-types\"")       \
	if (0)                                                                 \
		(void)sy__sc_fn(__VA_ARGS__);                                  \
	_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")                 \
	_Pragma("GCC diagnostic ignored \"-Wpedantic\"")                       \
	if (0)                                                                 \
		(void)sy__sc_fn(SY__SC_PTRS_##n);                              \
	SY__SC_PRAGMA_NOPROTO                                                  \
	_Static_assert(__builtin_types_compatible_p(                           \
			       __typeof__(*sy__sc_fn),                          \
			       __typeof__(__typeof__(sy__sc_fn(__VA_ARGS__))()))\
		       , "static_call(): in C, parameters must be int-sized or " \
		       "wider integers or pointers (no char, short, _Bool, "    \
		       "float, no ...)");                                       \
	_Static_assert(__builtin_classify_type(SY__SC_RVAL(__VA_ARGS__)) <= 5 && \
		       sizeof(SY__SC_RVAL(__VA_ARGS__)) <= 8,                   \
		       "static_call(): in C, the function must return void, "   \
		       "an integer or a pointer");                              \
	_Pragma("GCC diagnostic pop")
#define SY__SC_C_RESULT(raw, ...)                                              \
	__builtin_choose_expr(                                                 \
		SY__SC_IS_VOID(__VA_ARGS__), (void)0,                          \
		(__typeof__(SY__SC_RVAL(__VA_ARGS__)))__builtin_choose_expr(   \
			__builtin_types_compatible_p(                          \
				__typeof__(SY__SC_RVAL(__VA_ARGS__)), _Bool),  \
			(unsigned char)(raw), (raw)))
#define SY__SC_C(n, ...)                                                       \
	SY__SC_C_CHECK(n, __VA_ARGS__)                                         \
	long sy__raw = SY__SC_SITE_N(n, __VA_ARGS__);                          \
	(void)sy__raw;                                                         \
	SY__SC_C_RESULT(sy__raw, __VA_ARGS__);
#define SY__SC_C_0(...) SY__SC_C(0, )
#define SY__SC_C_1(...) SY__SC_C(1, __VA_ARGS__)
#define SY__SC_C_2(...) SY__SC_C(2, __VA_ARGS__)
#define SY__SC_C_3(...) SY__SC_C(3, __VA_ARGS__)
#define SY__SC_C_4(...) SY__SC_C(4, __VA_ARGS__)
#define SY__SC_C_5(...) SY__SC_C(5, __VA_ARGS__)
#define SY__SC_C_6(...) SY__SC_C(6, __VA_ARGS__)
#define SY__SC_TAIL(...)                                                       \
	SY__SC_CAT2(SY__SC_C_, SY__SC_N(__VA_ARGS__))(__VA_ARGS__) })
#define SY__SC_CALL(name, load) __extension__({ SY__SC_HEAD(name) SY__SC_TAIL
#endif /* C */

/* static_call(name)(args...) - call name's current target (nothing when
 * it is NULL). Thread-safe; async-signal-safe. */
#define static_call(name) SY__SC_CALL(name, sy__static_call_load)
/* static_call_cond(name)(args...) - the same, for a void function. */
#define static_call_cond(name) SY__SC_CALL(name, sy__static_call_cond_load)

#else /* !SY__ARCH_HAVE_STATIC_CALL */

/* static_call(name)(args...) - call name's current target. */
#define static_call(name)                                                      \
	((SY__SC_TYPE(name) *)                                                 \
		 sy__static_call_load(&STATIC_CALL_KEY(name)))

/* static_call_cond(name)(args...) - the same for a void function, and
 * nothing when the target is NULL. */
#define static_call_cond(name)                                                 \
	(void)((SY__SC_TYPE(name) *)                                           \
		       sy__static_call_cond_load(&STATIC_CALL_KEY(name)))
#endif /* SY__ARCH_HAVE_STATIC_CALL */

/* static_call_query(name) - the current target (NULL for none). */
#define static_call_query(name)                                                \
	((SY__SC_TYPE(name) *)                                                 \
		 sy__static_call_load(&STATIC_CALL_KEY(name)))

/*
 * SWITCHYARD_STATIC_CALL_TARGET(name, func) - declare func (a function of
 * the call's type; another type is a compile-time error) a registered
 * target of static call name: `switchyard call PID name func` may then
 * re-target it in a live process (<switchyard/control.h>), and listings
 * name the target as written here. At file scope, in any object that sees
 * the call's declaration; list the initial target too if the call should
 * be able to go back to it. No code: a record of three pointers in the
 * section sy_sc_targets, read only when something lists the calls.
 */
struct sy__sc_target {
	struct static_call_key *key;
	void (*func)(void);
	const char *name;
};
#ifdef __cplusplus	/* a conversion error there anyway */
#define SY__SC_TARGET_CHECK(name, func, n)                                     \
	__attribute__((unused)) static SY__SC_TYPE(name) *                     \
		const SY__KD_CAT(sy__sc_target_chk_, n) = (func);
#else
#define SY__SC_TARGET_CHECK(name, func, n)                                     \
	_Pragma("GCC diagnostic push")                                         \
	_Pragma("GCC diagnostic error \"-Wincompatible-pointer-types\"")       \
	__attribute__((unused)) static SY__SC_TYPE(name) *                     \
		const SY__KD_CAT(sy__sc_target_chk_, n) = (func);              \
	_Pragma("GCC diagnostic pop")
#endif
#if SY__REC_BY_ASM
#define SY__SC_TARGET(name, func, n)                                           \
	SY__SC_TARGET_CHECK(name, func, n)                                     \
	SY__REC_ASM(n, "sy_sc_targets", 8,                                     \
		    ".quad " SY__REC_P(0) "\n\t.quad " SY__REC_P(1)            \
		    "\n\t.quad " SY__REC_P(2),                                 \
		    SY__REC_SYM(&STATIC_CALL_KEY(name)),                       \
		    SY__REC_SYM((void (*)(void))(func)), SY__REC_SYM(#func))
#else
#define SY__SC_TARGET(name, func, n)                                           \
	SY__SC_TARGET_CHECK(name, func, n)                                     \
	__attribute__((used, section("sy_sc_targets"), aligned(8)))           \
	SY__KD_RETAIN static struct sy__sc_target                              \
		SY__KD_CAT(sy__sc_target_, n) = {                              \
			&STATIC_CALL_KEY(name), (void (*)(void))(func), #func }
#endif
#define SWITCHYARD_STATIC_CALL_TARGET(name, func)                              \
	SY__SC_TARGET(name, func, __COUNTER__)

/*
 * static_call_update(name, func) - make func (NULL, or a function of the
 * call's type) the target of every later call; an expression: 0 or a
 * negative errno (see __static_call_update()). A function of another type
 * is a compile-time error in C and in C++.
 */
#ifdef __cplusplus
#define static_call_update(name, func)                                         \
	__extension__({                                                        \
		SY__SC_TYPE(name) *sy__f = (func);                             \
		__static_call_update(&STATIC_CALL_KEY(name),                   \
				     (void (*)(void))sy__f);                   \
	})
#else
#define static_call_update(name, func)                                         \
	__extension__({                                                        \
		_Pragma("GCC diagnostic push")                                 \
		_Pragma("GCC diagnostic error \"-Wincompatible-pointer-types\"") \
		SY__SC_TYPE(name) *sy__f = (func);                             \
		_Pragma("GCC diagnostic pop")                                  \
		__static_call_update(&STATIC_CALL_KEY(name),                   \
				     (void (*)(void))sy__f);                   \
	})
#endif

#endif /* SWITCHYARD_STATIC_CALL_H */
