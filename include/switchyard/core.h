/* SPDX-License-Identifier: MIT */
/*
 * switchyard/core.h - library-level calls shared by every switchyard feature:
 * version, the patch lock, the log callback and statistics.
 *
 * Include <switchyard.h> rather than this file.
 */
#ifndef SWITCHYARD_CORE_H
#define SWITCHYARD_CORE_H

#include <stddef.h>
#include <stdint.h>

/* For the record macros (SWITCHYARD_KEY_DESCRIPTION(), ...): a unique
 * name, and a section the linker keeps under --gc-sections too, where the
 * compiler can say so. Not API. */
#define SY__KD_CAT2(a, b) a##b
#define SY__KD_CAT(a, b) SY__KD_CAT2(a, b)
#if defined(__has_attribute)
#if __has_attribute(retain)
#define SY__KD_RETAIN __attribute__((retain))
#endif
#endif
#ifndef SY__KD_RETAIN
#define SY__KD_RETAIN
#define SY__REC_R ""
#else
#define SY__REC_R "R"
#endif

/*
 * How a record (a name, a description, a call's target) is emitted. Not
 * API.
 *
 * Usually as a static variable in its section, with
 * __attribute__((used, section(...))). g++ cannot do that in C++ where a
 * record sits in an inline function (a member function defined in its
 * class, a template): the static is then one of vague linkage, which g++
 * puts in a COMDAT group and refuses beside a namespace-scope record in
 * the same section ("sy__name_1 causes a section type conflict with
 * sy__name_0"), and takes out of the section in a template. So for g++ on
 * the architectures below a record is assembler data that the used static
 * member function of a small class writes into its section
 * (SY__REC_ASM(): .pushsection inside the function's asm, outside any
 * group), valid at namespace, block and class scope. The function's code
 * is a return (COMDAT, one kept); its data is in every translation unit
 * that emits it: readers key records by object, so a repeat is harmless.
 * Operands: "X" printed with %p on x86-64 (any symbol, in PIC too, as the
 * key operand of SY__ARCH_STATIC_BRANCH()), "S" with %c on AArch64.
 * Elsewhere g++ keeps the variable: define such keys at namespace scope
 * there.
 */
/* AArch64: a symbol (plus an offset) as an asm operand, printed bare with
 * %c: gcc's "S"; clang's "i" (clang's "S" refuses a symbol plus an
 * offset, which its global merging makes of a global under -O3 -flto). */
#if defined(__aarch64__) && defined(__clang__)
#define SY__A64_SYM(x) "i"(x)
#else
#define SY__A64_SYM(x) "S"(x)
#endif

#if defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) &&       \
	(defined(__x86_64__) || defined(__aarch64__))
#define SY__REC_BY_ASM 1
#if defined(__x86_64__)
#define SY__REC_SYM(x) "X"(x)
#define SY__REC_P(n) "%p" #n
#define SY__REC_TYPE "@progbits"
#else
#define SY__REC_SYM(x) "S"(x)
#define SY__REC_P(n) "%c" #n
#define SY__REC_TYPE "%%progbits"
#endif
#define SY__REC_ASM(n, sec, align, body, ...)                                  \
	struct SY__KD_CAT(sy__rec_, n) {                                       \
		__attribute__((used)) static void sy__emit()                   \
		{                                                              \
			__asm__ __volatile__(".pushsection " sec ",\"aw"      \
					     SY__REC_R "\"," SY__REC_TYPE      \
					     "\n\t.balign " #align "\n\t"    \
					     body "\n\t.popsection"            \
					     : : __VA_ARGS__);                 \
		}                                                              \
	}
#else
#define SY__REC_BY_ASM 0
#endif

/*
 * The name record that DEFINE_STATIC_KEY_*() and DEFINE_STATIC_CALL*() emit
 * beside the definition: {&object, "name", sizeof(object)} in section
 * sy_names, so that a key or a call keeps its name in a stripped file
 * (names otherwise come from .symtab, which strip removes). The name is the
 * definition's spelling, macros expanded: "net_trace", "holder::member" (a
 * C++ namespace the definition sits in is not part of it), a static
 * call's as its key's symbol, "__SCK__name" (readers drop the prefix; it
 * tells a call's 32-byte key from an array of two keys); it is used
 * only where the symbol tables name nothing. 24 bytes (+ two relocations
 * in position-independent code) and the name's bytes. Not API.
 */
struct sy__name {
	const void *obj;
	const char *name;
	unsigned long size;
};
#define SY__NAME_STR(x) #x
#define SY__NAME_RECORD(obj) SY__NAME_RECORD2(obj, SY__NAME_STR(obj))
#if SY__REC_BY_ASM
#define SY__NAME_RECORD2(obj, str)                                             \
	SY__REC_ASM(__COUNTER__, "sy_names", 8,                                \
		    ".quad " SY__REC_P(0) "\n\t.quad " SY__REC_P(1)            \
		    "\n\t.quad %c2", SY__REC_SYM(&(obj)), SY__REC_SYM(str),    \
		    "i"(sizeof(obj)))
#else
#define SY__NAME_RECORD2(obj, str)                                             \
	__attribute__((used, section("sy_names"), aligned(8))) SY__KD_RETAIN   \
	static const struct sy__name SY__KD_CAT(sy__name_, __COUNTER__) = {    \
		&(obj), str, sizeof(obj) }
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SWITCHYARD_VERSION_MAJOR 0
#define SWITCHYARD_VERSION_MINOR 1
#define SWITCHYARD_VERSION_PATCH 0

#if defined(SWITCHYARD_BUILDING_LIBRARY)
#define SWITCHYARD_API __attribute__((visibility("default")))
#else
#define SWITCHYARD_API
#endif

/*
 * switchyard_version - the library's version as "MAJOR.MINOR.PATCH".
 * Thread-safe; async-signal-safe.
 */
SWITCHYARD_API const char *switchyard_version(void);

/*
 * The patch lock serialises every change of code in the process: key state
 * changes, registration of an object's sites, and (later) static calls and
 * alternatives. It is the user-space counterpart of the kernel's
 * cpus_read_lock() + jump_label_mutex pair.
 *
 * switchyard_patch_lock() - take the patch lock. Returns 0, or -EDEADLK if
 * the calling thread already holds it (the lock is not recursive).
 * switchyard_patch_unlock() - release it. Returns 0, or -EPERM if the calling
 * thread does not hold it.
 *
 * The *_cpuslocked() variants of the static key API require it; the other
 * calls take it themselves, or notice that the calling thread holds it and
 * go on without taking it again. Thread-safe. Not async-signal-safe.
 */
SWITCHYARD_API int switchyard_patch_lock(void);
SWITCHYARD_API int switchyard_patch_unlock(void);

/* Levels passed to the log callback. */
enum switchyard_log_level {
	SWITCHYARD_LOG_ERROR = 0,	/* a call failed; nothing was changed */
	SWITCHYARD_LOG_WARN = 1,	/* API misuse, reported once per key */
	SWITCHYARD_LOG_INFO = 2,
};

typedef void (*switchyard_log_fn)(enum switchyard_log_level level,
				  const char *msg, void *arg);

/*
 * switchyard_set_log - route the library's messages to fn (NULL restores the
 * default, which writes "switchyard: <msg>\n" to stderr). Messages are
 * reported synchronously by the thread whose call caused them, possibly with
 * the patch lock held: fn must not call back into switchyard.
 * Thread-safe: the pair (fn, arg) is swapped atomically under a lock.
 */
SWITCHYARD_API void switchyard_set_log(switchyard_log_fn fn, void *arg);

/*
 * How code may be written.
 *   SWITCHYARD_POLICY_DEFAULT  through /proc/self/mem (no mapping ever
 *       becomes writable); if the kernel refuses that, through a short
 *       read-write-execute window over the pages (mprotect).
 *   SWITCHYARD_POLICY_STRICT   through /proc/self/mem only: if the kernel
 *       refuses it, the change fails with its error and nothing changes.
 */
enum switchyard_policy {
	SWITCHYARD_POLICY_DEFAULT = 0,
	SWITCHYARD_POLICY_STRICT = 1,
};

/*
 * switchyard_set_policy - choose how code may be written, for every later
 * change (objects loaded later included). Returns 0, or -EINVAL for an
 * unknown policy. Thread-safe.
 */
SWITCHYARD_API int switchyard_set_policy(enum switchyard_policy policy);

/* Counters of the process-wide registry; see switchyard_get_stats(). */
struct switchyard_stats {
	uint64_t objects;	/* registered objects (executable, libraries) */
	uint64_t sites;		/* jump label sites in them */
	uint64_t sites_short;	/* 2-byte sites (TEST8 / JMP8 on x86-64);
				   every site on AArch64 (one word) */
	uint64_t sites_long;	/* 5-byte sites (TEST32 / JMP32) */
	uint64_t sites_refused;	/* sites that held unexpected bytes */
	uint64_t patch_batches;	/* committed poke batches */
	uint64_t patched_sites;	/* sites written by those batches */
	uint64_t sync_calls;	/* core synchronisations (one per batch; no
				   system call while the process has one
				   thread) */
	uint64_t sync_fallbacks; /* ... of which without membarrier */
	uint64_t write_calls;	/* system calls that wrote code */
	uint64_t rwx_windows;	/* writes through a read-write-execute window */
	uint64_t register_ns;	/* time spent registering objects, total */
	uint64_t undone_batches; /* batches whose write failed part-way and
				    whose written part was restored */
	uint64_t stale_objects;	/* registered objects whose sites could not
				   be brought to their keys' state yet (the
				   next change of any key retries) */
};

/*
 * switchyard_get_stats - copy the registry's counters into *st.
 * Returns 0, or -EINVAL if st is NULL. Thread-safe (takes the patch lock).
 */
SWITCHYARD_API int switchyard_get_stats(struct switchyard_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_CORE_H */
