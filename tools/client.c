/* SPDX-License-Identifier: MIT */
/*
 * client.c - the tool's side of the control socket: PID arguments, the
 * connection (whom it trusts), `switchyard ps`.
 *
 * Trust. The sockets are in this user's directory ($XDG_RUNTIME_DIR/
 * switchyard, else /tmp/switchyard-<uid>, src/ctl_path.c). Under /tmp
 * another user may have made that directory first, and put a socket of
 * their own in it that answers whatever it likes. So the tool, as the
 * library does before serving, opens the directory without following a
 * symlink and checks the opened directory: owned by this user or root
 * (root reaching user U's process uses U's directory, /tmp/switchyard-U
 * without XDG_RUNTIME_DIR, and accepts it owned by U or root: U from
 * /proc/PID/status), writable by no one else. It then connects through that
 * very directory (/proc/self/fd/N/PID.sock, which also fits sun_path
 * whatever the directory's length), and checks the server with
 * SO_PEERCRED: the process that listens must be the one asked for (its
 * pid) and run as this user or root (for root, also the directory's
 * owner). Anything else is refused, said so, exit status 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <switchyard.h>

#include "../src/ctl_path.h"
#include "../src/sy_names.h"
#include "tool.h"

/*
 * SWITCHYARD_CONTROL and SWITCHYARD_KEYS are meant for the programs the
 * tool inspects (a shell that exports them runs the tool too): the tool
 * neither serves a socket nor sets keys of its own from them.
 */
SWITCHYARD_IGNORE_CONTROL_ENV;

bool ctl_json;

void ctl_error(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	fprintf(stderr, "switchyard: %s\n", msg ? msg : "out of memory");
	if (ctl_json) {
		printf("{\"error\": ");
		json_str(stdout, msg ? msg : "out of memory");
		printf("}\n");
	}
	free(msg);
}

bool looks_like_pid(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int parse_pid(const char *s, int *pid)
{
	long max = INT_MAX, v;
	char *end;
	FILE *f;

	/* the kernel's bound when it says it (pid_max), else int's */
	f = fopen("/proc/sys/kernel/pid_max", "re");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1 || max < 2 || max > INT_MAX)
			max = INT_MAX;
		else
			max--;	/* pids are below pid_max */
		fclose(f);
	}
	errno = 0;
	v = looks_like_pid(s) ? strtol(s, &end, 10) : 0;
	if (!looks_like_pid(s) || errno || *end || v < 1 || v > max) {
		fprintf(stderr, "switchyard: '%s' is not a process ID (a "
			"decimal number from 1 to %ld)\n", s, max);
		return 2;
	}
	*pid = (int)v;
	return 0;
}

/*
 * The effective uid of process pid (/proc/PID/status): the uid its
 * library named its socket directory after and made it with. 0 and *uid,
 * or -1 (no /proc, the process gone).
 */
static int proc_euid(int pid, uid_t *uid)
{
	char path[64], line[256];
	unsigned ruid, euid;
	int r = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &ruid, &euid) == 2) {
			*uid = (uid_t)euid;
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

/*
 * The checked directory (fd) and its path; 0, or 1 with a message (for
 * ps, *absent set instead when it does not exist). owner: the uid whose
 * sockets to reach (the process's for root, else this user's), or
 * (uid_t)-1 for root's ps (any owner: each server is then checked
 * against it).
 */
static int open_dir(char *dir, size_t size, int *fd, const char *who,
		    bool *absent, uid_t owner)
{
	char why[4600];
	int r = sy_ctl_dir_of(dir, size, owner == (uid_t)-1 ? geteuid() :
			      owner);

	if (r) {
		ctl_error("%sthe socket directory's path (XDG_RUNTIME_DIR) "
			  "is longer than %zu bytes", who, size - 1);
		return 1;
	}
	r = sy_ctl_dir_open(dir, false, owner, why, sizeof(why));
	if (r == -ENOENT && absent) {
		*absent = true;
		return 0;
	}
	if (r == -ENOENT) {
		ctl_error("%sno control socket (%s does not exist); start it "
			  "with SWITCHYARD_CONTROL=1 or "
			  "switchyard_control_start()", who, dir);
		return 1;
	}
	if (r < 0) {
		ctl_error("%snot trusting the socket directory: %s", who,
			  why);
		return 1;
	}
	*fd = r;
	return 0;
}

/*
 * Connect to NAME (pid's socket) in the directory open at dfd and check
 * who serves it: process pid, running as this user or root (for root: as
 * the directory's owner, which open_dir() checked is the process's user,
 * or root). 0 and *fd, -ECONNREFUSED (a socket nobody listens on), or
 * another negative errno with *msg set to what to say (-EPERM: served by
 * someone else).
 */
static int dial(int dfd, const char *dir, int pid, int *fd, char *msg,
		size_t msgsize)
{
	struct sockaddr_un sa;
	struct ucred cr;
	struct stat st;
	socklen_t salen, crlen = sizeof(cr);
	char name[32];
	int s, r;

	snprintf(name, sizeof(name), "%d.sock", pid);
	r = sy_ctl_addr(dfd, dir, name, &sa, &salen);
	if (r) {
		snprintf(msg, msgsize, "%s/%s does not fit a socket address "
			 "and /proc is not mounted to reach it through its "
			 "directory", dir, name);
		return r;
	}
	/* non-blocking: a listener whose backlog is full (a stopped
	 * process) gives EAGAIN instead of blocking the tool */
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, salen)) {
		r = -errno;
		snprintf(msg, msgsize, "no control socket (%s/%s: %s); start "
			 "it with SWITCHYARD_CONTROL=1 or "
			 "switchyard_control_start()", dir, name,
			 r == -EAGAIN ? "busy, not accepting" : strerror(-r));
		if (s >= 0)
			close(s);
		return r;
	}
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &crlen)) {
		r = -errno;
		snprintf(msg, msgsize, "%s/%s: SO_PEERCRED: %s", dir, name,
			 strerror(-r));
		close(s);
		return r;
	}
	/* root may reach another user's process in that user's directory:
	 * then the server must be the directory's owner */
	if (fstat(dfd, &st))
		st.st_uid = geteuid();
	if (cr.pid != pid || (cr.uid != geteuid() && cr.uid != 0 &&
			      (geteuid() != 0 || cr.uid != st.st_uid))) {
		snprintf(msg, msgsize, "not trusting %s/%s: it is served by "
			 "process %d of uid %u, not by process %d of uid %u "
			 "or root", dir, name, (int)cr.pid, (unsigned)cr.uid,
			 pid, (unsigned)(geteuid() ? geteuid() : st.st_uid));
		close(s);
		return -EPERM;
	}
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	*fd = s;
	return 0;
}

int ctl_connect(int pid, int *fd)
{
	char dir[4096], who[48], msg[9000];
	uid_t owner = geteuid();
	int dfd, r;

	/* not "start it with SWITCHYARD_CONTROL=1": there is nothing to
	 * start (EPERM: it exists, another user's) */
	if (kill(pid, 0) && errno == ESRCH) {
		ctl_error("no process %d", pid);
		return 1;
	}
	/* root reaching user U's process: U's directory (/tmp/switchyard-U
	 * unless XDG_RUNTIME_DIR says where), owned by U or root, and served
	 * by the directory's owner or root (dial()); without /proc to say
	 * U, a directory of any owner */
	if (!geteuid() && proc_euid(pid, &owner))
		owner = (uid_t)-1;
	snprintf(who, sizeof(who), "process %d: ", pid);
	if (open_dir(dir, sizeof(dir), &dfd, who, NULL, owner))
		return 1;
	r = dial(dfd, dir, pid, fd, msg, sizeof(msg));
	close(dfd);
	if (r) {
		ctl_error("%s%s", who, msg);
		return 1;
	}
	return 0;
}

/*
 * The name of process pid's program, in name (size bytes): its comm, which
 * the kernel cuts to 15 bytes ("memcheck-amd64-"), made whole from the
 * base name of argv[0] (/proc/PID/cmdline) when that begins with it. Not
 * argv[0] else: a program may rewrite it ("sshd: user@pts/0", whose base
 * name is "0"), a script's is its interpreter, and comm is then what the
 * kernel or the program (PR_SET_NAME) said. "?" when pid is gone.
 */
static void program_name(int pid, char *name, size_t size)
{
	char proc[64], comm[64] = "", arg0[4096];
	size_t n = 0, lc;
	FILE *f;

	snprintf(name, size, "?");
	snprintf(proc, sizeof(proc), "/proc/%d/comm", pid);
	f = fopen(proc, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (!comm[0])
		return;
	snprintf(name, size, "%s", comm);
	lc = strlen(comm);
	if (lc < 15)	/* TASK_COMM_LEN - 1: not cut */
		return;
	snprintf(proc, sizeof(proc), "/proc/%d/cmdline", pid);
	f = fopen(proc, "re");
	if (f) {
		n = fread(arg0, 1, sizeof(arg0) - 1, f);
		fclose(f);
	}
	arg0[n] = 0;	/* argv[0]: up to its NUL (cut at 4095 bytes) */
	const char *base = strrchr(arg0, '/');

	base = base ? base + 1 : arg0;
	if (!strncmp(base, comm, lc) && strlen(base) > lc)
		snprintf(name, size, "%s", base);
}

/*
 * `switchyard ps`: the processes serving a socket in this user's
 * directory, by PID, each checked as `list` would check it (a socket nobody
 * listens on, or served by another process, is not listed). A socket
 * file left by a process that is gone (one that died without running its
 * exit handlers) is removed: it is this user's directory (checked). Only
 * a socket: anything else named N.sock is left as it is.
 */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

int cmd_ps(bool json)
{
	char dir[4096], msg[9000];
	bool absent = false;
	struct dirent *e;
	int dfd = -1, n = 0, bad = 0;
	DIR *d = NULL;

	/* root: its own directory, or the one XDG_RUNTIME_DIR names, whoever
	 * owns it (each server checked against the owner) */
	if (open_dir(dir, sizeof(dir), &dfd, "", &absent,
		     geteuid() ? geteuid() : (uid_t)-1))
		return 1;
	if (!absent) {
		int lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		d = lfd >= 0 ? fdopendir(lfd) : NULL;
		if (!d) {
			ctl_error("%s: %s", dir, strerror(errno));
			if (lfd >= 0)
				close(lfd);
			close(dfd);
			return 1;
		}
	}
	/* the pids first, to list them in order */
	int *pids = NULL;
	size_t np = 0, cap = 0;

	while (d && (e = readdir(d))) {
		char tail[8];
		int pid;

		if (sscanf(e->d_name, "%d.sock%1s", &pid, tail) != 1 ||
		    pid <= 0)
			continue;
		if (np == cap) {
			int *v = realloc(pids, (cap = cap ? 2 * cap : 64) *
					 sizeof(*v));

			if (!v) {
				ctl_error("out of memory");
				free(pids);
				closedir(d);
				close(dfd);
				return 1;
			}
			pids = v;
		}
		pids[np++] = pid;
	}
	if (np)
		qsort(pids, np, sizeof(*pids), cmp_int);
	if (json)
		printf("[");
	for (size_t i = 0; i < np; i++) {
		char comm[4096], name[32];
		struct stat st;
		int pid = pids[i], s, r;

		snprintf(name, sizeof(name), "%d.sock", pid);
		r = dial(dfd, dir, pid, &s, msg, sizeof(msg));
		/* only a socket: a regular file or a link of that name is not
		 * one a library left (nor is it ours to remove) */
		if (r == -ECONNREFUSED && kill(pid, 0) && errno == ESRCH &&
		    !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISSOCK(st.st_mode)) {
			unlinkat(dfd, name, 0);
			continue;
		}
		if (r == -EPERM) {
			fprintf(stderr, "switchyard: %s\n", msg);
			bad = 1;
		}
		if (r)
			continue;
		close(s);
		program_name(pid, comm, sizeof(comm));
		if (json) {
			printf("%s{\"pid\": %d, \"command\": ", n ? ", " : "",
			       pid);
			json_str(stdout, comm);
			printf("}");
		} else {
			/* a program's file (or argv[0]) may be named so as
			 * to drive the terminal: control bytes escaped */
			printf("%d\t", pid);
			sy_text_put(stdout, comm);
			printf("\n");
		}
		n++;
	}
	free(pids);
	if (d)
		closedir(d);
	if (dfd >= 0)
		close(dfd);
	if (json)
		printf("]\n");
	return bad;
}
