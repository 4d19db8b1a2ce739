/* SPDX-License-Identifier: MIT */
/*
 * client.c - the tool's side of the control socket (client.h): PID
 * arguments, the socket directory and the connection (whom it trusts), one
 * request and its reply, the replies as tables.
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
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
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
#include "client.h"
#include "util.h"

void ctl_error(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	fprintf(stderr, "switchyard: %s\n", msg ? msg : "out of memory");
	if (json_output) {
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

/* The checked directory: as the library makes it (src/ctl_path.c) and
 * trusted as the file's header says. */
int ctl_open_dir(char *dir, size_t size, int *fd, const char *who,
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
 * Connect to PID.sock in the directory open at dfd and check who serves
 * it: process pid, running as this user or root (for root: as the
 * directory's owner, which ctl_open_dir() checked is the process's user,
 * or root).
 */
int ctl_dial(int dfd, const char *dir, int pid, int *fd, char *msg,
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
	 * by the directory's owner or root (ctl_dial()); without /proc to say
	 * U, a directory of any owner */
	if (!geteuid() && proc_euid(pid, &owner))
		owner = (uid_t)-1;
	snprintf(who, sizeof(who), "process %d: ", pid);
	if (ctl_open_dir(dir, sizeof(dir), &dfd, who, NULL, owner))
		return 1;
	r = ctl_dial(dfd, dir, pid, fd, msg, sizeof(msg));
	close(dfd);
	if (r) {
		ctl_error("%s%s", who, msg);
		return 1;
	}
	return 0;
}

/*
 * A request that changes something (changes: set, call) is in the process
 * once sent: when the reply does not come, or not whole, the change may
 * have been made, or be made later (a stopped or busy process reads it
 * when it runs again), and the message says so.
 */
int ctl_request(int pid, const char *line, char **reply, bool changes)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	int fd;

	*reply = NULL;
	if (!buf)
		return 1;
	if (ctl_connect(pid, &fd)) {
		free(buf);
		return 1;
	}
	if (send(fd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line)) {
		ctl_error("process %d: %s", pid, strerror(errno));
		close(fd);
		free(buf);
		return 1;
	}
	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&pf, 1, 5000) <= 0) {
			if (changes)
				ctl_error("process %d: no reply in 5 s; the "
					  "process may still make the change "
					  "later (see switchyard list %d)", pid,
					  pid);
			else
				ctl_error("process %d: no reply in 5 s", pid);
			close(fd);
			free(buf);
			return 1;
		}
		if (len + 1 >= cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - 1 - len, 0);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len)) {
			buf[len] = 0;
			close(fd);
			*reply = buf;
			return 0;
		}
	}
	if (changes)
		ctl_error("process %d: the reply was cut short; the change may "
			  "have been made (see switchyard list %d)", pid, pid);
	else
		ctl_error("process %d: the reply was cut short", pid);
	close(fd);
	free(buf);
	return 1;
}

/* The replies are this library's JSON: find "key": and read its value. */
const char *reply_field(const char *obj, const char *key, char *val,
			size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(obj, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < size; p++) {
			if (*p == '\\' && p[1] == 'u' &&
			    isxdigit((unsigned char)p[2]) &&
			    isxdigit((unsigned char)p[3]) &&
			    isxdigit((unsigned char)p[4]) &&
			    isxdigit((unsigned char)p[5])) {
				char hex[5] = { p[2], p[3], p[4], p[5], 0 };
				unsigned u = (unsigned)strtoul(hex, NULL, 16);

				/* the library escapes a control character or a
				 * byte that is not UTF-8 as \u00XX: that byte
				 * (sy_json_escape()); anything else as UTF-8 */
				if (u < 0x100) {
					val[n++] = (char)u;
				} else if (u < 0x800 && n + 2 < size) {
					val[n++] = (char)(0xc0 | u >> 6);
					val[n++] = (char)(0x80 | (u & 0x3f));
				} else if (u >= 0x800 && n + 3 < size) {
					val[n++] = (char)(0xe0 | u >> 12);
					val[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
					val[n++] = (char)(0x80 | (u & 0x3f));
				}
				p += 5;
				continue;
			}
			if (*p == '\\' && p[1])
				p++;
			val[n++] = *p;
		}
	} else if (*p == '[') {	/* an array of strings, as it is */
		for (bool str = false; *p && n + 1 < size; p++) {
			val[n++] = *p;
			if (str && *p == '\\' && p[1])
				val[n++] = *++p;
			else if (*p == '"')
				str = !str;
			else if (!str && *p == ']')
				break;
		}
	} else {
		while (*p && *p != ',' && *p != '}' && n + 1 < size)
			val[n++] = *p++;
	}
	val[n] = 0;
	return val;
}

/* Strings skipped: a description may hold a '}'. */
const char *reply_obj_end(const char *p)
{
	int depth = 0;

	for (bool str = false; *p; p++) {
		if (str && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			str = !str;
		else if (!str && *p == '{')
			depth++;
		else if (!str && *p == '}' && --depth <= 0)
			return p;
	}
	return NULL;
}

/* A description or an error, when an object has one, after the columns. */
int print_reply(const char *reply, const char *const *cols, int ncols,
		void (*more)(const char *obj))
{
	char v[512];
	const char *p = reply;

	if (reply_field(reply, "error", v, sizeof(v)) &&
	    !strstr(reply, "\"name\"")) {
		fprintf(stderr, "switchyard: %s\n", v);
		return 1;
	}
	while ((p = strstr(p, "{\"name\": "))) {
		const char *end = reply_obj_end(p);
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char *obj = strndup(p, n);

		if (!obj)
			return 1;
		for (int c = 0; c < ncols; c++) {
			if (!reply_field(obj, cols[c], v, sizeof(v)))
				snprintf(v, sizeof(v), "-");
			if (c)
				printf("  %s=", cols[c]);
			sy_text_put(stdout, v);
		}
		if (reply_field(obj, "description", v, sizeof(v)) ||
		    reply_field(obj, "error", v, sizeof(v))) {
			printf("  -- ");
			sy_text_put(stdout, v);
		}
		printf("\n");
		if (more)
			more(obj);
		free(obj);
		p += n;
	}
	return 0;
}
