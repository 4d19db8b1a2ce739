/* SPDX-License-Identifier: MIT */
/*
 * control_cmd.c - the control socket's requests (<switchyard/control.h>):
 * `list`, `set GLOB on|off|inc|dec`, `call GLOB TARGET`, each answered
 * with JSON. The thread that serves the socket is control.c's; this file
 * knows nothing of sockets: a request line in, a reply out.
 *
 * A `set` changes every key its pattern matches at once: the same
 * transitions as static_key_enable() and the rest, every site in one poke
 * batch, one core sync (sy_keys_change()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "control_impl.h"
#include "key_names.h"
#include "sy_names.h"

/* ---- replies ------------------------------------------------------------ */

struct out {
	char *p;
	size_t len, cap;
	bool failed;
	struct sy_site_cache *cache;	/* `list`: objects read once */
};

static void put(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || o->len + (size_t)n + 1 > o->cap) {
		size_t cap = (o->len + (size_t)(n < 0 ? 0 : n) + 1) * 2 + 256;
		char *p = n < 0 ? NULL : realloc(o->p, cap);

		if (!p) {
			o->failed = true;
			return;
		}
		o->p = p;
		o->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(o->p + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* s as a JSON string: valid UTF-8 as it is, control characters and bytes
 * that are not UTF-8 as \u00XX (sy_json_escape(), as the tool's list FILE) */
static void put_str(struct out *o, const char *s)
{
	char small[256], *big = NULL;
	size_t need = sy_json_escape(s, small, sizeof(small));

	if (need > sizeof(small) && !(big = malloc(need))) {
		o->failed = true;
		return;
	}
	if (big)
		sy_json_escape(s, big, need);
	put(o, "\"%s\"", big ? big : small);
	free(big);
}

/* A JSON string of formatted text (a message naming what the client sent:
 * escaped as a whole). */
static void put_strf(struct out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_strf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->failed = true;
		return;
	}
	put_str(o, msg);
	free(msg);
}

/*
 * A site's bytes, read without trusting that its object is still mapped
 * (the snapshot was taken under the patch lock, this runs after it):
 * process_vm_readv() on this very process (sy_self_read()) fails with
 * EFAULT where a load would fault. 0 bytes when unmapped.
 */
static size_t read_code(const void *addr, uint8_t *buf, size_t len)
{
	ssize_t n = sy_self_read(addr, buf, len);

	return n > 0 ? (size_t)n : 0;
}

static int list_site(const struct switchyard_site_info *st, void *arg)
{
	struct out *o = arg;
	uint8_t b[8];
	size_t n = read_code(st->addr, b, st->length > 0 && st->length <= 8 ?
			     (size_t)st->length : 0);

	put(o, "%s{\"address\": \"%p\", \"function\": ",
	    o->p[o->len - 1] == '[' ? "" : ", ", st->addr);
	if (st->function)
		put_str(o, st->function);
	else
		put(o, "null");
	put(o, ", \"offset\": %zu, \"file\": ", st->offset);
	if (st->file)
		put_str(o, st->file);
	else
		put(o, "null");
	put(o, ", \"line\": %u, \"length\": %d, \"jumps\": %s, "
	    "\"likely\": %s, \"bytes\": \"", st->line, st->length,
	    st->jumps ? "true" : "false", st->likely ? "true" : "false");
	for (size_t i = 0; i < n; i++)
		put(o, "%s%02x", i ? " " : "", b[i]);
	put(o, "\"}");
	return 0;
}

static int list_one(const struct switchyard_key_info *k, void *arg)
{
	struct out *o = arg;

	put(o, "%s{\"name\": ", o->p && o->p[o->len - 1] == '[' ? "" : ", ");
	put_str(o, k->name);
	put(o, ", \"object\": ");
	put_str(o, k->object ? k->object : "");
	put(o, ", \"enabled\": %s, \"count\": %d, \"sites\": %zu",
	    k->enabled ? "true" : "false", k->count, k->sites);
	if (k->description) {
		put(o, ", \"description\": ");
		put_str(o, k->description);
	}
	/* last: its objects nest in this one */
	put(o, ", \"site_list\": [");
	if (sy_for_each_site_cached(k->key, list_site, o, o->cache) == -ENOMEM)
		o->failed = true;
	put(o, "]}");
	return 0;
}

struct set_req {
	const char *glob;
	int op;
	struct key_list l;
	bool *exact;	/* per key of l: its name is the pattern */
	size_t cap_exact, nexact;
	bool alike;	/* the keys named as the pattern are listed alike */
	size_t unnamed;	/* keys listed as key@0x...: no name to match */
	char hint[512];	/* names the pattern may have meant */
	size_t nhint;
};

static int set_collect(const struct switchyard_key_info *k,
		       const struct sy_key_aka *aka, void *arg)
{
	struct set_req *q = arg;
	char *names = sy_key_names(k, aka);
	bool exact;

	if (!names) {
		q->l.failed = true;
		return 1;
	}
	exact = sy_names_is(names, q->glob, false);
	free(names);
	if (!strncmp(k->name, "key@", 4))
		q->unnamed++;
	if (sy_qualified_form(q->glob, k->name) && q->nhint++ < 8) {
		size_t len = strlen(q->hint);

		snprintf(q->hint + len, sizeof(q->hint) - len, "%s%s",
			 len ? ", " : "", k->name);
	}
	if (!exact && (q->nexact || fnmatch(q->glob, k->name, 0)))
		return 0;
	if (!sy_grow(&q->exact, &q->cap_exact, q->l.n, sizeof(*q->exact))) {
		q->l.failed = true;
		return 1;
	}
	q->exact[q->l.n] = exact;
	q->nexact += exact;
	return sy_key_list_add(&q->l, k, q->op, NULL) ? 0 : 1;
}

/* Keep only the keys named as the pattern when there are any. */
static void set_keep_exact(struct set_req *q)
{
	size_t w = 0;

	if (!q->nexact || q->l.failed)
		return;
	q->alike = true;
	for (size_t i = 0; i < q->l.n; i++) {
		if (!q->exact[i]) {
			free(q->l.names[i]);
			continue;
		}
		if (w && strcmp(q->l.names[i], q->l.names[0]))
			q->alike = false;
		q->l.keys[w] = q->l.keys[i];
		q->l.names[w] = q->l.names[i];
		q->l.ops[w++] = q->l.ops[i];
	}
	q->l.n = w;
}

/*
 * dlopen() is looked up, not linked. In a program linked -static, glibc's
 * linker prints "Using 'dlopen' in statically linked applications requires
 * at runtime the shared libraries from the glibc version used for linking"
 * for any reference to dlopen (a weak one too: dladdr() and dlclose() link
 * its loader anyway), in every program that links libswitchyard.a. Such a
 * program needs no pin: the only object its switchyard registers is
 * itself (a library it dlopen()s gets a libc and a switchyard of its own,
 * with their own registry), and dlsym() finds no dlopen there (a static
 * program has no dynamic symbols). A dynamic program finds the dlopen a
 * call would reach (libc's, libdl's before glibc 2.34, a sanitizer's).
 * Control thread only.
 */
static void *(*find_dlopen(void))(const char *, int)
{
	static void *(*fn)(const char *, int);
	static bool looked;

	if (!looked) {
		*(void **)&fn = dlsym(RTLD_DEFAULT, "dlopen");
		looked = true;
	}
	return fn;
}

/*
 * A key (or a function) found in a snapshot is used after the snapshot's
 * lock was released: the object that defines it may have been unloaded
 * since (a plugin dlclose()d by another thread), and writing to its key
 * would write into whatever is mapped there now. Hold the object that maps
 * addr now (dlopen(RTLD_NOLOAD) takes a reference) until the request is
 * done: 0, *h to unpin() (NULL for the program, which is never unloaded),
 * or -ENOENT when nothing maps it any more. An object unloaded between the
 * lookup and dlopen() and another mapped there: the same file (a reload at
 * the same address) holds the same variable there; another file, refused.
 */
static int pin(const void *addr, void **h)
{
	static struct sy_obj o, again;	/* control thread only (4 KiB each) */

	*h = NULL;
	sy_obj_lookup((uintptr_t)addr, &o);
	if (!o.found)
		return -ENOENT;
	if (!o.name[0] || !find_dlopen())	/* the program; a static one */
		return 0;
	*h = find_dlopen()(o.name, RTLD_LAZY | RTLD_NOLOAD);
	if (!*h)
		return -ENOENT;
	sy_obj_lookup((uintptr_t)addr, &again);
	if (!again.found || strcmp(again.name, o.name)) {
		dlclose(*h);
		*h = NULL;
		return -ENOENT;
	}
	return 0;
}

static void unpin(void *h)
{
	if (h)
		dlclose(h);
}

static void set_keys(const char *glob, int op, struct out *o)
{
	struct set_req q = { .glob = glob, .op = op };
	struct key_list *l = &q.l;
	int *res = NULL, *cnt = NULL, r = 0;
	struct static_key **live = NULL;
	void **pins = NULL;
	size_t m = 0;

	sy_for_each_key_aka(set_collect, &q);
	set_keep_exact(&q);
	if (!l->failed && l->n) {
		res = malloc(l->n * sizeof(*res));
		cnt = malloc(l->n * sizeof(*cnt));
		live = malloc(l->n * sizeof(*live));
		pins = calloc(l->n, sizeof(*pins));
	}
	if (res && cnt && live && pins) {
		for (size_t i = 0; i < l->n; i++) {
			res[i] = pin(l->keys[i], &pins[i]);
			if (!res[i])
				live[m++] = l->keys[i];
		}
		/* the live keys in one batch (every op is the same: l->ops
		 * serves for the first m); results land in cnt for now */
		r = m ? sy_keys_change(live, l->ops, cnt, m) : 0;
		for (size_t i = 0, j = 0; i < l->n; i++) {
			if (res[i])
				continue;	/* -ENOENT: unloaded */
			res[i] = cnt[j++];
		}
		/* one read of each count: enabled and count agree */
		for (size_t i = 0; i < l->n; i++)
			cnt[i] = res[i] == -ENOENT ? 0 :
				 static_key_count(l->keys[i]);
		for (size_t i = 0; i < l->n; i++)
			unpin(pins[i]);
	}
	if (l->failed || (l->n && (!res || !cnt || !live || !pins ||
				   r == -ENOMEM))) {
		o->failed = true;
	} else if (!l->n) {
		/* a name is refused rather than guessed (introspect.c): say
		 * that some keys could not be named, and where to read why */
		put(o, "{\"error\": ");
		if (q.unnamed)
			put_strf(o, "no key matches %s (%zu key%s no name: "
				 "see the process's log)", glob, q.unnamed,
				 q.unnamed == 1 ? " has" : "s have");
		else if (q.nhint)
			put_strf(o, "no key matches %s; %zu key%s named so "
				 "within a qualified name, which selects %s: "
				 "%s%s", glob, q.nhint,
				 q.nhint == 1 ? " is" : "s are",
				 q.nhint == 1 ? "it" : "one", q.hint,
				 q.nhint > 8 ? ", ..." : "");
		else
			put_strf(o, "no key matches %s", glob);
		put(o, "}\n");
	} else {
		put(o, "{\"changed\": [");
		for (size_t i = 0; i < l->n; i++) {
			put(o, "%s{\"name\": ", i ? ", " : "");
			put_str(o, l->names[i]);
			put(o, ", \"result\": %d, \"enabled\": %s, "
			    "\"count\": %d", res[i], cnt[i] > 0 ? "true" : "false",
			    cnt[i]);
			if (res[i] == -ENOENT)
				put(o, ", \"error\": \"its object was unloaded\"");
			put(o, "}");
		}
		put(o, "]");
		if (q.nexact > 1 && q.alike) {
			put(o, ", \"note\": ");
			put_strf(o, "%zu keys are named %s (nothing tells "
				 "them apart): all of them were changed",
				 q.nexact, glob);
		} else if (q.nexact > 1) {
			/* a.c:k in two objects built from one a.c */
			put(o, ", \"note\": ");
			put_strf(o, "%zu keys answer to %s (listed by other "
				 "names): all of them were changed",
				 q.nexact, glob);
		}
		put(o, "}\n");
	}
	sy_key_list_free(l);
	free(q.exact);
	free(res);
	free(cnt);
	free(live);
	free(pins);
}

static int list_call(const struct switchyard_call_info *c, void *arg)
{
	struct out *o = arg;

	put(o, "%s{\"name\": ", o->p && o->p[o->len - 1] == '[' ? "" : ", ");
	put_str(o, c->name);
	put(o, ", \"object\": ");
	put_str(o, c->object);
	put(o, ", \"target\": ");
	put_str(o, c->target);
	put(o, ", \"sites\": %zu, \"targets\": [", c->sites);
	for (size_t i = 0; i < c->ntargets; i++) {
		put(o, "%s", i ? ", " : "");
		put_str(o, c->targets[i]);
	}
	put(o, "]}");
	return 0;
}

/*
 * `call GLOB TARGET`: every static call whose name matches GLOB to its
 * registered target named TARGET (SWITCHYARD_STATIC_CALL_TARGET()). Each
 * is one static_call_update(): live-safe, as any update. A call without
 * such a target is reported and left alone; so is everything when none
 * matches.
 */
struct call_req {
	const char *glob, *target;
	struct out *o;
	size_t matched;
	size_t nexact;	/* calls named as the pattern (call_is()) */
};

/* Is pat a call's name, as listed or qualified by its object ("prog:hook"
 * when a plugin has a call hook too: sy_key_names() says why)? */
static bool call_is(const char *pat, const struct switchyard_call_info *c)
{
	const char *obj = strrchr(c->object, '/');

	return sy_pattern_is(pat, c->name) ||
	       sy_qualified_is(pat, obj ? obj + 1 : c->object, c->name);
}

static int call_count_exact(const struct switchyard_call_info *c, void *arg)
{
	struct call_req *q = arg;

	q->nexact += call_is(q->glob, c);
	return 0;
}

static int call_one(const struct switchyard_call_info *c, void *arg)
{
	struct call_req *q = arg;
	void (*func)(void) = NULL;
	bool found = false;
	int r = -ENOENT;

	if (q->nexact ? !call_is(q->glob, c) : fnmatch(q->glob, c->name, 0))
		return 0;
	for (size_t i = 0; i < c->ntargets && !found; i++)
		if (!strcmp(c->targets[i], q->target)) {
			func = c->target_funcs[i];
			found = true;
		}
	if (found) {
		void *pk = NULL, *pf = NULL;

		/* the call's key and the target's code, held meanwhile */
		r = pin(c->key, &pk);
		if (!r && func)
			r = pin((const void *)func, &pf);
		if (!r)
			r = __static_call_update((struct static_call_key *)c->key,
						 func);
		unpin(pf);
		unpin(pk);
	}
	put(q->o, "%s{\"name\": ", q->matched++ ? ", " : "");
	put_str(q->o, c->name);
	put(q->o, ", \"result\": %d, \"target\": ", r);
	put_str(q->o, !r ? q->target : c->target);
	if (!found) {
		put(q->o, ", \"error\": ");
		put_strf(q->o, "no registered target %s "
			 "(SWITCHYARD_STATIC_CALL_TARGET)", q->target);
	}
	put(q->o, "}");
	return 0;
}

static void call_targets(const char *glob, const char *target, struct out *o)
{
	struct call_req q = { glob, target, o, 0, 0 };
	size_t mark = o->len;

	/* first: is the pattern a call's name? (then only that name) */
	if (switchyard_for_each_static_call(call_count_exact, &q) == -ENOMEM)
		o->failed = true;
	put(o, "{\"retargeted\": [");
	if (switchyard_for_each_static_call(call_one, &q) == -ENOMEM)
		o->failed = true;
	put(o, "]");
	/* (calls are listed unqualified: prog:hook selects the calls of one
	 * object, listed alike) */
	if (q.nexact > 1) {
		put(o, ", \"note\": ");
		put_strf(o, "%zu static calls are named %s (nothing tells "
			 "them apart): all of them were retargeted",
			 q.nexact, glob);
	}
	put(o, "}\n");
	if (!q.matched && !o->failed) {
		o->len = mark;
		put(o, "{\"error\": ");
		put_strf(o, "no static call matches %s", glob);
		put(o, "}\n");
	}
}

/*
 * The next word of a request, into w (size bytes): words are separated by
 * one space; a backslash escapes the next character (a C++ name holds
 * spaces: "(anonymous namespace)::k", "f(int, char)::k"). A glob keeps its
 * backslashes, which fnmatch() reads the same way; other words lose them.
 * Returns where the next word starts ("" at the end), or NULL when the
 * word is empty or too long.
 */
static const char *word(const char *s, char *w, size_t size, bool glob)
{
	size_t n = 0;

	for (; *s && *s != ' '; s++) {
		if (*s == '\\' && s[1]) {
			if (glob) {
				if (n + 1 >= size)
					return NULL;
				w[n++] = '\\';
			}
			s++;
		}
		if (n + 1 >= size)
			return NULL;
		w[n++] = *s;
	}
	w[n] = 0;
	if (!n)
		return NULL;
	/* a space that ends the line separates nothing: "set k on " is no
	 * more a request than "list " is */
	if (*s && !s[1])
		return NULL;
	return *s ? s + 1 : s;
}

static void handle(const char *line, struct out *o)
{
	static const char *const ops[] = { "off", "on", "inc", "dec" };
	/* op as long as a line: any second word that is no action is
	 * "unknown action", not "unknown request" for a long one */
	char glob[CTL_LINE + 1], op[CTL_LINE + 1], target[CTL_LINE + 1];
	const char *p;

	if (!strcmp(line, "list")) {
		struct switchyard_stats st;

		/* the process's core syncs so far: what a change cost */
		switchyard_get_stats(&st);
		put(o, "{\"pid\": %d, \"syncs\": %llu, \"keys\": [",
		    (int)getpid(), (unsigned long long)st.sync_calls);
		o->cache = sy_site_cache_new();	/* NULL: no cache, slower */
		if (switchyard_for_each_key(list_one, o) == -ENOMEM)
			o->failed = true;
		sy_site_cache_free(o->cache);
		o->cache = NULL;
		put(o, "], \"calls\": [");
		if (switchyard_for_each_static_call(list_call, o) == -ENOMEM)
			o->failed = true;
		put(o, "]}\n");
		return;
	}
	if (!strncmp(line, "call ", 5) &&
	    (p = word(line + 5, glob, sizeof(glob), true)) &&
	    (p = word(p, target, sizeof(target), false)) && !*p) {
		call_targets(glob, target, o);
		return;
	}
	if (!strncmp(line, "set ", 4) &&
	    (p = word(line + 4, glob, sizeof(glob), true)) &&
	    (p = word(p, op, sizeof(op), false)) && !*p) {
		int which = -1;

		for (int i = 0; i < 4; i++)
			if (!strcmp(op, ops[i]))
				which = i;
		if (which < 0) {
			put(o, "{\"error\": \"unknown action (on, off, inc, "
			       "dec)\"}\n");
			return;
		}
		set_keys(glob, which == 0 ? SY_KEYS_OFF : which == 1 ?
			 SY_KEYS_ON : which == 2 ? SY_KEYS_INC : SY_KEYS_DEC,
			 o);
		return;
	}
	put(o, "{\"error\": \"unknown request (list, set GLOB "
	       "on|off|inc|dec, call GLOB TARGET)\"}\n");
}

char *sy_ctl_request(const char *line, size_t *len)
{
	struct out o = { NULL, 0, 0, false, NULL };

	handle(line, &o);
	if (o.failed) {
		free(o.p);
		o.p = strdup("{\"error\": \"out of memory\"}\n");
		o.len = o.p ? strlen(o.p) : 0;
	}
	*len = o.len;
	return o.p;
}
