/* SPDX-License-Identifier: MIT */
/*
 * switchyard/introspect.h - what the registry knows: every key that has
 * sites in a loaded object, and every site of a key.
 *
 * Include <switchyard.h> rather than this file.
 */
#ifndef SWITCHYARD_INTROSPECT_H
#define SWITCHYARD_INTROSPECT_H

#include <stddef.h>
#include <stdint.h>

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

struct static_key;
struct static_call_key;

struct switchyard_key_info {
	const struct static_key *key;
	/*
	 * A stable name: the key's identifier ("tracing", "keys[3]"),
	 * qualified by its object's file name when two keys would share it
	 * ("libfoo.so:tracing"); "key@0x..." when no symbol covers it.
	 */
	const char *name;
	const char *object;	/* path of the object that defines it */
	int enabled;		/* static_key_enabled() */
	int count;		/* static_key_count() */
	size_t sites;		/* in every registered object */
	/* SWITCHYARD_KEY_DESCRIPTION()'s text, or NULL (appended) */
	const char *description;
};

struct switchyard_site_info {
	const void *addr;
	const char *object;	/* path of the object holding the site */
	const char *function;	/* the function holding it, or NULL */
	size_t offset;		/* from the start of that function */
	int length;		/* 2 or 5 (x86-64) */
	int jumps;		/* 1: the site jumps now, 0: falls through */
	int likely;		/* 1: a static_branch_likely() site */
	const char *file;	/* source file from the debug info, or NULL */
	unsigned line;		/* its line, or 0 */
};

/* A static call (appended to the API with live control). */
struct switchyard_call_info {
	const struct static_call_key *key;
	const char *name;	/* as in DEFINE_STATIC_CALL() ("ns::hook") */
	const char *object;	/* path of the object that defines its key */
	/* the current target: the name a SWITCHYARD_STATIC_CALL_TARGET()
	 * record gives it, else its symbol, "(none)" for NULL, or
	 * "func@0x..." */
	const char *target;
	size_t sites;		/* patched call sites, in every object */
	/* SWITCHYARD_STATIC_CALL_TARGET() records: ntargets names (as
	 * written there, sorted) and their functions */
	size_t ntargets;
	const char *const *targets;
	void (*const *target_funcs)(void);
};

typedef int (*switchyard_key_fn)(const struct switchyard_key_info *key,
				 void *arg);
typedef int (*switchyard_call_fn)(const struct switchyard_call_info *call,
				  void *arg);
typedef int (*switchyard_site_fn)(const struct switchyard_site_info *site,
				  void *arg);

/*
 * switchyard_for_each_key - call fn for every key that has sites in a
 * registered object, in address order. A snapshot: taken under the patch
 * lock, then fn is called without it (fn may change keys; the strings live
 * until fn returns). A nonzero return from fn stops the walk and is
 * returned. Returns 0, or -ENOMEM, or fn's value. Thread-safe.
 */
SWITCHYARD_API int switchyard_for_each_key(switchyard_key_fn fn, void *arg);

/*
 * switchyard_for_each_site - the same for every site of one key, in
 * address order within each object. Thread-safe.
 */
SWITCHYARD_API int switchyard_for_each_site(const struct static_key *key,
					    switchyard_site_fn fn, void *arg);

/*
 * switchyard_for_each_static_call - call fn for every static call that has
 * patched sites in a registered object or a SWITCHYARD_STATIC_CALL_TARGET()
 * record in a loaded one, in key address order. A snapshot, as for keys:
 * fn runs without the patch lock and may update calls; the strings and
 * arrays live until fn returns. A nonzero return from fn stops the walk
 * and is returned. Returns 0, -ENOMEM, or fn's value. Thread-safe; not
 * async-signal-safe.
 */
SWITCHYARD_API int switchyard_for_each_static_call(switchyard_call_fn fn,
						   void *arg);

#ifdef __cplusplus
}
#endif

#endif /* SWITCHYARD_INTROSPECT_H */
