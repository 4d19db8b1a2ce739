/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the library's files share. Nothing here is API.
 */
#ifndef SY_INTERNAL_H
#define SY_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include <switchyard.h>

#include "sy_records.h"	/* the records the headers emit */

#define SY_HIDDEN __attribute__((visibility("hidden")))

/*
 * The banners name the file that defines what follows them, bottom layer
 * first (doc/DESIGN.md, "The layers"); scripts/layers.py checks that each
 * function declared here is defined in a file its banner names.
 */

#include "arch/arch.h"	/* the per-arch contract */

/* ---- the records' fields (sy_records.h) ---------------------------------- */
static inline uintptr_t sy_entry_code(const struct sy_jump_entry *e)
{
	return (uintptr_t)&e->code + (intptr_t)e->code;
}

static inline uintptr_t sy_entry_target(const struct sy_jump_entry *e)
{
	return (uintptr_t)&e->target + (intptr_t)e->target;
}

static inline struct static_key *sy_entry_key(const struct sy_jump_entry *e)
{
	return (struct static_key *)(e->key & ~(uintptr_t)SY_ENTRY_FLAGS);
}

static inline bool sy_entry_branch(const struct sy_jump_entry *e)
{
	return e->key & SY_ENTRY_BRANCH;
}

static inline unsigned sy_entry_len(const struct sy_jump_entry *e)
{
	return SY_ARCH_JUMP_LEN(e->key & SY_ENTRY_LONG);
}


/* ---- the re-entry guard (guard.c) ---------------------------------------- */
SY_HIDDEN int sy_enter(void);	/* 0, or -EDEADLK when re-entered */
/* Leave without writing the queued reports: log.c, whose calls never
 * queue one (everyone else leaves through sy_leave()). */
SY_HIDDEN void sy_guard_exit(void);
/* The fork handlers' window (lock_order.c): the guard up whatever it was;
 * returns what it was, for sy_guard_restore(). */
SY_HIDDEN int sy_guard_raise(void);
SY_HIDDEN void sy_guard_restore(int saved);

/* ---- the patch lock (lock.c) --------------------------------------------- */
SY_HIDDEN void sy_lock(void);
/*
 * Evaluate an int expression with the patch lock held: taken here, or
 * already held by the calling thread (between switchyard_patch_lock() and
 * _unlock(), or inside a call that holds it), in which case it is not taken
 * again.
 */
#define SY_LOCKED(expr)                                                       \
	({                                                                    \
		bool sy_took_ = !sy_lock_held();                              \
		if (sy_took_)                                                 \
			sy_lock();                                            \
		int sy_v_ = (expr);                                           \
		if (sy_took_)                                                 \
			sy_unlock();                                          \
		sy_v_;                                                        \
	})
SY_HIDDEN int sy_lock_try(void);	/* 0, or -EBUSY when held */
SY_HIDDEN void sy_unlock(void);
SY_HIDDEN bool sy_lock_held(void);	/* by the calling thread */
/* Take the patch lock, waiting at most ms milliseconds: 0 or -ETIMEDOUT. */
SY_HIDDEN int sy_lock_timed(unsigned ms);
/* The calling thread's identity (unique among live threads, never 0). */
SY_HIDDEN uintptr_t sy_self_id(void);

/*
 * Lock order, everywhere (written out in lock_order.c): the dynamic
 * linker's lock, the patch lock, the deferred queue's lock, the log lock.
 * No thread that holds the patch lock calls into the dynamic linker.
 */

/* ---- logging (log.c) ----------------------------------------------------- */
SY_HIDDEN void sy_log(enum switchyard_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
SY_HIDDEN void sy_hex(char *buf, size_t size, const uint8_t *p, size_t n);
enum sy_atfork_phase { SY_ATFORK_PREPARE, SY_ATFORK_PARENT, SY_ATFORK_CHILD };
/* The log lock's part of the fork handlers (lock_order.c calls it). */
SY_HIDDEN void sy_log_atfork(enum sy_atfork_phase phase);

/* ---- the readers (names.c) ----------------------------------------------- */
/* A C++ symbol's readable form (malloc'ed), or NULL: sy_names.h. */
SY_HIDDEN char *sy_demangle(const char *sym);

/* ---- objects (objects.c) ------------------------------------------------- */
/* The loadable segments of one object, looked up with the linker's lock
 * free of the patch lock (before taking it). */
#define SY_OBJ_MAX_SEGS 16
#define SY_OBJ_NAME 4096
struct sy_obj {
	bool found;
	/* dlpi_name, copied while the linker's lock is held (the object may
	 * be unloaded as soon as the lookup returns): "" for the main program,
	 * truncated beyond SY_OBJ_NAME - 1 bytes */
	char name[SY_OBJ_NAME];
	uintptr_t bias;
	int nseg;
	uintptr_t lo[SY_OBJ_MAX_SEGS], hi[SY_OBJ_MAX_SEGS];
	/* where each segment's bytes are in the file, how many */
	uint64_t off[SY_OBJ_MAX_SEGS], filesz[SY_OBJ_MAX_SEGS];
	/* its program headers, in its memory (dlpi_phdr) */
	const void *phdr;
	int phnum;
};
/* Fill *o for the object that maps addr (dl_iterate_phdr: never with the
 * patch lock held). */
SY_HIDDEN void sy_obj_lookup(uintptr_t addr, struct sy_obj *o);
SY_HIDDEN bool sy_obj_contains(const struct sy_obj *o, uintptr_t addr);
/* Read len bytes of this process's memory at addr without trusting that
 * they are mapped (an object may be unloaded meanwhile): the count read,
 * -1 on error. process_vm_readv(), or where it is missing (qemu-user:
 * ENOSYS) a pread() of /proc/self/mem. */
SY_HIDDEN ssize_t sy_self_read(const void *addr, void *buf, size_t len);
/* The len bytes of o's file that are loaded at addr (the main program's
 * through /proc/self/exe): 0, -ENOENT (not from the file), or -errno. No
 * dynamic linker call: allowed with the patch lock held. */
SY_HIDDEN int sy_obj_file_read(const struct sy_obj *o, uintptr_t addr,
			       void *buf, size_t len);
/*
 * An fd open on the file object o was mapped from (its names are read from
 * it), not on whatever file is at its path now: /proc/self/exe for the
 * program; for a library, the file at its path if it is the mapped one
 * (the same inode as /proc/self/maps gives for o's first segment, or the
 * same build ID), else its /proc/self/map_files/ entry (which the kernel
 * opens only for CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN). -ESTALE when the
 * mapped file cannot be had (replaced on disk since o was loaded), after
 * logging it once per object; other negative errnos. O_CLOEXEC; the
 * caller closes it. Thread-safe; not async-signal-safe.
 */
SY_HIDDEN int sy_obj_open(const struct sy_obj *o);
/* Report a key whose instance differs from the program's (objects.c). */
SY_HIDDEN void sy_check_split_key(const void *key, bool call);
/* o's file for messages: its path, or the program's name. */
SY_HIDDEN const char *sy_obj_name(const struct sy_obj *o);
/* The first shared object (not the executable) whose dynamic symbols
 * define name: its path, malloc'ed, or NULL. */
SY_HIDDEN char *sy_definer_of(const char *name);
/* The file (malloc'ed) and load bias of the object mapping addr. */
SY_HIDDEN int sy_object_of(uintptr_t addr, char **path, uintptr_t *bias);
/* The program's path, malloc'ed, of any length ("/proc/self/exe" when the
 * kernel cannot say it), or NULL when out of memory. */
SY_HIDDEN char *sy_exe_path(void);
/*
 * Records sections (objects.c): fn for each record of every loaded
 * object's allocated section `section` (rsize bytes each), read in memory
 * where the dynamic linker relocated it, from inside dl_iterate_phdr()
 * (the object stays mapped meanwhile; never with the patch lock held).
 * The records are data, not trusted: sy_rec_strdup() copies a string the
 * object maps, at most max bytes, or gives NULL.
 */
struct sy_rec_obj;
typedef void (*sy_rec_fn)(const struct sy_rec_obj *o, const void *rec,
			  void *arg);
SY_HIDDEN void sy_records_walk(const char *section, size_t rsize,
			       sy_rec_fn fn, void *arg);
SY_HIDDEN char *sy_rec_strdup(const struct sy_rec_obj *o, const char *p,
			      size_t max);
/* One object's table of records (runtime_const.c, alternative.c). */
struct sy_rec_table {
	void *start, *stop;
	struct sy_rec_table *next;
};
/* Add [start, stop) to *list: the entry, with *fresh false if the table
 * was there already (LTO: the same table twice), or NULL (no memory).
 * Patch lock held. */
SY_HIDDEN struct sy_rec_table *sy_rec_table_add(struct sy_rec_table **list,
						void *start, void *stop,
						bool *fresh);
/* Remove the table starting at start: 0 or -ENOENT. Patch lock held. */
SY_HIDDEN int sy_rec_table_del(struct sy_rec_table **list, const void *start);
/* Free them all (the library is being unloaded). Patch lock held. */
SY_HIDDEN void sy_rec_tables_free(struct sy_rec_table **list);

/* ---- the environment (cpu.c) --------------------------------------------- */
/* secure_getenv(), also before the C library's initialisation has set
 * environ (an IFUNC resolver): the initial environment then (cpu.c). Not
 * thread-safe against setenv(), as getenv(). */
SY_HIDDEN const char *sy_getenv(const char *name);

/* ---- naming (naming.c) --------------------------------------------------- */
/* Names for messages (naming.c); without the patch lock. */
SY_HIDDEN void sy_name_key(const struct static_key *key, char *buf,
			   size_t size);
SY_HIDDEN void sy_name_site(uintptr_t addr, char *buf, size_t size);
/* The readable name of the symbol that contains addr (func: a function,
 * else an object), malloc'ed, with "+0x.." past its start; NULL if none.
 * recs (NULL: none): the name records, for an object no symbol names. */
struct sy_namerecs;
SY_HIDDEN char *sy_symbol_name(uintptr_t addr, bool func,
			       const struct sy_namerecs *recs);
/* The name records (SY__NAME_RECORD(), section sy_names) of every loaded
 * object, read as the key descriptions are; NULL when out of memory. */
SY_HIDDEN struct sy_namerecs *sy_namerecs_load(void);
SY_HIDDEN void sy_namerecs_free(struct sy_namerecs *r);
/* Room for element n of the array *vp of *cap elements (doubling it when
 * full): false when out of memory, the array unchanged. */
SY_HIDDEN bool sy_grow(void *vp, size_t *cap, size_t n, size_t elem);

/* ---- messages (report.c) ------------------------------------------------- */
/*
 * Messages that name a key and a site as the user knows them (report.c):
 * SY_REPORT_KEY and SY_REPORT_SITE in the text stand for "the key's name"
 * and "function+offset (file:line)". Naming reads symbol and line tables
 * and asks the dynamic linker, which must not happen with the patch lock
 * held: a report made under the lock is queued and written, named, when
 * the thread leaves the library (sy_leave()) or the worker drops the lock
 * (sy_report_flush()).
 */
#define SY_REPORT_KEY "\x01"
#define SY_REPORT_SITE "\x02"
SY_HIDDEN void sy_report(enum switchyard_log_level level,
			 const struct static_key *key, uintptr_t site,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- leaving a call (guard.c, report.c) ---------------------------------- */
/* Write the reports queued under the patch lock (report.c), then leave:
 * still inside while naming, so a handler that interrupts it gets
 * -EDEADLK. */
SY_HIDDEN void sy_report_flush(void);
static inline void sy_leave(void)
{
	sy_report_flush();
	sy_guard_exit();
}
/* Evaluate an int expression inside sy_enter()/sy_leave(). */
#define SY_GUARDED(expr)                                                      \
	({                                                                    \
		int sy_r_ = sy_enter();                                       \
		if (!sy_r_) {                                                 \
			sy_r_ = (expr);                                       \
			sy_leave();                                           \
		}                                                             \
		sy_r_;                                                        \
	})

/* ---- the poke engine (poke.c, poke_write.c) ------------------------------
 *
 * The engine applies a set of code changes as one batch: every change is
 * verified before any is written (all or nothing), the writes are grouped
 * into chunks of nearby code (one system call each), and the cores are
 * synchronised once per batch. The changes come from a source that
 * describes change i on demand, so a batch of 100,000 sites costs no
 * memory per site. Only with the patch lock held.
 */
struct sy_poke_desc {
	uintptr_t addr;
	unsigned len;	/* at most SY_ARCH_MAX_INSN (>= 8) */
	uint8_t old[SY_ARCH_MAX_INSN];	/* the other form (what undo restores) */
	uint8_t new_[SY_ARCH_MAX_INSN];
	/* a debugger's breakpoint over the site hides a jump (see
	 * sy_arch_site_check()) */
	bool hidden_jump;
	/* not a jump label site: the bytes must be old (write new) or new
	 * (skip), nothing else; a breakpoint over them is refused, but where
	 * bp_mask allows one. Used by
	 * static calls, whose protocol makes every such write safe (no thread
	 * executes the bytes, or the one byte written is a whole opcode). */
	bool exact;
	/* exact: the positions (bit i: byte i) where a debugger's breakpoint
	 * (int3) may hide old[i], which then equals new[i] and starts an
	 * instruction in both forms: a position that holds int3 is never
	 * written (the byte belongs to the debugger, which restores the right
	 * one), the bytes around it are (static calls: a payload rewritten
	 * behind a JMP guard; see sc_payload_shadow()) */
	uint16_t bp_mask;
	const struct static_key *key;	/* for messages: a static key, or
					   (exact) a struct static_call_key,
					   or a variable (what) */
	const char *what;	/* exact: what key is ("static call" if
				   NULL, "run-time constant") */
};

struct sy_poke_src {
	/* Start a pass over the changes (the engine makes up to three:
	 * verify, write, undo); every pass must yield the same changes in
	 * the same order. Address order merges best. */
	void (*rewind)(void *ctx);
	/* Describe the next change in *d; false when there are no more. */
	bool (*next)(void *ctx, struct sy_poke_desc *d);
	void *ctx;
};

/* Verify, write and synchronise. Returns 0, -EFAULT (a site held
 * unexpected bytes: reported, nothing written), -EBUSY (a debugger's
 * breakpoint hides the byte the change needs: reported, nothing written)
 * or the write path's error (whatever was written is undone). */
SY_HIDDEN int sy_poke_apply(const struct sy_poke_src *src);
/* The same without the final sync (the caller's protocol says why none is
 * needed). */
SY_HIDDEN int sy_poke_apply_nosync(const struct sy_poke_src *src);
/* One core-serialising sync (membarrier SYNC_CORE, or its fallbacks). */
SY_HIDDEN void sy_poke_sync(void);
/* Counters for switchyard_get_stats(). */
SY_HIDDEN void sy_poke_stats(struct switchyard_stats *st);

/* ---- stubs for far static call targets (sc_stub.c) ----------------------- */
/* The address of a stub that jumps to target and lies within reach of a
 * call at from, or 0. Patch lock held. */
SY_HIDDEN uintptr_t sy_sc_stub_find(uintptr_t from, uintptr_t target);
/* Make one (0 if there is one already): 0, -ENOMEM (no page near from),
 * or the poke engine's error. key names the static call in messages. */
SY_HIDDEN int sy_sc_stub_make(uintptr_t from, uintptr_t target,
			      const void *key);
/* A slot of stub memory near from (the stubs' length), filled with what
 * build writes into out for the slot's address addr (ctx: its argument),
 * written (and synced where stubs are) before it returns; its address in
 * *addr. Never freed. 0, -ENOMEM, or the poke engine's error. */
typedef void (*sy_sc_stub_build)(uintptr_t addr, uint8_t *out,
				 const void *ctx);
SY_HIDDEN int sy_sc_stub_code(uintptr_t from, sy_sc_stub_build build,
			      const void *ctx, const void *key,
			      uintptr_t *addr);

/* ---- the registry (registry.c) ------------------------------------------- */
/* Bring every site of key to state `enabled` in every registered object.
 * Patch lock held. Returns 0 or a negative errno; on error no site changed. */
SY_HIDDEN int sy_jump_label_update(struct static_key *key, bool enabled);
/* n keys, each to en[i], in one batch; -EAGAIN: not possible now (a
 * stale table), change them one at a time (registry.c) */
SY_HIDDEN int sy_jump_label_update_n(struct static_key *const *keys,
				     const bool *en, size_t n);
/* Take object o's table of n sites [start, start + n): index it, bring
 * its sites to their keys' state; *keys (malloc'ed, *nkeys long, may be
 * NULL) its distinct keys, for the split check after the lock. 0, or a
 * negative errno with the table kept stale. Patch lock held. */
SY_HIDDEN int sy_jump_table_add(struct sy_jump_entry *start, size_t n,
				const struct sy_obj *o,
				const struct static_key ***keys, size_t *nkeys);
/* Drop the table at start (object o is going away) and mark dead the
 * sites of other tables that name o's keys. Patch lock held. */
SY_HIDDEN void sy_jump_table_del(const struct sy_jump_entry *start,
				 const struct sy_obj *o);
/* Visit every live site of every registered object (patch lock held). */
typedef void (*sy_site_visit)(const struct sy_jump_entry *e, void *arg);
SY_HIDDEN void sy_registry_visit(sy_site_visit fn, void *arg);

/* ---- the key state machine (static_key.c) -------------------------------- */
#define SY_KEY_WARNED_DEC 0x100u	/* dec below zero */
#define SY_KEY_WARNED_BUSY 0x200u	/* enable/disable with count > 1 */
#define SY_KEY_WARNED_LOCK 0x400u	/* _cpuslocked without the lock */
#define SY_KEY_WARNED_OVERFLOW 0x800u	/* count at INT_MAX */
/* Change n keys at once (static_key.c): ops SY_KEYS_*, results as the
 * one-key calls return them; every site that must change in one batch
 * (one core sync) when the registry allows it. Takes the patch lock. */
enum { SY_KEYS_OFF, SY_KEYS_ON, SY_KEYS_INC, SY_KEYS_DEC };
SY_HIDDEN int sy_keys_change(struct static_key *const *keys, const int *ops,
			     int *results, size_t n);
SY_HIDDEN int sy_key_dec(struct static_key *key);
/* src/static_key.c: tell helgrind and DRD that the field at addr is read
 * and written without a lock on purpose (a no-op when not under them). */
SY_HIDDEN void sy_vg_benign_race(const void *addr, size_t len);

/* ---- static calls (static_call.c, sc_insn.c) ----------------------------- */
SWITCHYARD_API int sy__register_static_call_sites(struct sy_sc_entry *start,
						  struct sy_sc_entry *stop);
SWITCHYARD_API int sy__unregister_static_call_sites(struct sy_sc_entry *start,
						    struct sy_sc_entry *stop);
/* Each registered static call site's key (static_call.c; sc_insn.c where a
 * site is one instruction). Patch lock held. */
typedef void (*sy_sc_site_visit)(struct static_call_key *key, void *arg);
SY_HIDDEN void sy_sc_visit(sy_sc_site_visit fn, void *arg);

/* ---- run-time constants (runtime_const.c) -------------------------------- */
SWITCHYARD_API int sy__register_runtime_consts(struct sy_rc_entry *start,
					       struct sy_rc_entry *stop);
SWITCHYARD_API int sy__unregister_runtime_consts(struct sy_rc_entry *start,
						 struct sy_rc_entry *stop);
/* runtime_const_init() of n variables at once: the same two batches and
 * syncs for all (the library's start-up: the copy routine's thresholds). */
SY_HIDDEN int sy_runtime_const_init_n(const void *const *syms,
				      const size_t *sizes, size_t n);

/* ---- alternatives (alternative.c) ---------------------------------------- */
SWITCHYARD_API int sy__register_alternatives(struct sy_alt_entry *start,
					     struct sy_alt_entry *stop);
SWITCHYARD_API int sy__unregister_alternatives(struct sy_alt_entry *start,
					       struct sy_alt_entry *stop);

/* ---- deferred keys (deferred.c) ------------------------------------------ */
/* Drop the queued works that lie in object o (it is being unloaded).
 * Patch lock held. */
SY_HIDDEN void sy_deferred_forget(const struct sy_obj *o);
/* The queue's part of the fork handlers (lock_order.c calls it, patch lock held);
 * inside_call: the forking thread was inside a switchyard call. */
SY_HIDDEN void sy_deferred_atfork(enum sy_atfork_phase phase, bool inside_call);

/* ---- the listing (introspect.c) ------------------------------------------ */
/*
 * What a request may call a key besides its listed name (key_names.c), which
 * holds qualifiers only while another key needs them: local, its name in
 * its object (the listed name without "OBJECT:"); object, that object's
 * file base name; src, a file-local key's source file ("a.c"), and plain,
 * local without "src:" (local itself when the listing does not need the
 * source file). NULL when unknown (src: a global, a stripped file).
 */
struct sy_key_aka {
	const char *local, *object, *src, *plain;
};
typedef int (*sy_key_aka_fn)(const struct switchyard_key_info *k,
			     const struct sy_key_aka *aka, void *arg);
/* switchyard_for_each_key() with each key's sy_key_aka */
SY_HIDDEN int sy_for_each_key_aka(sy_key_aka_fn fn, void *arg);
/* switchyard_for_each_site() with an object cache kept across calls
 * (NULL: none), for a caller that lists many keys' sites. */
struct sy_site_cache;
SY_HIDDEN struct sy_site_cache *sy_site_cache_new(void);
SY_HIDDEN void sy_site_cache_free(struct sy_site_cache *sc);
SY_HIDDEN int sy_for_each_site_cached(const struct static_key *key,
				      switchyard_site_fn fn, void *arg,
				      struct sy_site_cache *cache);

/* ---- SWITCHYARD_KEYS (keys_env.c) ---------------------------------------- */
/* Decide the keys object o has just brought (after its registration,
 * outside the patch lock and the re-entry guard: load.c), and forget the
 * keys of an object going away. */
struct sy_obj;
SY_HIDDEN void sy_keys_env_apply(const struct sy_obj *o);
SY_HIDDEN void sy_keys_env_forget(const struct sy_obj *o);
/* The program opted out of SWITCHYARD_CONTROL and SWITCHYARD_KEYS
 * (SWITCHYARD_IGNORE_CONTROL_ENV): the switchyard tool does. */
SY_HIDDEN bool sy_env_ignored(void);

/* ---- objects loaded and unloaded (load.c) -------------------------------- */
/* Called by the per-object glue the header emits. Exported, not API. */
SWITCHYARD_API int sy__register_jump_table(struct sy_jump_entry *start,
					   struct sy_jump_entry *stop);
SWITCHYARD_API int sy__unregister_jump_table(struct sy_jump_entry *start,
					     struct sy_jump_entry *stop);

#endif /* SY_INTERNAL_H */
