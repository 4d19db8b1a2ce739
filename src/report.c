/* SPDX-License-Identifier: MIT */
/*
 * report.c - messages that name keys and sites as the user knows them.
 *
 * "static key 0x56078e73b190: decrement below zero" says nothing to a user;
 * "static key 'tracing': decrement below zero" and "site hot+0x4
 * (app.c:12)" do. Names come from the objects' symbol and line tables and
 * from the dynamic linker (naming.c), which may not be asked with the
 * patch lock held (the lock order, lock_order.c): dlopen() holds the linker's
 * lock while a constructor registers, i.e. waits for the patch lock. Most
 * messages arise with the patch lock held, so a report is made in two
 * steps:
 *
 *   when                    lock held   what happens
 *   sy_report()             no          named and logged at once
 *   sy_report()             yes         its text (key and site still as
 *                                       addresses) queued, under the lock
 *   sy_report_flush()       no          each queued report popped under
 *                                       the lock, then named and logged
 *
 * sy_leave() flushes, so a call's messages are out before it returns to
 * the application (a call made between switchyard_patch_lock() and
 * _unlock() reports at the unlock). The deferred worker, which holds the
 * lock outside any call, flushes when it drops it. Another thread's
 * leftover reports are written by whoever next finds the lock free.
 *
 * Naming allocates and reads files: a change that fails inside a signal
 * handler does both (the header says so). The success path never reports.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#define REPORT_CAP 16
#define REPORT_TEXT 448

struct report {
	enum switchyard_log_level level;
	const struct static_key *key;
	uintptr_t site;
	char text[REPORT_TEXT];
};

static struct report queue[REPORT_CAP];	/* patch lock held */
static size_t queued, dropped;		/* patch lock held */
/* the most severe level among the dropped ones (ERROR is 0): patch lock */
static enum switchyard_log_level dropped_level = SWITCHYARD_LOG_INFO;
static int pending;	/* atomic: a cheap "anything queued?" for sy_leave() */
/* This thread queued a report: its flush waits for the lock (its call's
 * messages are out before the call returns); any other thread's flush
 * only tries it, so that a lock-free call (an increment of an enabled
 * key) never waits behind a thread that holds the lock for long. */
static __thread bool queued_here __attribute__((tls_model("initial-exec")));

/* Replace the placeholders and log. No lock held. */
static void emit(const struct report *rp)
{
	char key[256], site[640], out[1400];
	size_t o = 0;

	key[0] = site[0] = 0;
	if (strchr(rp->text, SY_REPORT_KEY[0])) {
		if (rp->key)
			sy_name_key(rp->key, key, sizeof(key));
		else
			snprintf(key, sizeof(key), "?");
	}
	if (strchr(rp->text, SY_REPORT_SITE[0]))
		sy_name_site(rp->site, site, sizeof(site));
	for (const char *p = rp->text; *p && o < sizeof(out) - 1; p++) {
		const char *ins = *p == SY_REPORT_KEY[0]  ? key :
				  *p == SY_REPORT_SITE[0] ? site : NULL;

		if (!ins) {
			out[o++] = *p;
			continue;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", ins);
		if (o > sizeof(out) - 1)
			o = sizeof(out) - 1;
	}
	out[o] = 0;
	sy_log(rp->level, "%s", out);
}

void sy_report(enum switchyard_log_level level, const struct static_key *key,
	       uintptr_t site, const char *fmt, ...)
{
	struct report rp = { level, key, site, { 0 } };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rp.text, sizeof(rp.text), fmt, ap);
	va_end(ap);
	if (!sy_lock_held()) {
		emit(&rp);
		return;
	}
	if (queued == REPORT_CAP) {
		dropped++;
		if (level < dropped_level)
			dropped_level = level;
	} else
		queue[queued++] = rp;
	queued_here = true;
	__atomic_store_n(&pending, 1, __ATOMIC_RELAXED);
}

/*
 * One report at a time, so that the stack holds one (a signal handler's
 * alternate stack may be small); the order of the queue is kept.
 */
void sy_report_flush(void)
{
	struct report rp;
	enum switchyard_log_level drop_level = SWITCHYARD_LOG_INFO;
	size_t drop = 0;

	/* Relaxed: a report queued by another thread is that thread's to
	 * flush; we only need to see our own, made before. */
	if (!__atomic_load_n(&pending, __ATOMIC_RELAXED) || sy_lock_held())
		return;
	for (;;) {
		bool have = false;

		if (queued_here)
			sy_lock();
		else if (sy_lock_try())
			return;	/* the holder, or a later call, flushes */
		if (queued) {
			rp = queue[0];
			memmove(queue, queue + 1, --queued * sizeof(queue[0]));
			have = true;
		} else {
			drop = dropped;
			drop_level = dropped_level;
			dropped = 0;
			dropped_level = SWITCHYARD_LOG_INFO;
			queued_here = false;
			__atomic_store_n(&pending, 0, __ATOMIC_RELAXED);
		}
		sy_unlock();
		if (!have)
			break;
		emit(&rp);
	}
	/* at the level of the most severe one dropped: a burst of warnings
	 * is not an error */
	if (drop)
		sy_log(drop_level, "%zu more messages were dropped (the most "
		       "severe: %s)", drop, drop_level == SWITCHYARD_LOG_ERROR ?
		       "an error" : drop_level == SWITCHYARD_LOG_WARN ?
		       "a warning" : "information");
}
