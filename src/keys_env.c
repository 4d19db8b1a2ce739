/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "key_names.h"

/*
 * A program may opt out of SWITCHYARD_CONTROL and SWITCHYARD_KEYS (the
 * switchyard tool does: they are meant for the programs it inspects) by
 * defining this (SWITCHYARD_IGNORE_CONTROL_ENV, <switchyard/control.h>).
 * A weak reference: resolved when the library is relocated, before any
 * constructor, and NULL in every other program.
 */
extern const int switchyard_ignore_control_env __attribute__((weak));

bool sy_env_ignored(void)
{
	return &switchyard_ignore_control_env && switchyard_ignore_control_env;
}

/*
 * keys_env.c - SWITCHYARD_KEYS: keys set from the environment as the
 * objects that bring them register (load.c calls sy_keys_env_apply() after
 * each registration, outside the patch lock and the re-entry guard).
 *
 * SWITCHYARD_KEYS="GLOB=on|off,..." sets keys at start-up (also "+GLOB"
 * and "-GLOB", the convention of backtrace-labs' dynamic_flag). Each key is
 * decided once, when the first object with sites of it registers (before
 * that object's constructors run, and before main() for the objects loaded
 * with the program), by the LAST item whose glob matches its name (as
 * `list` shows it); the keys one registration brings change in one batch.
 * The variable is read on the first registration, not in a constructor:
 * with the library linked statically, the program's glue runs before the
 * constructors of this file.
 *
 * When the program's own table registers, every object loaded with it has
 * registered too (the program's constructors run last): items that matched
 * nothing are reported then (or at exit when the program has no keys). A
 * library loaded later may still bring a key an item names; it is set then.
 *
 * Lock order: a registration runs with the dynamic linker's lock held,
 * naming keys takes that lock again (it is recursive) and then the patch
 * lock. env_lock is a leaf, held only around the tables below, never
 * across a call into the registry.
 */
struct env_item {
	char *glob;
	bool on, matched;
	bool exact;	/* a key is named glob: only such keys match it
			   (sy_pattern_is()); set once seen, env_lock */
};

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
static struct env_item *env_items;	/* set once by env_parse() */
static size_t env_n;
static const void **env_seen;		/* env_lock: keys decided, sorted */
static size_t env_nseen, env_cap;
static bool env_reported;		/* env_lock */

static void env_parse(void)
{
	const char *env = secure_getenv("SWITCHYARD_KEYS");
	struct env_item *v;
	size_t n = 1, j = 0;
	char *copy, *item;

	if (!env || !*env || sy_env_ignored())
		return;
	for (const char *p = env; *p; p++)
		n += *p == ',';
	copy = strdup(env);
	v = calloc(n, sizeof(*v));
	if (!copy || !v) {
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_KEYS: out of memory: "
		       "no key set from it");
		goto bad;
	}
	item = copy;
	/* i: the item's position, j: items kept. An empty item (a leading,
	 * trailing or doubled comma) is skipped, as in every list-valued
	 * variable (switchyard(3) ENVIRONMENT). */
	for (size_t i = 0; i < n; i++) {
		char *end = strchr(item, ','), *eq;

		if (end)
			*end = '\0';
		if (!*item) {
			item = end + 1;
			continue;
		}
		eq = strrchr(item, '=');
		if ((item[0] == '+' || item[0] == '-') && item[1] && !eq) {
			/* dynamic_flag's convention: +pattern, -pattern */
			v[j].glob = item + 1;
			v[j++].on = item[0] == '+';
			item = end + 1;
			continue;
		}
		if (!eq || eq == item ||
		    (strcmp(eq + 1, "on") && strcmp(eq + 1, "off"))) {
			sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_KEYS: item %zu "
			       "(\"%.64s\") is not NAME=on or NAME=off (or "
			       "+NAME, -NAME): no key set from the variable",
			       i + 1, item);
			goto bad;
		}
		*eq = '\0';
		v[j].glob = item;
		v[j++].on = !strcmp(eq + 1, "on");
		item = end + 1;
	}
	if (!j)
		goto bad;	/* nothing but commas: nothing to set */
	env_items = v;
	env_n = j;
	return;
bad:
	free(copy);
	free(v);
}

/* Decide key now unless it was decided before (env_lock held); false when
 * there is no room to remember it (then it is left alone). */
static bool env_first_sight(const void *key)
{
	size_t lo = 0, hi = env_nseen;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if ((uintptr_t)env_seen[mid] < (uintptr_t)key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < env_nseen && env_seen[lo] == key)
		return false;
	if (env_nseen == env_cap) {
		size_t cap = env_cap ? 2 * env_cap : 64;
		const void **v = realloc(env_seen, cap * sizeof(*v));

		if (!v)
			return false;
		env_seen = v;
		env_cap = cap;
	}
	memmove(env_seen + lo + 1, env_seen + lo,
		(env_nseen - lo) * sizeof(*env_seen));
	env_seen[lo] = key;
	env_nseen++;
	return true;
}

/* Every key: does an item name it exactly (sy_key_names(), the name in its
 * object included)? A key not decided before is kept in b with its names,
 * its op decided by env_decide() once every name is seen. */
static int env_collect(const struct switchyard_key_info *k,
		       const struct sy_key_aka *aka, void *arg)
{
	struct key_list *b = arg;
	char *names = sy_key_names(k, aka);
	bool first;

	if (!names) {
		b->failed = true;
		return 1;
	}
	pthread_mutex_lock(&env_lock);
	for (size_t i = 0; i < env_n; i++)
		if (sy_names_is(names, env_items[i].glob, true))
			env_items[i].exact = true;
	first = env_first_sight(k->key);
	pthread_mutex_unlock(&env_lock);
	if (!first) {
		free(names);
		return 0;
	}
	return sy_key_list_add(b, k, -1, names) ? 0 : 1;
}

/* Each kept key's op: the last item that matches its name (exactly, for
 * an item that names a key); the keys no item matches are dropped. */
static void env_decide(struct key_list *b)
{
	size_t w = 0;

	pthread_mutex_lock(&env_lock);
	for (size_t j = 0; j < b->n; j++) {
		const struct env_item *last = NULL;

		for (size_t i = 0; i < env_n; i++) {
			struct env_item *it = &env_items[i];

			const char *v = b->names[j];

			if (it->exact ? !sy_names_is(v, it->glob, true) :
					!sy_names_glob(v, it->glob, true))
				continue;
			it->matched = true;
			last = it;
		}
		if (!last) {
			free(b->names[j]);
			continue;
		}
		b->keys[w] = b->keys[j];
		b->names[w] = b->names[j];
		b->ops[w++] = last->on ? SY_KEYS_ON : SY_KEYS_OFF;
	}
	b->n = w;
	pthread_mutex_unlock(&env_lock);
}

static void env_report(void)
{
	pthread_mutex_lock(&env_lock);
	if (!env_reported) {
		env_reported = true;
		for (size_t i = 0; i < env_n; i++)
			if (!env_items[i].matched)
				sy_log(SWITCHYARD_LOG_WARN, "SWITCHYARD_KEYS: "
				       "\"%s\" matches no key of the program or "
				       "of the libraries loaded with it (one "
				       "loaded later may still bring it)",
				       env_items[i].glob);
	}
	pthread_mutex_unlock(&env_lock);
}

void sy_keys_env_apply(const struct sy_obj *o)
{
	struct key_list b = { 0 };
	int *res = NULL;

	pthread_once(&env_once, env_parse);
	if (!env_n)
		return;
	if (sy_lock_held()) {
		/* dlopen() between switchyard_patch_lock() and _unlock():
		 * naming the keys calls the dynamic linker, which must not
		 * happen with the patch lock held (internal.h) */
		sy_log(SWITCHYARD_LOG_WARN, "SWITCHYARD_KEYS: not applied to "
		       "the keys of %s: loaded with the patch lock held",
		       o->name[0] ? o->name : "the program");
		return;
	}
	if (sy_for_each_key_aka(env_collect, &b) < 0 || b.failed)
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_KEYS: out of memory "
		       "reading the keys of %s: some may keep their default",
		       o->name[0] ? o->name : "the program");
	env_decide(&b);
	if (b.n)
		res = malloc(b.n * sizeof(*res));
	if (res && !sy_keys_change(b.keys, b.ops, res, b.n)) {
		for (size_t i = 0; i < b.n; i++) {
			const char *st = b.ops[i] == SY_KEYS_ON ? "on" : "off";

			if (res[i] < 0)
				sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_KEYS: "
				       "%s could not be set %s: %s", b.names[i],
				       st, strerror(-res[i]));
			else
				sy_log(SWITCHYARD_LOG_INFO, "SWITCHYARD_KEYS: "
				       "%s %s", b.names[i], st);
		}
	} else if (b.n) {
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_KEYS: could not set "
		       "%zu keys (%s first): they keep their default", b.n,
		       b.names[0]);
	}
	sy_key_list_free(&b);
	free(res);
	if (o->found && !o->name[0])
		env_report();
}

/* An object is going away: its keys may be reborn at the same addresses
 * when it is loaded again, and must then be decided again. */
void sy_keys_env_forget(const struct sy_obj *o)
{
	size_t w = 0;

	pthread_once(&env_once, env_parse);
	if (!env_n)
		return;
	pthread_mutex_lock(&env_lock);
	for (size_t i = 0; i < env_nseen; i++)
		if (!sy_obj_contains(o, (uintptr_t)env_seen[i]))
			env_seen[w++] = env_seen[i];
	env_nseen = w;
	pthread_mutex_unlock(&env_lock);
}

/* At exit: the items that matched nothing, in a program without keys of
 * its own (whose registration would have reported them). */
__attribute__((destructor)) static void env_fini(void)
{
	pthread_once(&env_once, env_parse);
	env_report();
}
