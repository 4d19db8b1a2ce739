/* SPDX-License-Identifier: MIT */
/*
 * switchyard/static_key.h - static keys (jump labels) for user space, with
 * the API of the Linux kernel's Documentation/static-keys.txt, names
 * verbatim.
 *
 *	DEFINE_STATIC_KEY_FALSE(key);
 *	...
 *	if (static_branch_unlikely(&key))
 *		do unlikely code
 *	else
 *		do likely code
 *	...
 *	static_branch_enable(&key);
 *
 * With x86-64 or AArch64 and `asm goto`, each static_branch_*() is one
 * instruction in the straight-line path: a no-op (x86-64: a 2- or 5-byte
 * TEST that only writes the flags; AArch64: NOP), or a jump to the
 * out-of-line code (JMP; B), rewritten when the key changes, also while
 * other threads run it. Elsewhere, or with
 * SWITCHYARD_NO_PATCHING defined before including this header, the same API
 * compiles to a load, a test and a branch with the same semantics.
 *
 * Keys must have static storage duration (not on the stack, not on the heap):
 * their sites record their address at link time.
 *
 * What -Wpedantic cannot be silenced for. The macros use GNU C (statement
 * expressions, local labels, asm goto, typeof), each behind __extension__,
 * so that a user's -Wall -Wextra -Wpedantic -Werror build (C11, C17, GNU
 * C; C++14 and later; gcc and clang) compiles them without a diagnostic
 * (tests/build_checks/check_headers.sh holds us to it). One construct cannot be:
 *
 *   DEFINE_STATIC_KEY_ARRAY_TRUE() in C: every element needs a non-zero
 *   initialiser, which for an array of any length takes a GNU range
 *   designator ("[0 ... n - 1] ="); __extension__ cannot precede a
 *   declaration that the user may prefix with `static`, and gcc refuses
 *   a _Pragma inside one. One diagnostic per use: gcc "ISO C forbids
 *   specifying range of elements to initialize", clang "use of GNU array
 *   range extension [-Wgnu-designator]". Wrap the definition in
 *   #pragma GCC diagnostic push / ignored "-Wpedantic" / pop (both
 *   compilers honour it), or use C++, where it is "= {}".
 *
 * Every function here is thread-safe unless its comment says otherwise. The
 * static_branch_*() tests themselves are plain instructions and may be used
 * anywhere, signal handlers included. Signal handlers: the calls that change
 * a key (enable, disable, inc, dec, their _cpuslocked and deferred forms)
 * may be made from one: when the handler interrupted a switchyard call on
 * the same thread they return -EDEADLK and change nothing; otherwise they
 * work, and a change that succeeds allocates no memory. They are not
 * async-signal-safe in the POSIX sense: they take a mutex (hence the
 * re-entry check), an error's report names the key and the site (it reads
 * symbol and line tables, which allocates), and the first delayed decrement
 * of a deferred key starts the library's worker thread; from a handler that
 * interrupted malloc() or pthread_create() on the same thread, those two
 * can deadlock in the C library. The calls documented as async-signal-safe
 * below are safe without conditions.
 */
#ifndef SWITCHYARD_STATIC_KEY_H
#define SWITCHYARD_STATIC_KEY_H

#include <switchyard/core.h>

#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * struct static_key - a key. Treat the fields as private.
 *
 * `enabled` is the reference count, read and written with atomic operations:
 *
 *   value   meaning
 *   0       disabled; every site is in the disabled form
 *   -1      first enable in progress (patch lock held, sites being written);
 *           static_key_count() reports 1, so a reader that sees the key
 *           enabled may be early, never late
 *   n > 0   enabled, n references (1 after static_key_enable())
 *
 * `sy_type` bit 0 is the key's initial value (1 for *_TRUE keys); the other
 * bits record which misuse reports were already made for this key.
 * `sy_priv` is reserved for the registry.
 */
struct static_key {
	int enabled;
	unsigned int sy_type;
	void *sy_priv;
};

#define SY__KEY_TYPE_TRUE 1u

#define STATIC_KEY_INIT_TRUE { 1, SY__KEY_TYPE_TRUE, 0 }
#define STATIC_KEY_INIT_FALSE { 0, 0u, 0 }
#define STATIC_KEY_INIT STATIC_KEY_INIT_FALSE

/*
 * The typed keys. In C++ the member initialiser lets arrays of them be
 * defined with "= {}" (C++14 aggregates). In C an array of FALSE keys is all
 * zeros, which ISO C spells "{ first element }"; an array of TRUE keys needs
 * a GNU range designator (see "What -Wpedantic cannot be silenced for").
 */
struct static_key_true {
	struct static_key key
#ifdef __cplusplus
		= STATIC_KEY_INIT_TRUE
#endif
		;
};

struct static_key_false {
	struct static_key key
#ifdef __cplusplus
		= STATIC_KEY_INIT_FALSE
#endif
		;
};

/*
 * DEFINE_STATIC_KEY_*() define the key and, as a second declaration, its
 * name record (core.h SY__NAME_RECORD(): the name a stripped file keeps).
 * A prefix (static, an attribute before it) applies to the key. In C++, a
 * static data member of a class template cannot take a second declaration
 * after its template head: define it without the macro, e.g.
 *	template <class T> struct static_key_false A<T>::k = STATIC_KEY_FALSE_INIT;
 * (it is then named by its symbol only, not in a stripped file).
 */
#define STATIC_KEY_TRUE_INIT { STATIC_KEY_INIT_TRUE }
#define STATIC_KEY_FALSE_INIT { STATIC_KEY_INIT_FALSE }

#define DEFINE_STATIC_KEY_TRUE(name) \
	struct static_key_true name = STATIC_KEY_TRUE_INIT; \
	SY__NAME_RECORD(name)
#define DEFINE_STATIC_KEY_TRUE_RO(name) \
	DEFINE_STATIC_KEY_TRUE(name)
#define DECLARE_STATIC_KEY_TRUE(name) \
	extern struct static_key_true name
#define DEFINE_STATIC_KEY_FALSE(name) \
	struct static_key_false name = STATIC_KEY_FALSE_INIT; \
	SY__NAME_RECORD(name)
#define DEFINE_STATIC_KEY_FALSE_RO(name) \
	DEFINE_STATIC_KEY_FALSE(name)
#define DECLARE_STATIC_KEY_FALSE(name) \
	extern struct static_key_false name

#ifdef __cplusplus
#define DEFINE_STATIC_KEY_ARRAY_TRUE(name, count) \
	struct static_key_true name[count] = {}; \
	SY__NAME_RECORD(name)
#define DEFINE_STATIC_KEY_ARRAY_FALSE(name, count) \
	struct static_key_false name[count] = {}; \
	SY__NAME_RECORD(name)
#else
#define DEFINE_STATIC_KEY_ARRAY_TRUE(name, count) \
	struct static_key_true name[count] = { \
		[0 ... (count) - 1] = STATIC_KEY_TRUE_INIT, }; \
	SY__NAME_RECORD(name)
#define DEFINE_STATIC_KEY_ARRAY_FALSE(name, count) \
	struct static_key_false name[count] = { STATIC_KEY_FALSE_INIT }; \
	SY__NAME_RECORD(name)
#endif

/*
 * SWITCHYARD_KEY_DESCRIPTION(key, "text") - a one-line description of a
 * key, shown by `switchyard list` (of a file and of a live process) and in
 * switchyard_key_info. At file scope, next to the key's definition, in the
 * object that defines it (any key expression: tracing, keys[3]):
 *
 *	DEFINE_STATIC_KEY_FALSE(net_trace);
 *	SWITCHYARD_KEY_DESCRIPTION(net_trace, "trace every packet received");
 *
 * No code and no run-time work: a record of two pointers in the section
 * sy_key_desc (in position-independent code, two relocations applied at
 * load), read only when something lists the keys.
 */
struct sy__key_desc {
	const void *key;
	const char *text;
};
#if SY__REC_BY_ASM
#define SWITCHYARD_KEY_DESCRIPTION(key, text)                                \
	SY__REC_ASM(__COUNTER__, "sy_key_desc", 16,                          \
		    ".quad " SY__REC_P(0) "\n\t.quad " SY__REC_P(1),          \
		    SY__REC_SYM(&(key)), SY__REC_SYM("" text))
#else
#define SWITCHYARD_KEY_DESCRIPTION(key, text)                                \
	__attribute__((used, section("sy_key_desc"), aligned(16)))           \
	SY__KD_RETAIN                                                        \
	static const struct sy__key_desc                                     \
		SY__KD_CAT(sy__key_desc_, __COUNTER__) = { &(key), "" text }
#endif

/*
 * Reference counting. Returns 0, or a negative errno:
 *   -EINVAL     static_key_slow_dec() of a key whose count is 0 (misuse,
 *               reported once per key; the key is unchanged)
 *   -EOVERFLOW  the count would pass INT_MAX
 *   -EFAULT     a site held unexpected bytes (reported with the key's name,
 *               the site's function+offset and file:line, the expected and
 *               the found bytes); nothing was written
 *   -EBUSY      a debugger's breakpoint sits on a site and hides the byte
 *               the change needs (a breakpoint planted, while the program
 *               ran, on a site that falls through, which the change would
 *               make jump); reported with the key, the site and the fix
 *               (delete the breakpoint); nothing was written. A breakpoint
 *               never changes a site's path: see doc/DESIGN.md
 *   -EDEADLK    called from a signal handler that interrupted a switchyard
 *               call on the same thread (or from the log callback): refused
 *               rather than deadlocking on a lock that thread holds
 *   other       no way to write the code was allowed (errno of the write)
 * On any error, the key's count and every one of its sites are as before.
 * A thread that holds the patch lock may call these too: they notice and do
 * not take it again. Thread-safe.
 */
SWITCHYARD_API int static_key_slow_inc(struct static_key *key);
SWITCHYARD_API int static_key_slow_dec(struct static_key *key);

/*
 * static_key_enable/disable - set the count to 1 / 0, patching the sites if
 * the state changes. Enabling an enabled key, or disabling a disabled one,
 * does nothing and returns 0. Returns -EBUSY, reported once per key, when
 * the key's count is above 1 (it is reference counted: use inc/dec); the key
 * is unchanged. Other errors as above (-EBUSY for a breakpoint included).
 * Thread-safe.
 */
SWITCHYARD_API int static_key_enable(struct static_key *key);
SWITCHYARD_API int static_key_disable(struct static_key *key);

/*
 * The _cpuslocked variants: the same, for a caller that already holds the
 * patch lock (switchyard_patch_lock()). They return -EPERM, reported, when
 * the calling thread does not hold it. Thread-safe.
 */
SWITCHYARD_API int static_key_enable_cpuslocked(struct static_key *key);
SWITCHYARD_API int static_key_disable_cpuslocked(struct static_key *key);
SWITCHYARD_API int static_key_slow_inc_cpuslocked(struct static_key *key);
SWITCHYARD_API int static_key_slow_dec_cpuslocked(struct static_key *key);

/*
 * static_key_fast_inc_not_disabled - take a reference only if the key is
 * enabled (count > 0): true if it did, false if the key is disabled or its
 * first enable is in progress (then nothing changed). Never patches, never
 * locks. Thread-safe; lock-free; async-signal-safe (but for the report of
 * a count that would pass INT_MAX: then false, and a message is logged).
 */
SWITCHYARD_API bool static_key_fast_inc_not_disabled(struct static_key *key);

/*
 * static_key_initialized - always true (a constant, not a variable: an
 * exported variable would need a copy relocation in the program): keys can
 * change from the first
 * instruction of the program on (the library initialises what it needs on
 * first use, even before its own constructor in a static link), whereas the
 * kernel's is false until jump_label_init() ran at boot.
 * jump_label_init() - a no-op, kept for ported code: sites are registered
 * per object, when it is loaded. Thread-safe; async-signal-safe.
 */
#define static_key_initialized true
SWITCHYARD_API void jump_label_init(void);

/*
 * static_key_count - the reference count; an enable in progress (-1) is
 * reported as 1, as the kernel does. A relaxed load: a key seen enabled may
 * still have sites being written (early, never late); a thread that must
 * know its sites are patched takes a reference (static_branch_inc()),
 * which returns only once they are. Thread-safe; lock-free;
 * async-signal-safe.
 */
static inline int static_key_count(struct static_key *key)
{
	int n = __atomic_load_n(&key->enabled, __ATOMIC_RELAXED);

	return n >= 0 ? n : 1;
}

/*
 * static_key_enabled(x) - whether the key is on; x may point to a struct
 * static_key, static_key_true or static_key_false (anything else does not
 * compile). Thread-safe; lock-free. As the kernel document says, if you use
 * it to make decisions, serialise it with the enable/disable calls yourself.
 */
#ifdef __cplusplus
} /* extern "C" */
static inline struct static_key *sy__to_key(struct static_key *k) { return k; }
static inline struct static_key *sy__to_key(struct static_key_true *k) { return &k->key; }
static inline struct static_key *sy__to_key(struct static_key_false *k) { return &k->key; }
template <typename T, typename U> struct sy__same { enum { value = 0 }; };
template <typename T> struct sy__same<T, T> { enum { value = 1 }; };
template <typename T> struct sy__deref;
template <typename T> struct sy__deref<T *> { typedef T type; };
#define SY__IS_TYPE(x, T) \
	(sy__same<typename sy__deref<__typeof__(x)>::type, T>::value)
#define SY__CHECK_TYPE(cond, msg) static_assert(cond, msg)
/*
 * See "Keys whose address is not a link-time constant" at
 * static_branch_likely(). A constexpr variable, inside sizeof so that it
 * is never emitted (at -O0, an automatic one is stored on the stack, a
 * static one in .data.rel.ro). The names of the macro and of the variable
 * are the message: the compilers print them in the error's notes and
 * quoted source lines (clang++ in the error itself), hence one long line
 * that carries the fix too.
 */
#define SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(keyp)                      \
	((void)sizeof(__extension__({                                         \
		constexpr const void *switchyard_key_address_must_be_a_link_time_constant __attribute__((unused)) = (keyp); /* a global or static key, or &keys[CONSTANT]; for a run-time key use static_key_enabled() */ \
		0;                                                            \
	})))
extern "C" {
#else
#define sy__to_key(x)                                                        \
	_Generic((x),                                                         \
		struct static_key *: (struct static_key *)(x),                \
		struct static_key_true *: (struct static_key *)(x),           \
		struct static_key_false *: (struct static_key *)(x))
#define SY__IS_TYPE(x, T) __builtin_types_compatible_p(__typeof__(*(x)), T)
#define SY__CHECK_TYPE(cond, msg) _Static_assert(cond, msg)
/*
 * See "Keys whose address is not a link-time constant" at
 * static_branch_likely(). The initialiser of a static variable must be an
 * address constant; inside sizeof, the variable is never emitted and the
 * check costs nothing, at -O0 either. Names and long line: as in C++ above.
 */
#define SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(keyp)                      \
	((void)sizeof(__extension__({                                         \
		static const void *const switchyard_key_address_must_be_a_link_time_constant __attribute__((unused)) = (keyp); /* a global or static key, or &keys[CONSTANT]; for a run-time key use static_key_enabled() */ \
		0;                                                            \
	})))
#endif

#define static_key_enabled(x) (static_key_count(sy__to_key(x)) > 0)

#define SY__BRANCH_KEY_CHECK(x)                                               \
	SY__CHECK_TYPE(SY__IS_TYPE(x, struct static_key_true) ||              \
			       SY__IS_TYPE(x, struct static_key_false),       \
		       "static_branch_*() takes a struct static_key_true * or " \
		       "struct static_key_false *")
#define SY__PLAIN_KEY_CHECK(x)                                                \
	SY__CHECK_TYPE(SY__IS_TYPE(x, struct static_key),                     \
		       "static_key_true()/static_key_false() take a "          \
		       "struct static_key *")

/* asm goto: gcc >= 4.5, clang >= 9. */
#if defined(__clang__)
#define SY__HAVE_ASM_GOTO (__clang_major__ >= 9)
#elif defined(__GNUC__)
#define SY__HAVE_ASM_GOTO (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 5))
#else
#define SY__HAVE_ASM_GOTO 0
#endif

#if !defined(SWITCHYARD_NO_PATCHING) && defined(__x86_64__) && SY__HAVE_ASM_GOTO
#include <switchyard/arch/x86_64.h>
#elif !defined(SWITCHYARD_NO_PATCHING) && defined(__aarch64__) &&              \
	defined(__LP64__) && SY__HAVE_ASM_GOTO
#include <switchyard/arch/aarch64.h>
#endif

/*
 * sy__object_unloading - called by the object that contains addr as it is
 * unloaded: queued deferred decrements of its keys are dropped. The per-object
 * glue of arch/x86_64.h does it with the table; elsewhere (fallback mode)
 * every translation unit gets a destructor that does only this. Exported,
 * not API.
 */
SWITCHYARD_API void sy__object_unloading(const void *addr);

#if !defined(SY__ARCH_HAVE_JUMP_LABEL) && !defined(SY__NO_DSO_GLUE)
__attribute__((destructor, unused)) static void sy__fallback_unloading(void)
{
	/* Any address inside the object names it; this function's own is at
	 * hand. ISO C has no function-to-object pointer conversion (POSIX
	 * needs one for dlsym()): __extension__ says we mean it. */
	sy__object_unloading(__extension__(const void *)&sy__fallback_unloading);
}
#endif

#ifdef SY__ARCH_HAVE_JUMP_LABEL
/*
 * SY__ARCH_STATIC_BRANCH(key, branch) - 1 when the site (the arch header's
 * SY__ARCH_SITE()) jumps, 0 when it falls through. A macro rather than an
 * inline function so that the key's address reaches the asm as a
 * link-time constant at -O0 too. __extension__ keeps -Wpedantic quiet
 * about the statement expression and the local labels (gcc and clang
 * parse the whole operand as GNU C).
 */
#define SY__ARCH_STATIC_BRANCH(keyp, branch)                                   \
	__extension__({                                                        \
		__label__ sy__l_yes, sy__l_out;                                \
		int sy__ret;                                                   \
		SY__ARCH_SITE(keyp, branch, sy__l_yes);                        \
		sy__ret = 0;                                                   \
		goto sy__l_out;                                                \
	sy__l_yes:                                                             \
		sy__ret = 1;                                                   \
	sy__l_out:                                                             \
		sy__ret;                                                       \
	})
#define SY__BRANCH(keyp, branch) SY__ARCH_STATIC_BRANCH(keyp, branch)
#else
/* Fallback: load, test, branch. (key->enabled ^ branch) is what a site would
 * do: jump when the key's state differs from the branch bit. */
#define SY__BRANCH(keyp, branch) (static_key_enabled(keyp) != (branch))
#endif

/*
 * static_branch_likely(x) / static_branch_unlikely(x) - true when the key
 * is enabled; the hint tells which path is laid out straight-line. x is a
 * struct static_key_true * or static_key_false *, either works with either.
 * A plain instruction: safe anywhere, including signal handlers
 * (thread-safe; async-signal-safe).
 *
 * Keys whose address is not a link-time constant: x must be the address of
 * a key with static storage duration, known when the program is linked: a
 * global or static key, a key in a global struct, &keys[CONSTANT]. Not
 * &keys[i] with a run-time i, not a key on the stack or the heap, not a
 * pointer variable. Each site records its key's address in its table entry
 * (the ".quad" of arch/x86_64.h) at link time, so there is no site to patch
 * for a key chosen at run time. Such a use is a compile-time error, in
 * every mode (the fallback could test any key, but code that builds in one
 * mode must build in the other): an error about an initialiser or a
 * constexpr that is not constant, whose notes name the macro
 * SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT and whose quoted source line
 * (with clang++, the error itself) names the variable
 * switchyard_key_address_must_be_a_link_time_constant, with the fix. For
 * a run-time choice of key, test it with static_key_enabled(&keys[i]): a
 * load and a test.
 *
 * Why an error and not a load-and-test chosen by the macro: nothing lets a
 * macro tell at compile time whether an address is a link-time constant.
 * __builtin_constant_p() of an address is 0 in gcc and clang, at every
 * optimisation level, also for &global: a dispatch on it would turn every
 * site into a load-and-test. Before this check, the mistake failed late,
 * in words that named neither cause nor fix: gcc's assembler said "invalid
 * R_X86_64_64 relocation against register" (or similar), clang "invalid
 * operand for inline asm constraint 's'".
 */
#define static_branch_likely(x)                                               \
	__extension__({                                                       \
		SY__BRANCH_KEY_CHECK(x);                                      \
		SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(&(x)->key);        \
		__builtin_expect(!SY__BRANCH(&(x)->key, 1), 1);               \
	})
#define static_branch_unlikely(x)                                             \
	__extension__({                                                       \
		SY__BRANCH_KEY_CHECK(x);                                      \
		SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(&(x)->key);        \
		__builtin_expect(SY__BRANCH(&(x)->key, 0), 0);                \
	})

/* The typed front ends; see static_key_slow_inc() and friends. */
#define static_branch_inc(x) static_key_slow_inc(&(x)->key)
#define static_branch_dec(x) static_key_slow_dec(&(x)->key)
#define static_branch_enable(x) static_key_enable(&(x)->key)
#define static_branch_disable(x) static_key_disable(&(x)->key)
#define static_branch_enable_cpuslocked(x) \
	static_key_enable_cpuslocked(&(x)->key)
#define static_branch_disable_cpuslocked(x) \
	static_key_disable_cpuslocked(&(x)->key)
#define static_branch_inc_cpuslocked(x) \
	static_key_slow_inc_cpuslocked(&(x)->key)
#define static_branch_dec_cpuslocked(x) \
	static_key_slow_dec_cpuslocked(&(x)->key)

/*
 * Keys whose default follows a build-time switch, as the kernel's Kconfig
 * ones: cfg is a macro defined to 1, or not defined (the kernel's
 * IS_ENABLED()). DEFINE_STATIC_KEY_MAYBE(cfg, name) is a TRUE key when cfg
 * is 1, else a FALSE one; static_branch_maybe(cfg, x) is likely when cfg is
 * 1, else unlikely.
 */
#define SY__ARG_PLACEHOLDER_1 0,
#define SY__TAKE_SECOND(ignored, val, ...) val
#define SY__IS_ONE3(arg) SY__TAKE_SECOND(arg 1, 0, 0)
#define SY__IS_ONE2(val) SY__IS_ONE3(SY__ARG_PLACEHOLDER_##val)
#define SY__IS_ENABLED(cfg) SY__IS_ONE2(cfg)
#define SY__PASTE2(a, b) a##b
#define SY__PASTE(a, b) SY__PASTE2(a, b)
#define SY__DEFINE_STATIC_KEY_1(name) DEFINE_STATIC_KEY_TRUE(name)
#define SY__DEFINE_STATIC_KEY_0(name) DEFINE_STATIC_KEY_FALSE(name)
#define SY__DECLARE_STATIC_KEY_1(name) DECLARE_STATIC_KEY_TRUE(name)
#define SY__DECLARE_STATIC_KEY_0(name) DECLARE_STATIC_KEY_FALSE(name)
#define DEFINE_STATIC_KEY_MAYBE(cfg, name) \
	SY__PASTE(SY__DEFINE_STATIC_KEY_, SY__IS_ENABLED(cfg))(name)
#define DECLARE_STATIC_KEY_MAYBE(cfg, name) \
	SY__PASTE(SY__DECLARE_STATIC_KEY_, SY__IS_ENABLED(cfg))(name)
#define static_branch_maybe(cfg, x)                                           \
	(SY__IS_ENABLED(cfg) ? static_branch_likely(x)                        \
			     : static_branch_unlikely(x))

/*
 * Deprecated API, kept as the document lists it: a plain struct static_key
 * initialised with STATIC_KEY_INIT_TRUE/FALSE and tested with
 * static_key_true() (likely) / static_key_false() (unlikely).
 */
#define static_key_true(x)                                                    \
	__extension__({                                                       \
		SY__PLAIN_KEY_CHECK(x);                                       \
		SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(x);                \
		__builtin_expect(!SY__BRANCH(x, 1), 1);                       \
	})
#define static_key_false(x)                                                   \
	__extension__({                                                       \
		SY__PLAIN_KEY_CHECK(x);                                       \
		SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT(x);                \
		__builtin_expect(SY__BRANCH(x, 0), 0);                        \
	})

/*
 * Deferred keys, as the kernel has them: the final decrement (count 1 -> 0)
 * is delayed by a rate limit so that rapid dec/inc pairs coalesce into no
 * patching at all. Other decrements happen at once. The delay runs on a
 * background thread that the library starts at the first deferred
 * decrement (it blocks every signal). The rate limit is in milliseconds (the
 * kernel counts jiffies).
 */
struct sy_delayed_work {
	struct sy_delayed_work *sy_next;
	struct static_key *sy_key;
	unsigned long long sy_due_ns;
	int sy_pending;
};

struct static_key_deferred {
	struct static_key key;
	unsigned long timeout;
	struct sy_delayed_work work;
};

struct static_key_true_deferred {
	struct static_key_true key;
	unsigned long timeout;
	struct sy_delayed_work work;
};

struct static_key_false_deferred {
	struct static_key_false key;
	unsigned long timeout;
	struct sy_delayed_work work;
};

#define DEFINE_STATIC_KEY_DEFERRED_TRUE(name, rl) \
	struct static_key_true_deferred name = { STATIC_KEY_TRUE_INIT, (rl), { 0, 0, 0, 0 } }; \
	SY__NAME_RECORD(name)
#define DEFINE_STATIC_KEY_DEFERRED_FALSE(name, rl) \
	struct static_key_false_deferred name = { STATIC_KEY_FALSE_INIT, (rl), { 0, 0, 0, 0 } }; \
	SY__NAME_RECORD(name)

/*
 * __static_key_slow_dec_deferred - decrement now if the count is above 1,
 * else schedule the final decrement `timeout` ms from now (once: a second
 * call while one is pending does nothing more, as in the kernel).
 * __static_key_deferred_flush - run a pending final decrement now and wait
 * for it. Both return 0 or a negative errno as static_key_slow_dec().
 * Thread-safe.
 */
SWITCHYARD_API int __static_key_slow_dec_deferred(struct static_key *key,
						  struct sy_delayed_work *work,
						  unsigned long timeout);
SWITCHYARD_API int __static_key_deferred_flush(void *key,
					       struct sy_delayed_work *work);
/*
 * jump_label_rate_limit - set the delay of a deferred key, in milliseconds:
 * a struct static_key_deferred, static_key_true_deferred or
 * static_key_false_deferred (a macro, so that all three are accepted
 * without a cast; anything else does not compile). The function of the
 * same name takes the first kind. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API void jump_label_rate_limit(struct static_key_deferred *key,
					  unsigned long rl);
#define jump_label_rate_limit(x, rl)                                          \
	__extension__({                                                       \
		struct sy_delayed_work *sy__w_ = &(x)->work;                  \
		(void)sy__w_;                                                 \
		__atomic_store_n(&(x)->timeout, (unsigned long)(rl),          \
				 __ATOMIC_RELAXED);                           \
	})

#define static_key_slow_dec_deferred(x) \
	__static_key_slow_dec_deferred(&(x)->key, &(x)->work, (x)->timeout)
#define static_branch_slow_dec_deferred(x) \
	__static_key_slow_dec_deferred(&(x)->key.key, &(x)->work, (x)->timeout)
#define static_branch_deferred_inc(x) static_branch_inc(&(x)->key)
#define static_key_deferred_flush(x) \
	__static_key_deferred_flush((x), &(x)->work)

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_STATIC_KEY_H */
