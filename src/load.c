/* SPDX-License-Identifier: MIT */
/*
 * load.c - what happens when an object with jump label sites is loaded and
 * unloaded: the entry points that its constructor and destructor call
 * (arch/x86_64.h's glue, static_key.h's fallback).
 *
 *   event                      here                       then
 *   constructor                the registry takes the     SWITCHYARD_KEYS
 *   sy__register_jump_table()  table (registry.c), under  sets the keys it
 *                              the patch lock             names (keys_env.c)
 *   destructor                 the registry drops the     SWITCHYARD_KEYS
 *   sy__unregister_jump_table()  table and the deferred   forgets its keys
 *   sy__object_unloading()     queue the object's works   (they may be born
 *                              (deferred.c), under the    again at the same
 *                              patch lock                 addresses)
 *
 * The sequence lives here, above the files it drives, so that the registry
 * calls neither the deferred queue nor SWITCHYARD_KEYS (doc/DESIGN.md,
 * "The layers").
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "internal.h"

/*
 * A message for the one state in which (un)registration cannot go on: the
 * calling thread is already inside a switchyard call, i.e. dlopen() or
 * dlclose() ran in a signal handler that interrupted one (neither is
 * async-signal-safe) or in the log callback (which must not call back).
 * Written with write(2): the log lock may be held by the interrupted call.
 */
static void reentered(const char *what)
{
	static const char pre[] = "switchyard: ";
	static const char post[] = " from inside a switchyard call (dlopen or "
				   "dlclose in a signal handler or the log "
				   "callback)\n";

	if (write(STDERR_FILENO, pre, sizeof(pre) - 1) < 0 ||
	    write(STDERR_FILENO, what, strlen(what)) < 0 ||
	    write(STDERR_FILENO, post, sizeof(post) - 1) < 0) {
		/* nowhere left to report to */
	}
}

int sy__register_jump_table(struct sy_jump_entry *start,
			    struct sy_jump_entry *stop)
{
	const struct static_key **keys = NULL;
	size_t nkeys = 0;
	struct sy_obj o;
	int r;

	if (!start || stop <= start)
		return 0;
	/* Under the re-entry guard: a signal handler on this thread must not
	 * start a change in the middle of this registration's batch (the
	 * poke engine's buffers are shared). It gets -EDEADLK instead. */
	if (sy_enter()) {
		reentered("refusing to register an object's sites");
		return -EDEADLK;
	}
	/* Before the lock: this takes the dynamic linker's lock. */
	sy_obj_lookup((uintptr_t)start, &o);
	if ((uintptr_t)start % _Alignof(struct sy_jump_entry) ||
	    ((uintptr_t)stop - (uintptr_t)start) % sizeof(*start)) {
		sy_log(SWITCHYARD_LOG_ERROR, "%s: malformed site table %p..%p",
		       sy_obj_name(&o), (void *)start, (void *)stop);
		sy_leave();
		return -EINVAL;
	}
	/* A library may be loaded by a thread that holds the patch lock
	 * (dlopen between switchyard_patch_lock/unlock): SY_LOCKED then does
	 * not take it again. */
	r = SY_LOCKED(sy_jump_table_add(start, (size_t)(stop - start), &o,
					&keys, &nkeys));
	/* After the lock: the split check needs the dynamic linker. */
	for (size_t i = 0; i < nkeys; i++)
		sy_check_split_key(keys[i], false);
	free(keys);
	sy_leave();
	/* SWITCHYARD_KEYS: outside the guard, it changes keys */
	sy_keys_env_apply(&o);
	return r;
}

/* Patch lock held. */
static int remove_locked(const struct sy_jump_entry *start,
			 const struct sy_obj *o)
{
	sy_jump_table_del(start, o);
	/* Its deferred keys' queued final decrements go with it. */
	sy_deferred_forget(o);
	return 0;
}

int sy__unregister_jump_table(struct sy_jump_entry *start,
			      struct sy_jump_entry *stop)
{
	struct sy_obj o;
	int r;

	(void)stop;
	if (sy_enter()) {
		/* Going on could free a table under the interrupted batch,
		 * stopping would leave one that names unmapped code: a state
		 * that must not exist (dlclose is not async-signal-safe). */
		reentered("an object is being unloaded");
		abort();
	}
	/* Before the lock: this takes the dynamic linker's lock. An empty
	 * table's start may sit just past the object's last segment. */
	sy_obj_lookup((uintptr_t)start, &o);
	if (!o.found)
		sy_obj_lookup((uintptr_t)start - 1, &o);
	r = SY_LOCKED(remove_locked(start, &o));
	sy_leave();
	if (o.found)
		sy_keys_env_forget(&o);
	return r;
}

static int forget_locked(const struct sy_obj *o)
{
	/* Its deferred keys' queued final decrements go with it. */
	sy_deferred_forget(o);
	return 0;
}

void sy__object_unloading(const void *addr)
{
	struct sy_obj o;

	if (sy_enter()) {
		reentered("an object is being unloaded");
		abort();	/* as in sy__unregister_jump_table() */
	}
	sy_obj_lookup((uintptr_t)addr, &o);
	if (o.found && o.name[0]) {	/* the program: at exit only */
		SY_LOCKED(forget_locked(&o));
		sy_keys_env_forget(&o);
	}
	sy_leave();
}
