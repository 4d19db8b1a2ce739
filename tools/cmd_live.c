/* SPDX-License-Identifier: MIT */
/*
 * cmd_live.c - the commands that change or survey live processes through
 * their control sockets (<switchyard/control.h>, client.c):
 *
 *   switchyard set PID GLOB on|off|inc|dec   set the keys GLOB matches
 *   switchyard call PID GLOB TARGET           retarget the static calls
 *   switchyard ps                             the processes serving one
 *
 * (`list PID` is in cmd_list.c, beside `list FILE`, whose table it
 * prints.) Exit status: 0 done, 1 the process refused a change, in whole
 * or in part, or could not be reached (said on stderr), 2 usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/sy_names.h"
#include "client.h"
#include "cmds.h"
#include "util.h"

/*
 * A word of a request (control.c's word()): a space in a name ("(anonymous
 * namespace)::k", as the listings spell it) goes escaped, "\ "; in a
 * pattern a backslash is fnmatch()'s and goes as it is, in a target it is
 * escaped too. False when it does not fit in one line of 1000 bytes.
 */
static bool req_word(const char *in, char *out, size_t size, bool glob)
{
	size_t n = 0;

	if (!*in || strlen(in) > 1000 || strpbrk(in, "\t\r\n"))
		return false;
	for (; *in; in++) {
		if (n + 3 > size)
			return false;
		if (*in == ' ' || (!glob && *in == '\\'))
			out[n++] = '\\';
		out[n++] = *in;
	}
	out[n] = 0;
	return true;
}

/*
 * The objects of a `set` or `call` reply whose result is an error: each
 * said on stderr with why, and 1 (the change did not happen, in whole or
 * in part: a script must be able to tell). 0 when every one was done.
 */
static int refused(int pid, const char *reply, const char *action)
{
	const char *p = reply;
	char name[512], v[512];
	int bad = 0;

	while ((p = strstr(p, "{\"name\": "))) {
		const char *end = reply_obj_end(p);
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char *obj = strndup(p, n);
		int res = 0, count = 0;

		p += n;
		if (!obj)
			return 1;
		if (reply_field(obj, "result", v, sizeof(v)))
			res = atoi(v);
		if (reply_field(obj, "count", v, sizeof(v)))
			count = atoi(v);
		if (res < 0 && reply_field(obj, "name", name, sizeof(name))) {
			const char *why = strerror(-res);

			if (reply_field(obj, "error", v, sizeof(v)))
				why = v;
			else if (res == -EBUSY)
				why = "its count is above 1 (it was inc'ed "
				      "more than once): off would undo the "
				      "others' inc; use dec";
			else if (res == -EINVAL && !strcmp(action, "dec"))
				why = "its count is already 0";
			else if (res == -EOVERFLOW)
				why = "its count is at its maximum";
			if (!strcmp(action, "call"))
				fprintf(stderr, "switchyard: process %d: %s: not "
					"retargeted (%s): %s\n", pid, name,
					strerror(-res), why);
			else
				fprintf(stderr, "switchyard: process %d: %s: %s "
					"refused (%s, count %d): %s\n", pid,
					name, action, strerror(-res), count,
					why);
			bad = 1;
		}
		free(obj);
	}
	return bad;
}

/* A reply's note (several keys or calls named as the pattern: all were
 * changed), on stderr: the change happened, the user should know how. */
static void note(int pid, const char *reply)
{
	char v[600];

	if (reply_field(reply, "note", v, sizeof(v))) {
		fprintf(stderr, "switchyard: process %d: note: ", pid);
		sy_text_put(stderr, v);
		fputc('\n', stderr);
	}
}

/* switchyard call PID GLOB TARGET */
int cmd_call(int argc, char **argv)
{
	static const char *const cols[] = { "name", "result", "target" };
	const char *glob = argv[2], *target = argv[3];
	char line[2300], *reply, v[256], eg[1100], et[1100];
	int r, pid;

	(void)argc;
	if (parse_pid(argv[1], &pid))
		return 2;
	if (!req_word(glob, eg, sizeof(eg), true) ||
	    !req_word(target, et, sizeof(et), false)) {
		fprintf(stderr, "switchyard: %s\n", !*glob ?
			"the call pattern is empty: it would match no call" :
			!*target ? "the target is empty: give the name of a "
			"registered target" : "a call pattern and a target are "
			"at most 1000 bytes each, on one line");
		return 2;
	}
	snprintf(line, sizeof(line), "call %s %s\n", eg, et);
	r = ctl_request(pid, line, &reply, true);
	if (r)
		return r;
	if (json_output)
		fputs(reply, stdout);
	else
		r = print_reply(reply, cols, 3, NULL);
	/* any call left alone (each said), or an error for the whole
	 * request: 1 */
	if (reply_field(reply, "error", v, sizeof(v)) &&
	    !strstr(reply, "\"name\"")) {
		if (json_output)
			fprintf(stderr, "switchyard: %s\n", v);
		r = 1;
	}
	note(pid, reply);
	if (refused(pid, reply, "call"))
		r = 1;
	free(reply);
	return r;
}

/* switchyard set PID GLOB on|off|inc|dec */
int cmd_set(int argc, char **argv)
{
	static const char *const cols[] = { "name", "enabled", "count",
					    "result" };
	const char *glob = argv[2], *action = argv[3];
	char line[1200], *reply, v[256], eg[1100];
	int r, pid;

	(void)argc;
	if (strcmp(action, "on") && strcmp(action, "off") &&
	    strcmp(action, "inc") && strcmp(action, "dec"))
		return usage_error("set: '%.100s' is not on, off, inc or dec",
				   action);
	if (parse_pid(argv[1], &pid))
		return 2;
	if (!req_word(glob, eg, sizeof(eg), true)) {
		fprintf(stderr, "switchyard: %s\n", !*glob ?
			"the key pattern is empty: it would match no key" :
			"a key pattern is at most 1000 bytes, on one line");
		return 2;
	}
	snprintf(line, sizeof(line), "set %s %s\n", eg, action);
	r = ctl_request(pid, line, &reply, true);
	if (r)
		return r;
	if (json_output) {
		fputs(reply, stdout);
		r = reply_field(reply, "error", v, sizeof(v)) &&
		    !strstr(reply, "\"name\"") ? 1 : 0;
		if (r)
			fprintf(stderr, "switchyard: %s\n", v);
	} else {
		r = print_reply(reply, cols, 4, NULL);
	}
	note(pid, reply);
	/* any key left as it was: 1, each said */
	if (refused(pid, reply, action))
		r = 1;
	free(reply);
	return r;
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

int cmd_ps(int argc, char **argv)
{
	char dir[4096], msg[9000];
	bool absent = false;
	struct dirent *e;
	int dfd = -1, n = 0, bad = 0;
	DIR *d = NULL;

	(void)argc;
	(void)argv;
	/* root: its own directory, or the one XDG_RUNTIME_DIR names, whoever
	 * owns it (each server checked against the owner) */
	if (ctl_open_dir(dir, sizeof(dir), &dfd, "", &absent,
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
	if (json_output)
		printf("[");
	for (size_t i = 0; i < np; i++) {
		char comm[4096], name[32];
		struct stat st;
		int pid = pids[i], s, r;

		snprintf(name, sizeof(name), "%d.sock", pid);
		r = ctl_dial(dfd, dir, pid, &s, msg, sizeof(msg));
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
		if (json_output) {
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
	if (json_output)
		printf("]\n");
	return bad;
}
