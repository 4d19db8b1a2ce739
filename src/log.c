/* SPDX-License-Identifier: MIT */
/*
 * log.c - messages to the application's log callback (default: stderr).
 *
 * Below everything but the guard and the lock: every file logs, and log.c
 * calls no other file but guard.c (switchyard_set_log() is an API call).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;
static switchyard_log_fn log_fn;
static void *log_arg;

void switchyard_set_log(switchyard_log_fn fn, void *arg)
{
	if (sy_enter())
		return;	/* from a signal handler inside a switchyard call */
	pthread_mutex_lock(&log_mutex);
	log_fn = fn;
	log_arg = arg;
	pthread_mutex_unlock(&log_mutex);
	sy_guard_exit();	/* nothing queued: no report to write */
}

static void sy_vlog(enum switchyard_log_level level, const char *fmt,
		    va_list ap)
{
	char buf[512], *msg = buf, *big = NULL;
	switchyard_log_fn fn;
	void *arg;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	/*
	 * A message that names a long path (an object's, a source file's: a
	 * checkout 200 characters deep) may not fit: format it again whole
	 * rather than cut its end, which says what to do. Without memory,
	 * the cut one.
	 */
	if (n >= (int)sizeof(buf) && (big = malloc((size_t)n + 1))) {
		vsnprintf(big, (size_t)n + 1, fmt, aq);
		msg = big;
	}
	va_end(aq);
	pthread_mutex_lock(&log_mutex);
	fn = log_fn;
	arg = log_arg;
	pthread_mutex_unlock(&log_mutex);
	if (fn) {
		fn(level, msg, arg);
		free(big);
		return;
	}
	/* One system call per line so that lines from threads do not mix. */
	struct iovec iov[3] = {
		{ (void *)"switchyard: ", 12 },
		{ msg, strlen(msg) },
		{ (void *)"\n", 1 },
	};
	if (writev(STDERR_FILENO, iov, 3) < 0) {
		/* nowhere left to report to */
	}
	free(big);
}

/*
 * fork(): lock_order.c's handlers take the log lock last (the lock
 * order), so that a child that reports something (a pending deferred
 * decrement run by the child handler may) does not find it held by a
 * thread that does not exist there.
 */
void sy_log_atfork(enum sy_atfork_phase phase)
{
	if (phase == SY_ATFORK_PREPARE)
		pthread_mutex_lock(&log_mutex);
	else
		pthread_mutex_unlock(&log_mutex);
}

void sy_log(enum switchyard_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sy_vlog(level, fmt, ap);
	va_end(ap);
}

void sy_hex(char *buf, size_t size, const uint8_t *p, size_t n)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < n && off + 4 <= size; i++)
		off += (size_t)snprintf(buf + off, size - off, i ? " %02x" : "%02x", p[i]);
}

const char *switchyard_version(void)
{
#define SY_STR2(x) #x
#define SY_STR(x) SY_STR2(x)
	return SY_STR(SWITCHYARD_VERSION_MAJOR) "." SY_STR(SWITCHYARD_VERSION_MINOR) "." SY_STR(SWITCHYARD_VERSION_PATCH);
}
