/* SPDX-License-Identifier: MIT */
/*
 * control.c - the control socket (<switchyard/control.h>): its thread, its
 * socket, and their life across fork(). The requests it serves are
 * control_cmd.c's.
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
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control_impl.h"
#include "ctl_path.h"

#define CTL_CLIENTS 16
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
	size_t len;
	char *reply = sy_ctl_request(line, &len);

	if (!reply) {
		drop(c);
		return;
	}
	c->out = reply;
	c->outlen = len;
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
 * lock, which a forking thread may hold; lock_order.c). The child handler runs
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
	if (!env || sy_env_ignored())
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
}
