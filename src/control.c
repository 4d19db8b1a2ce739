/* SPDX-License-Identifier: MIT */
/*
 * control.c - the control socket (<switchyard/control.h>).
 *
 * One thread, started on request, with every signal blocked (it never
 * runs an application handler, and a server that blocks all signals in
 * its threads keeps them for its own: the mask is set before
 * pthread_create() so the thread is born with it). It polls the listening
 * socket, the clients (at most CTL_CLIENTS) and a pipe that stop() writes
 * to. Every socket is non-blocking: a client that does not send, or does
 * not read, costs the others nothing. A reply larger than the socket's
 * buffer (`list` of a program with thousands of keys and sites is
 * megabytes) is kept with its client and sent as the client reads it
 * (POLLOUT); meanwhile that client's next request waits. A client that
 * reads nothing for CTL_IDLE_MS is dropped with its reply.
 *
 * A `set` changes every key its pattern matches at once: the same
 * transitions as static_key_enable() and the rest, every site in one poke
 * batch, one core sync (sy_keys_change()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_path.h"
#include "internal.h"
#include "sy_names.h"

#define CTL_CLIENTS 16
#define CTL_LINE 1024
#define CTL_IDLE_MS 10000

struct client {
	int fd;
	size_t len;
	uint64_t last;		/* ms, CLOCK_MONOTONIC: last progress */
	char *out;		/* the reply not yet sent (malloc'ed) */
	size_t outlen, outoff;	/* its length, and how much was sent */
	dev_t dev;		/* fd as accepted (client_ours()) */
	ino_t ino;
	char buf[CTL_LINE + 1];
};

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t ctl_thread;
static bool ctl_running;	/* ctl_lock: ctl_thread exists, to be joined */
static bool ctl_wanted;		/* the process asked for control (atomic) */
static pid_t ctl_waiting;	/* a forked child's thread: the parent whose
				 * exit it waits for (set before the thread
				 * starts, 0 once it serves; atomic) */
static pid_t ctl_waiting_also;	/* and the parent's parent whose exit the
				 * parent was still waiting for when it
				 * forked (the double fork), or 0 */
static pid_t ctl_fork_parent;	/* the pid that last forked (atomic) */
static bool ctl_ended;		/* the thread ended by itself (atomic):
				 * start() starts it again */
static bool ctl_stopping;	/* ctl_halt() is stopping the thread
				 * (atomic): seen within a second even when
				 * the wake pipe is gone */
/* set by whoever binds (start(), or the thread of a child), read by
 * stop() after the join */
static int ctl_listen = -1, ctl_dirfd = -1, ctl_wake[2] = { -1, -1 };
static int ctl_pidfd = -1;	/* a waiting child's thread's: its parent */
static char ctl_name[32];	/* "<pid>.sock" in ctl_dirfd, once bound */

/*
 * A program may opt out of SWITCHYARD_CONTROL and SWITCHYARD_KEYS (the
 * switchyard tool does: they are meant for the programs it inspects) by
 * defining this (SWITCHYARD_IGNORE_CONTROL_ENV, <switchyard/control.h>).
 * A weak reference: resolved when the library is relocated, before any
 * constructor, and NULL in every other program.
 */
extern const int switchyard_ignore_control_env __attribute__((weak));

static bool env_ignored(void)
{
	return &switchyard_ignore_control_env && switchyard_ignore_control_env;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int switchyard_control_path(int pid, char *buf, size_t size)
{
	char dir[4096];
	int n, r = sy_ctl_dir(dir, sizeof(dir));

	if (r)
		return r;
	if (!buf)
		return -EINVAL;
	n = snprintf(buf, size, "%s/%d.sock", dir, pid ? pid : (int)getpid());
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

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
 * process_vm_readv() on this very process fails with EFAULT where a load
 * would fault. 0 bytes when unmapped.
 */
static size_t read_code(const void *addr, uint8_t *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)addr, len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

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

/*
 * Keys collected from a snapshot (by `set` and by SWITCHYARD_KEYS), to be
 * changed together with sy_keys_change(): one batch, one core sync. The
 * names are copies (the snapshot's strings die with its callback).
 */
struct key_list {
	struct static_key **keys;
	char **names;
	int *ops;
	size_t n, capk, capn, capo;
	bool failed;
};

/* Append k with op, named names (key_names(), taken; NULL: k->name);
 * false (and l->failed) when out of memory. */
static bool key_list_add(struct key_list *l, const struct switchyard_key_info *k,
			 int op, char *names)
{
	char *name = names;

	if (!sy_grow(&l->keys, &l->capk, l->n, sizeof(*l->keys)) ||
	    !sy_grow(&l->names, &l->capn, l->n, sizeof(*l->names)) ||
	    !sy_grow(&l->ops, &l->capo, l->n, sizeof(*l->ops)) ||
	    (!name && !(name = strdup(k->name)))) {
		free(names);
		l->failed = true;
		return false;
	}
	l->names[l->n] = name;
	l->ops[l->n] = op;
	l->keys[l->n++] = (struct static_key *)k->key;
	return true;
}

static void key_list_free(struct key_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->keys);
	free(l->ops);
}

/*
 * How a request's pattern selects names (set, call, SWITCHYARD_KEYS): a
 * name as listed is itself, whatever it holds: "feat[3]" (an array's
 * element) or "f(int*)::k" read as a glob would match other names, or
 * none. So when some name equals the pattern, the names equal to it are
 * selected, and only they; else the pattern is a glob (fnmatch(), where
 * "feat\[3\]" is the name escaped). Names alike are keys that nothing
 * tells apart (elf.c gives file-local keys of two source files "a.c:k",
 * "b.c:k"; introspect.c qualifies by object): all of them are selected,
 * and the reply says how many.
 */
static bool pattern_is(const char *pat, const char *name)
{
	return !strcmp(pat, name);
}

/*
 * A listed name holds qualifiers only while another key needs them: the
 * key k of a program is "k" until a plugin with a key k loads, then
 * "prog:k" (and "libp.so:k"). A request copied from a listing made at
 * another moment must still select it, so a key also answers to each of
 * its qualified names, needed or not: OBJECT:name, and for a file-local
 * key of a file with symbols a.c:name and OBJECT:a.c:name (name: in its
 * object, struct sy_key_aka). A pattern that is one of them selects the
 * keys that have it and only those, as a listed name does. A bare name
 * that only qualified names end with stays refused by set (which k?);
 * SWITCHYARD_KEYS matches the name without the object qualifier too,
 * exactly and as a glob: it is read while objects load, when a listed
 * name depends on which had loaded, and "k=on" sets each object's k as
 * it registers.
 *
 * key_names(): these names, NUL-separated, in the order of enum kn (an
 * empty one where the key has none; the listed name first, so the block
 * prints as the listed name).
 */
enum kn { KN_LISTED, KN_LOCAL, KN_OBJ, KN_SRC, KN_OBJ_SRC, KN_N };

/* name, qualified by q1 and q2 when not NULL ("q1:q2:name"), and its
 * NUL at p; an empty name when name is NULL. The end of what it wrote. */
static char *kn_put(char *p, const char *q1, const char *q2, const char *name)
{
	if (!name) {
		*p = '\0';
		return p + 1;
	}
	if (q1)
		p = stpcpy(stpcpy(p, q1), ":");
	if (q2)
		p = stpcpy(stpcpy(p, q2), ":");
	return stpcpy(p, name) + 1;
}

static char *key_names(const struct switchyard_key_info *k,
		       const struct sy_key_aka *a)
{
	/* key@0x...: no name, nothing to qualify */
	bool named = a && a->local && strncmp(k->name, "key@", 4);
	const char *loc = named ? a->local : k->name;
	const char *obj = named ? a->object : NULL;
	const char *src = named && a->plain ? a->src : NULL;
	const char *plain = src ? a->plain : NULL;
	size_t lo = obj ? strlen(obj) : 0, ls = src ? strlen(src) : 0;
	size_t lp = plain ? strlen(plain) : 0, ll = strlen(loc);
	char *v = malloc(strlen(k->name) + 1 + ll + 1 + lo + ll + 2 +
			 ls + lp + 2 + lo + ls + lp + 3), *p;

	if (!v)
		return NULL;
	p = kn_put(v, NULL, NULL, k->name);		/* KN_LISTED */
	p = kn_put(p, NULL, NULL, loc);			/* KN_LOCAL */
	p = kn_put(p, obj, NULL, obj ? loc : NULL);	/* KN_OBJ */
	p = kn_put(p, src, NULL, plain);		/* KN_SRC */
	kn_put(p, obj, src, obj ? plain : NULL);	/* KN_OBJ_SRC */
	return v;
}

/* Is pat one of a key's names (key_names(); local: the name in its
 * object counts, SWITCHYARD_KEYS)? */
static bool names_is(const char *v, const char *pat, bool local)
{
	for (int i = 0; i < KN_N; i++, v += strlen(v) + 1)
		if ((i != KN_LOCAL || local) && *v && pattern_is(pat, v))
			return true;
	return false;
}

/* Does the glob pat match the key's listed name (or, local, its name in
 * its object)? Never its qualified names: "t*" is no glob for "t.c:k". */
static bool names_glob(const char *v, const char *pat, bool local)
{
	return !fnmatch(pat, v, 0) ||
	       (local && !fnmatch(pat, v + strlen(v) + 1, 0));
}

/* "prog:k" is "prog" + ':' + "k" */
static bool qualified_is(const char *pat, const char *q, const char *name)
{
	size_t l = strlen(q);

	return !strncmp(pat, q, l) && pat[l] == ':' &&
	       !strcmp(pat + l + 1, name);
}

/* "ns::k", "a.c:k", "libx.so:k" for k: a name a user may have meant */
static bool qualified_form(const char *pat, const char *name)
{
	size_t lp = strlen(pat), ln = strlen(name);

	return ln > lp + 1 && name[ln - lp - 1] == ':' &&
	       !strcmp(name + ln - lp, pat);
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
	char *names = key_names(k, aka);
	bool exact;

	if (!names) {
		q->l.failed = true;
		return 1;
	}
	exact = names_is(names, q->glob, false);
	free(names);
	if (!strncmp(k->name, "key@", 4))
		q->unnamed++;
	if (qualified_form(q->glob, k->name) && q->nhint++ < 8) {
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
	return key_list_add(&q->l, k, q->op, NULL) ? 0 : 1;
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
	key_list_free(l);
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
 * when a plugin has a call hook too: key_names() says why)? */
static bool call_is(const char *pat, const struct switchyard_call_info *c)
{
	const char *obj = strrchr(c->object, '/');

	return pattern_is(pat, c->name) ||
	       qualified_is(pat, obj ? obj + 1 : c->object, c->name);
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

/* ---- SWITCHYARD_KEYS ---------------------------------------------------- */
/*
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
			   (pattern_is()); set once seen, env_lock */
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

	if (!env || !*env || env_ignored())
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

/* Every key: does an item name it exactly (key_names(), the name in its
 * object included)? A key not decided before is kept in b with its names,
 * its op decided by env_decide() once every name is seen. */
static int env_collect(const struct switchyard_key_info *k,
		       const struct sy_key_aka *aka, void *arg)
{
	struct key_list *b = arg;
	char *names = key_names(k, aka);
	bool first;

	if (!names) {
		b->failed = true;
		return 1;
	}
	pthread_mutex_lock(&env_lock);
	for (size_t i = 0; i < env_n; i++)
		if (names_is(names, env_items[i].glob, true))
			env_items[i].exact = true;
	first = env_first_sight(k->key);
	pthread_mutex_unlock(&env_lock);
	if (!first) {
		free(names);
		return 0;
	}
	return key_list_add(b, k, -1, names) ? 0 : 1;
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

			if (it->exact ? !names_is(v, it->glob, true) :
					!names_glob(v, it->glob, true))
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
	key_list_free(&b);
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

/* ---- the thread ----------------------------------------------------------- */

/*
 * c's descriptor is still the connection accepted: a program that closes
 * every descriptor (a daemon) may have closed it and reused its number
 * for a file or socket of its own, which we must neither read, write nor
 * close.
 */
static bool client_ours(const struct client *c)
{
	struct stat st;

	return c->fd >= 0 && !fstat(c->fd, &st) && st.st_dev == c->dev &&
	       st.st_ino == c->ino;
}

/* Forget c, closing its descriptor if it still is its connection. */
static void drop(struct client *c)
{
	if (client_ours(c))
		close(c->fd);
	c->fd = -1;
	free(c->out);
	c->out = NULL;
}

/*
 * Send what the socket takes of c's pending reply, without waiting: the
 * rest goes when poll() says the client has read some (POLLOUT). Dropped
 * when the client is gone.
 */
static void flush_out(struct client *c)
{
	if (!client_ours(c)) {
		drop(c);
		return;
	}
	while (c->out && c->outoff < c->outlen) {
		ssize_t w = send(c->fd, c->out + c->outoff,
				 c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (w <= 0) {
			drop(c);	/* a client that left */
			return;
		}
		c->outoff += (size_t)w;
		c->last = now_ms();
	}
	free(c->out);
	c->out = NULL;
}

/* One request line: its reply, sent now as far as the socket takes it,
 * the rest kept for flush_out() (never wait). */
static void serve_line(struct client *c, const char *line)
{
	struct out o = { NULL, 0, 0, false, NULL };

	handle(line, &o);
	if (o.failed) {
		free(o.p);
		o.p = strdup("{\"error\": \"out of memory\"}\n");
		o.len = o.p ? strlen(o.p) : 0;
	}
	if (!o.p) {
		drop(c);
		return;
	}
	c->out = o.p;
	c->outlen = o.len;
	c->outoff = 0;
	flush_out(c);
}

/* The complete lines in c's buffer, one at a time: the next only once
 * the reply to the one before is sent. */
static void serve_lines(struct client *c)
{
	char *nl;

	while (c->fd >= 0 && !c->out && (nl = memchr(c->buf, '\n', c->len))) {
		size_t used = (size_t)(nl - c->buf) + 1;

		*nl = 0;
		/* CRLF: the CR goes, and the NUL check below stops before
		 * it (it looked at the NUL written there: every CRLF line
		 * was "malformed") */
		if (nl > c->buf && nl[-1] == '\r')
			*--nl = 0;
		if (memchr(c->buf, 0, (size_t)(nl - c->buf)))
			serve_line(c, "");	/* a NUL inside: malformed */
		else
			serve_line(c, c->buf);
		if (c->fd < 0)
			return;
		memmove(c->buf, c->buf + used, c->len - used);
		c->len -= used;
	}
	if (c->fd >= 0 && !c->out && c->len > CTL_LINE) {
		static const char msg[] = "{\"error\": \"line too long\"}\n";

		(void)!send(c->fd, msg, sizeof(msg) - 1,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		drop(c);
	}
}

/* c is readable (polled only while no reply is pending: the buffer then
 * has room, so 0 from recv() is the client's end) */
static void serve_input(struct client *c)
{
	ssize_t n;

	if (!client_ours(c)) {
		drop(c);
		return;
	}
	n = recv(c->fd, c->buf + c->len, CTL_LINE + 1 - c->len, MSG_DONTWAIT);
	if (n <= 0) {
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			drop(c);
		return;
	}
	c->len += (size_t)n;
	c->last = now_ms();
	serve_lines(c);
}

/*
 * fd, moved to 3 or above (close-on-exec) when it got 0, 1 or 2: a
 * program that closed its standard descriptors (a daemon's closefrom(0))
 * and then opens /dev/null, or writes to 1, expects them to be its own,
 * not our socket's. fd itself if it cannot be moved.
 */
static int ctl_high(int fd)
{
	int n;

	if (fd < 0 || fd > 2)
		return fd;
	n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (n < 0)
		return fd;
	close(fd);
	return n;
}

/* One waiting connection: 0, or -1 when none is left. */
static int serve_accept(struct client *cl)
{
	struct ucred cr;
	struct stat st;
	socklen_t len = sizeof(cr);
	int fd = ctl_high(accept4(ctl_listen, NULL, NULL,
				  SOCK_NONBLOCK | SOCK_CLOEXEC));
	int slot = -1;

	if (fd < 0)
		return errno == EINTR || errno == ECONNABORTED ? 0 : -1;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
	    (cr.uid != geteuid() && cr.uid != 0)) {
		static const char msg[] = "{\"error\": \"permission denied\"}\n";

		(void)!send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return 0;
	}
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (cl[i].fd < 0) {
			slot = i;
			break;
		}
	if (slot < 0) {
		static const char msg[] = "{\"error\": \"too many clients\"}\n";

		(void)!send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(fd);
		return 0;
	}
	cl[slot].fd = fd;
	cl[slot].len = 0;
	cl[slot].out = NULL;
	cl[slot].dev = st.st_dev;
	cl[slot].ino = st.st_ino;
	cl[slot].last = now_ms();
	return 0;
}

/* ---- start, stop, fork -------------------------------------------------- */

/*
 * Each descriptor of ours with the identity it had when made: a program
 * may close descriptors it does not know of (a daemon closing every one
 * after fork()) and reuse the numbers, and the library must then neither
 * write to nor close the program's file. fstat() is async-signal-safe
 * (the child handler uses these).
 */
struct ctl_id {
	dev_t dev;
	ino_t ino;
};

static struct ctl_id ctl_ids[5];	/* ctl_listen, ctl_dirfd, ctl_wake[2],
					 * ctl_pidfd, in that order */

static int *ctl_fd_slot(int i)
{
	int *const slots[] = { &ctl_listen, &ctl_dirfd, &ctl_wake[0],
			       &ctl_wake[1], &ctl_pidfd };

	return slots[i];
}

/* Remember what descriptor slot i is now (after making it). */
static void ctl_note(int i)
{
	struct stat st;

	if (*ctl_fd_slot(i) >= 0 && !fstat(*ctl_fd_slot(i), &st))
		ctl_ids[i] = (struct ctl_id){ st.st_dev, st.st_ino };
}

/* Descriptor slot i is still the one we made. */
static bool ctl_ours(int i)
{
	struct stat st;
	int fd = *ctl_fd_slot(i);

	return fd >= 0 && !fstat(fd, &st) && st.st_dev == ctl_ids[i].dev &&
	       st.st_ino == ctl_ids[i].ino;
}

static void close_slot(int i)
{
	if (ctl_ours(i))
		close(*ctl_fd_slot(i));
	*ctl_fd_slot(i) = -1;
}

enum { CTL_LISTEN, CTL_DIRFD, CTL_WAKE_R, CTL_WAKE_W, CTL_PIDFD };

static void close_all(void)
{
	for (int i = 0; i < 5; i++)
		close_slot(i);
}

/* A pipe for stop() to wake the thread with. 0 or -errno. */
static int ctl_make_wake(void)
{
	if (pipe2(ctl_wake, O_CLOEXEC))
		return -errno;
	ctl_wake[0] = ctl_high(ctl_wake[0]);
	ctl_wake[1] = ctl_high(ctl_wake[1]);
	ctl_note(CTL_WAKE_R);
	ctl_note(CTL_WAKE_W);
	return 0;
}

static void ctl_remove_stale(pid_t pid, const char *dir);

/*
 * Make this process's socket: the directory checked and held open (it is
 * where the socket is removed at stop, whatever its path's length), the
 * socket bound through it (ctl_path.c: an XDG_RUNTIME_DIR past sun_path,
 * up to PATH_MAX),
 * 0600, listening; first the sockets stale1 and stale2 (pids, 0: none)
 * if nobody listens on them. 0, or a negative errno, logged.
 */

static int ctl_bind(pid_t stale1, pid_t stale2)
{
	struct sockaddr_un sa;
	socklen_t salen;
	char dir[4096], why[4400], tmp[40];
	int r = sy_ctl_dir(dir, sizeof(dir));

	why[0] = 0;
	if (r) {
		snprintf(why, sizeof(why), "the socket directory's path "
			 "(XDG_RUNTIME_DIR) is longer than %zu bytes",
			 sizeof(dir) - 1);
		goto fail;
	}
	r = sy_ctl_dir_open(dir, true, geteuid(), why, sizeof(why));
	if (r < 0)
		goto fail;
	ctl_dirfd = ctl_high(r);
	ctl_note(CTL_DIRFD);
	/* before this process's socket shows: whoever sees it can count on
	 * the parents' being gone (test_control_fork) */
	if (stale1)
		ctl_remove_stale(stale1, dir);
	if (stale2)
		ctl_remove_stale(stale2, dir);
	/*
	 * Bound and made listening under a name no client looks for, then
	 * renamed into place (replacing a stale socket of an earlier
	 * process of this pid): whoever sees <pid>.sock can connect to it
	 * (a script that waits for the file, test_control_fork).
	 */
	snprintf(ctl_name, sizeof(ctl_name), "%d.sock", (int)getpid());
	snprintf(tmp, sizeof(tmp), ".%d.sock.new", (int)getpid());
	r = sy_ctl_addr(ctl_dirfd, dir, tmp, &sa, &salen);
	if (r) {
		snprintf(why, sizeof(why), "%s/%s does not fit a socket "
			 "address (108 bytes) and /proc is not mounted to "
			 "reach it through its directory", dir, ctl_name);
		goto fail;
	}
	ctl_listen = ctl_high(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
				     SOCK_CLOEXEC, 0));
	if (ctl_listen < 0) {
		r = -errno;
		goto fail;
	}
	ctl_note(CTL_LISTEN);
	unlinkat(ctl_dirfd, tmp, 0);	/* left by an earlier process of
					 * this pid that died right here */
	if (bind(ctl_listen, (struct sockaddr *)&sa, salen)) {
		r = -errno;
		snprintf(why, sizeof(why), "%s/%s: %s", dir, tmp,
			 strerror(-r));
		goto fail;
	}
	if (fchmodat(ctl_dirfd, tmp, 0600, 0) || listen(ctl_listen, 64) ||
	    renameat(ctl_dirfd, tmp, ctl_dirfd, ctl_name)) {
		r = -errno;
		unlinkat(ctl_dirfd, tmp, 0);
		goto fail;
	}
	return 0;
fail:
	close_slot(CTL_LISTEN);
	close_slot(CTL_DIRFD);
	ctl_name[0] = 0;
	sy_log(SWITCHYARD_LOG_ERROR, "control: not serving: %s",
	       why[0] ? why : strerror(-r));
	return r;
}

/*
 * A forked child's control thread, first: wait until the parent that
 * forked it has exited (true), or until stop() (false). The parent's exit
 * is seen through a pidfd (Linux 5.3), else by getppid() once a second.
 * Then (ctl_bind()) the parent's socket, if the parent could not remove it
 * (daemon(3)'s parent leaves with _exit()) and nothing listens on it, is
 * removed: the child that goes on is what the user now reaches.
 */
static bool ctl_wait_parent(pid_t parent)
{
	struct pollfd pf[2] = { { ctl_wake[0], POLLIN, 0 }, { -1, POLLIN, 0 } };
	int r;

#ifdef SYS_pidfd_open
	if (getppid() == parent) {
		ctl_pidfd = ctl_high((int)syscall(SYS_pidfd_open, parent, 0));
		if (ctl_pidfd >= 0) {
			fcntl(ctl_pidfd, F_SETFD, FD_CLOEXEC);
			ctl_note(CTL_PIDFD);
		}
		pf[1].fd = ctl_pidfd;
	}
#endif
	/* checked after pidfd_open(): the pidfd is the parent's own. The
	 * timeout, also with a pidfd: a program that closes our descriptors
	 * (a daemon closing every one after fork(), as it starts) is noticed
	 * within a second, as the serving loop does (closing a descriptor
	 * does not wake a poll() on it). Then the child keeps waiting
	 * without them: a descriptor whose number the program reused is
	 * not polled (it is not ours to act on), the parent's exit is seen
	 * by getppid(), and stop() by ctl_stopping. */
	while (getppid() == parent) {
		r = poll(pf, 2, 1000);
		if (__atomic_load_n(&ctl_stopping, __ATOMIC_ACQUIRE) ||
		    (r < 0 && errno != EINTR)) {
			close_slot(CTL_PIDFD);
			return false;	/* stop() */
		}
		if (pf[0].fd >= 0 && !ctl_ours(CTL_WAKE_R))
			pf[0].fd = -1;
		else if (r > 0 && pf[0].revents) {
			close_slot(CTL_PIDFD);
			return false;	/* stop() */
		}
		if (pf[1].fd >= 0 && !ctl_ours(CTL_PIDFD))
			pf[1].fd = -1;
		else if (r > 0 && pf[1].revents)
			break;		/* the parent exited */
	}
	close_slot(CTL_PIDFD);
	return true;
}

/* Wait (at most 5 s) until process pid has exited: its descriptors are
 * closed by then (the kernel closes them before it wakes a pidfd). */
static void ctl_wait_gone(pid_t pid)
{
#ifdef SYS_pidfd_open
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0) {
		struct pollfd pf = { fd, POLLIN, 0 };

		(void)poll(&pf, 1, 5000);
		close(fd);
		return;
	}
#endif
	for (int i = 0; i < 50 && !kill(pid, 0); i++)
		usleep(100000);	/* a zombie counts as here: bounded */
}

/* Whether pid's socket in the directory has a listener; removed if not */
static bool ctl_stale_gone(pid_t pid, const char *dir)
{
	struct sockaddr_un sa;
	socklen_t salen;
	char name[32];
	bool gone = false;
	int fd;

	snprintf(name, sizeof(name), "%d.sock", (int)pid);
	if (sy_ctl_addr(ctl_dirfd, dir, name, &sa, &salen))
		return true;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	/* refused: a socket file nobody listens on (a listener that is
	 * merely busy gives EAGAIN, and is left alone); ENOENT: no file */
	if (connect(fd, (struct sockaddr *)&sa, salen)) {
		gone = errno == ECONNREFUSED || errno == ENOENT;
		if (errno == ECONNREFUSED)
			unlinkat(ctl_dirfd, name, 0);
	}
	close(fd);
	return gone;
}

/*
 * Remove the socket of pid, a process that has left or is leaving
 * (daemon(3)'s first process and its child, which exit with _exit()), if
 * nobody listens on it. The parent's parent may still be exiting when the
 * parent is gone (both leave at once; under load the first is the slower
 * one, seen in test_control_fork): while its socket still listens and the
 * process is there, wait for its exit, then look again.
 */
static void ctl_remove_stale(pid_t pid, const char *dir)
{
	if (!ctl_stale_gone(pid, dir) && !kill(pid, 0)) {
		ctl_wait_gone(pid);
		(void)ctl_stale_gone(pid, dir);
	}
}

/*
 * The program closed our listening socket (a daemon closing every
 * descriptor after start, closefrom(3)); its number may be a file or
 * socket of the program's now. ctl_main() forgets it and the clients
 * (closing only what still is ours), waits a second for the program to
 * be done with its descriptors (a loop closing them all, then its own
 * put on the freed numbers: a socket bound meanwhile could be closed or
 * replaced under us), and then calls this: a new socket under the same
 * name. 0, or a negative errno (logged).
 */
static int ctl_renew(void)
{
	close_slot(CTL_LISTEN);
	close_slot(CTL_DIRFD);
	return ctl_bind(0, 0);
}

static void *ctl_main(void *arg)
{
	struct client cl[CTL_CLIENTS];
	struct pollfd pf[CTL_CLIENTS + 2];
	pid_t parent = (pid_t)(intptr_t)arg;
	bool wake = true;	/* ctl_wake[0] is still our pipe */
	bool lost = false;	/* the program closed ctl_listen: renew it */
	uint64_t renew_at = 0;
	int tries = 0;

	if (parent) {
		pid_t also = __atomic_load_n(&ctl_waiting_also,
					     __ATOMIC_RELAXED);

		if (!ctl_wait_parent(parent) || ctl_bind(parent, also))
			return NULL;
		__atomic_store_n(&ctl_waiting, 0, __ATOMIC_RELEASE);
	}
	for (int i = 0; i < CTL_CLIENTS; i++) {
		cl[i].fd = -1;
		cl[i].out = NULL;
	}
	for (;;) {
		int n = 0, map[CTL_CLIENTS];
		uint64_t t;

		pf[n++] = (struct pollfd){ wake ? ctl_wake[0] : -1, POLLIN, 0 };
		pf[n++] = (struct pollfd){ lost ? -1 : ctl_listen, POLLIN, 0 };
		for (int i = 0; i < CTL_CLIENTS; i++)
			if (cl[i].fd >= 0) {
				map[n - 2] = i;
				pf[n++] = (struct pollfd){ cl[i].fd,
					cl[i].out ? POLLOUT : POLLIN, 0 };
			}
		if (poll(pf, (nfds_t)n, 1000) < 0 && errno != EINTR)
			break;
		/*
		 * Before acting on any descriptor: is it still ours? A
		 * program may close every descriptor (a daemon, closefrom())
		 * and reuse the numbers: accept() on its listening socket
		 * would take its connections. Without our pipe, stop() is
		 * seen through ctl_stopping (within the second of poll()).
		 */
		if (__atomic_load_n(&ctl_stopping, __ATOMIC_ACQUIRE))
			break;
		if (wake && !ctl_ours(CTL_WAKE_R))
			wake = false;
		else if (wake && pf[0].revents)
			break;	/* stop() */
		if (!lost && !ctl_ours(CTL_LISTEN)) {
			sy_log(SWITCHYARD_LOG_WARN, "control: the program "
			       "closed the control socket's descriptor (%d; a "
			       "daemon closing every descriptor?): serving a "
			       "new socket", ctl_listen);
			for (int i = 0; i < CTL_CLIENTS; i++)
				if (cl[i].fd >= 0)
					drop(&cl[i]);
			lost = true;
			renew_at = now_ms() + 1000;
		}
		if (lost) {
			if (now_ms() < renew_at)
				continue;
			if (!ctl_renew()) {
				lost = false;
				tries = 0;
			} else if (++tries == 5) {
				sy_log(SWITCHYARD_LOG_ERROR, "control: no new "
				       "socket after %d tries: control ends "
				       "(switchyard_control_start() after "
				       "closing descriptors serves again)",
				       tries);
				break;
			} else {
				renew_at = now_ms() + 1000;
			}
			continue;
		}
		/* drain the backlog: a burst of connections must not find
		 * it full (connect() then fails with EAGAIN) */
		if (pf[1].revents & POLLIN)
			for (int k = 0; k < 64 && !serve_accept(cl); k++)
				;
		for (int k = 2; k < n; k++) {
			struct client *c = &cl[map[k - 2]];

			if (!pf[k].revents || c->fd != pf[k].fd)
				continue;
			if (c->out) {
				flush_out(c);	/* then the lines it sent
						 * meanwhile */
				serve_lines(c);
			} else {
				serve_input(c);
			}
		}
		t = now_ms();
		for (int i = 0; i < CTL_CLIENTS; i++)
			if (cl[i].fd >= 0 && t - cl[i].last > CTL_IDLE_MS)
				drop(&cl[i]);
	}
	for (int i = 0; i < CTL_CLIENTS; i++)
		if (cl[i].fd >= 0)
			drop(&cl[i]);
	__atomic_store_n(&ctl_ended, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The thread, born with every signal blocked (arg: ctl_main's). With an
 * explicit stack size (8 MiB of address space, the usual default; the
 * application's log callback runs on it): glibc's pthread_create() then
 * does not take the lock of the default attributes, which not every glibc
 * resets in a forked child and another thread of the parent may have held
 * at the fork (ctl_atfork_child() calls this).
 */
static int ctl_spawn(pid_t parent)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int r = -pthread_attr_init(&attr);

	if (r)
		return r;
	r = -pthread_attr_setstacksize(&attr, (size_t)8 << 20);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!r)
		r = -pthread_create(&ctl_thread, &attr, ctl_main,
				    (void *)(intptr_t)parent);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r;
}

/* Stop the thread (ctl_lock held, ctl_running): joined, its socket
 * removed, every descriptor closed. */
static void ctl_halt(void)
{
	/* not into a file of the program's that took our pipe's number:
	 * the thread checks its pipe once a second and then ends by itself,
	 * so the join below is bounded */
	__atomic_store_n(&ctl_stopping, true, __ATOMIC_RELEASE);
	if (ctl_ours(CTL_WAKE_W))
		(void)!write(ctl_wake[1], "x", 1);
	pthread_join(ctl_thread, NULL);
	__atomic_store_n(&ctl_stopping, false, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl_ended, false, __ATOMIC_RELAXED);
	if (ctl_listen >= 0 && ctl_name[0]) {
		char dir[4096], why[16];
		int dfd;

		if (ctl_ours(CTL_DIRFD)) {
			unlinkat(ctl_dirfd, ctl_name, 0);
		} else if (!sy_ctl_dir(dir, sizeof(dir)) &&
			   (dfd = sy_ctl_dir_open(dir, true, geteuid(),
						   why, sizeof(why))) >= 0) {
			/* the program closed our descriptor of it */
			unlinkat(dfd, ctl_name, 0);
			close(dfd);
		}
	}
	close_all();
	ctl_name[0] = 0;
	ctl_running = false;
	__atomic_store_n(&ctl_waiting, 0, __ATOMIC_RELAXED);
}

int switchyard_control_start(void)
{
	int r;

	pthread_mutex_lock(&ctl_lock);
	if (ctl_running && !__atomic_load_n(&ctl_waiting, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&ctl_ended, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&ctl_lock);
		return 0;
	}
	/* a forked child waiting for its parent's exit: serve now; a thread
	 * that ended by itself (its socket lost, logged): serve again */
	if (ctl_running)
		ctl_halt();
	r = ctl_make_wake();
	if (r) {
		sy_log(SWITCHYARD_LOG_ERROR, "control: not serving: %s",
		       strerror(-r));
		goto out;
	}
	r = ctl_bind(0, 0);
	if (!r) {
		r = ctl_spawn(0);
		if (r) {
			sy_log(SWITCHYARD_LOG_ERROR, "control: not serving: "
			       "%s", strerror(-r));
			unlinkat(ctl_dirfd, ctl_name, 0);
		}
	}
	if (r) {
		close_all();
		ctl_name[0] = 0;
	} else {
		ctl_running = true;
		__atomic_store_n(&ctl_wanted, true, __ATOMIC_RELAXED);
	}
out:
	pthread_mutex_unlock(&ctl_lock);
	return r;
}

int switchyard_control_stop(void)
{
	pthread_mutex_lock(&ctl_lock);
	if (!ctl_running) {
		pthread_mutex_unlock(&ctl_lock);
		return -ESRCH;
	}
	ctl_halt();
	__atomic_store_n(&ctl_wanted, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ctl_lock);
	return 0;
}

/*
 * fork(). The child has none of the parent's threads, and the parent's
 * socket is the parent's (the parent removes it at exit). A process that
 * asked for control keeps it in the child that goes on, which is the one
 * whose parent exits: daemon(3), the double fork, a supervisor's
 * fork-and-exit. So the child starts a thread that waits for its parent's
 * exit and only then binds <child pid>.sock; a child that execs, or a
 * worker that exits while its parent lives, leaves no socket behind (the
 * waiting thread dies with the exec or is joined at exit).
 *
 * The prepare handler only notes the parent's pid (it takes no lock: a
 * stop() may hold ctl_lock while joining a thread that waits for the patch
 * lock, which a forking thread may hold; lock.c). The child handler runs
 * with one thread: it closes the inherited descriptors (the parent's
 * copies stay open) and re-initialises ctl_lock, all async-signal-safe,
 * then creates the thread. pthread_create() is not async-signal-safe, but
 * glibc's fork() makes it usable in a child handler: it resets the locks
 * pthread_create() takes (malloc's, the stack cache, the dynamic linker's
 * load and TLS locks) before it runs the child handlers; ctl_spawn()
 * avoids the one it may not (the default attributes'). The thread takes no
 * lock until its parent has exited (then only its own and what a request
 * takes, as in any process).
 */
static void ctl_atfork_prepare(void)
{
	__atomic_store_n(&ctl_fork_parent, getpid(), __ATOMIC_RELAXED);
}

static void ctl_atfork_child(void)
{
	/* the parent was itself a child still waiting for its own parent's
	 * exit (the first child of a double fork): that one's socket is
	 * this child's to clean up too */
	pid_t also = __atomic_load_n(&ctl_waiting, __ATOMIC_RELAXED);

	pthread_mutex_init(&ctl_lock, NULL);
	__atomic_store_n(&ctl_stopping, false, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl_ended, false, __ATOMIC_RELAXED);
	close_all();
	ctl_name[0] = 0;
	ctl_running = false;
	__atomic_store_n(&ctl_waiting, 0, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&ctl_wanted, __ATOMIC_RELAXED) || ctl_make_wake())
		return;
	__atomic_store_n(&ctl_waiting, ctl_fork_parent, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl_waiting_also, also, __ATOMIC_RELAXED);
	if (ctl_spawn(ctl_fork_parent)) {
		close_all();
		__atomic_store_n(&ctl_waiting, 0, __ATOMIC_RELAXED);
		return;
	}
	ctl_running = true;
}

__attribute__((constructor)) static void ctl_init(void)
{
	const char *env = secure_getenv("SWITCHYARD_CONTROL");

	pthread_atfork(ctl_atfork_prepare, NULL, ctl_atfork_child);
	if (!env || env_ignored())
		return;
	if (!strcmp(env, "1"))
		(void)switchyard_control_start();
	else if (*env && strcmp(env, "0"))
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_CONTROL=\"%.64s\" is "
		       "not 1 or 0: the control socket is not started", env);
}

/* At exit, or when the library is unloaded: the thread must not outlive
 * the code it runs, and the socket goes with the process. */
__attribute__((destructor)) static void ctl_fini(void)
{
	(void)switchyard_control_stop();
	pthread_once(&env_once, env_parse);
	env_report();	/* a program without keys of its own */
}
