/* SPDX-License-Identifier: MIT */
/*
 * sy_notify.h - watch (or fail) the library's system calls from outside
 * it: a seccomp filter turns each listed system call of the threads made
 * after it into a user notification, and a supervisor thread, made before
 * the filter (so not under it), sees each one while its caller waits, then
 * lets it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE) or fails it. Used by
 * test_sync_count (membarrier counted per command) and test_sc_protocol
 * (every code write and sync, in order).
 *
 *   static struct sy_notify n = SY_NOTIFY_INIT(on_call, arg);
 *   sy_notify_start(&n);                   // the supervisor thread
 *   r = sy_notify_filter(&n, nrs, count);  // then the filter: 0 or -errno
 *   ...
 *   sy_notify_stop(&n);                    // or let exit() end it
 *
 * on_call(data, pid, arg) runs on the supervisor thread for each call:
 * 0 lets it run, -errno fails it with that error. n.no_continue is set
 * when the kernel lacks the CONTINUE flag (Linux < 5.5): the call was then
 * failed with ENOSYS and the test should SKIP. x86-64 only (the prologue).
 */
#ifndef SY_NOTIFY_H
#define SY_NOTIFY_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sy_seccomp.h"

struct sy_notify {
	int (*on_call)(const struct seccomp_data *d, pid_t pid, void *arg);
	void *arg;
	_Atomic int listener;
	atomic_bool stop, no_continue;
	pthread_t thread;
};

#define SY_NOTIFY_INIT(fn, a) { (fn), (a), -1, false, false, 0 }

static void *sy_notify_thread(void *p)
{
	struct sy_notify *n = (struct sy_notify *)p;
	struct seccomp_notif_sizes sizes;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t rqs, rps;
	int fd;

	/* the kernel's structures may be larger than this header's */
	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes))
		memset(&sizes, 0, sizeof(sizes));
	rqs = sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif
						   : sizeof(*req);
	rps = sizes.seccomp_notif_resp > sizeof(*resp)
		      ? sizes.seccomp_notif_resp : sizeof(*resp);
	req = (struct seccomp_notif *)calloc(1, rqs);
	resp = (struct seccomp_notif_resp *)calloc(1, rps);
	if (!req || !resp)
		abort();	/* nothing to test without them */
	while ((fd = atomic_load(&n->listener)) < 0 && !atomic_load(&n->stop))
		usleep(1000);
	while (!atomic_load(&n->stop)) {
		struct pollfd pf = { fd, POLLIN, 0 };
		int err;

		/* a timeout, so that the stop flag is seen */
		if (poll(&pf, 1, 100) <= 0 || !(pf.revents & POLLIN))
			continue;
		memset(req, 0, rqs);
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, req))
			continue;	/* the caller went away (ENOENT) */
		err = n->on_call(&req->data, (pid_t)req->pid, n->arg);
		memset(resp, 0, rps);
		resp->id = req->id;
		if (err)
			resp->error = err;
		else
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp) && errno == EINVAL &&
		    !err) {
			/* a kernel without CONTINUE: fail the call instead */
			atomic_store(&n->no_continue, true);
			resp->flags = 0;
			resp->error = -ENOSYS;
			ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, resp);
		}
	}
	free(req);
	free(resp);
	return NULL;
}

static inline void sy_notify_start(struct sy_notify *n)
{
	if (pthread_create(&n->thread, NULL, sy_notify_thread, n))
		abort();	/* nothing to test without it */
}

/* The calling thread (and the threads it makes later) under a filter that
 * sends each of nrs[0..count) to the supervisor; count <= 8. */
static inline int sy_notify_filter(struct sy_notify *n, const int *nrs,
				   unsigned count)
{
	struct sock_filter f[4 + 8 + 2] = { SY_SECCOMP_PROLOGUE };
	unsigned k = 4;
	int fd;

	if (count > 8)
		return -EINVAL;
	/* call i jumps over the calls after it and the ALLOW */
	for (unsigned i = 0; i < count; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)nrs[i],
						      (unsigned char)(count - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_USER_NOTIF);
	fd = sy_seccomp_install(f, k, SECCOMP_FILTER_FLAG_NEW_LISTENER);
	if (fd >= 0)
		atomic_store(&n->listener, fd);
	return fd < 0 ? fd : 0;
}

/* Stop the supervisor. The filter stays (it cannot be removed): a listed
 * call made afterwards fails with ENOSYS (the listener is closed) instead
 * of waiting for an answer forever. A test whose exit makes such calls
 * (a sanitizer's leak check at exit calls mprotect) keeps the supervisor
 * to the end instead. */
static inline void sy_notify_stop(struct sy_notify *n)
{
	atomic_store(&n->stop, true);
	pthread_join(n->thread, NULL);
	if (atomic_load(&n->listener) >= 0)
		close(atomic_exchange(&n->listener, -1));
}

#endif /* SY_NOTIFY_H */
