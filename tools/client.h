/* SPDX-License-Identifier: MIT */
/*
 * client.h - the tool's side of the control socket (client.c): PID
 * arguments, the socket directory and the connection (whom the tool
 * trusts), one request and its reply, the replies as tables. Used by the
 * commands that reach a live process: list PID, set, call, ps. Not
 * library API.
 */
#ifndef SY_TOOLS_CLIENT_H
#define SY_TOOLS_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* s is all decimal digits (a PID argument, not a file name) */
bool looks_like_pid(const char *s);
/* s as a PID (1 to pid_max - 1, digits only): 0 and *pid, or 2 (the usage
 * exit status) with a message */
int parse_pid(const char *s, int *pid);

/* A live process's command failed: "switchyard: MSG" on stderr and, with
 * --json, {"error": "MSG"} on stdout (a script reading the JSON gets an
 * object that says why, not empty input) */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The checked socket directory (*fd) and its path (dir); 0, or 1 with a
 * message prefixed with who (for ps, *absent set instead when it does not
 * exist). owner: the uid whose sockets to reach (the process's for root,
 * else this user's), or (uid_t)-1 for root's ps (any owner: each server
 * is then checked against it).
 */
int ctl_open_dir(char *dir, size_t size, int *fd, const char *who,
		 bool *absent, uid_t owner);
/*
 * Connect to process pid's socket in the directory open at dfd and check
 * who serves it: 0 and *fd, -ECONNREFUSED (a socket nobody listens on),
 * or another negative errno with *msg set to what to say (-EPERM: served
 * by someone else).
 */
int ctl_dial(int dfd, const char *dir, int pid, int *fd, char *msg,
	     size_t msgsize);
/* connected to process pid's control socket, its directory and its server
 * checked: 0 and *fd, or 1 with a message */
int ctl_connect(int pid, int *fd);
/*
 * One request line to process pid and its one-line reply in *reply (to
 * free): 0, or 1 with a message. changes: the request changes something
 * (set, call), which the messages then say may still happen.
 */
int ctl_request(int pid, const char *line, char **reply, bool changes);

/* The value of "key": in a reply's JSON object obj, in val (size bytes):
 * a string unescaped, an array of strings as it is, else the token; NULL
 * when obj has no such key. */
const char *reply_field(const char *obj, const char *key, char *val,
			size_t size);
/* The end of the JSON object at p (its '}'); NULL if it does not end. */
const char *reply_obj_end(const char *p);
/* A reply's objects (one per "{\"name\"") as a table of the columns cols,
 * each object followed by what more(obj) prints (more may be NULL), or the
 * reply's error: 0, or 1 */
int print_reply(const char *reply, const char *const *cols, int ncols,
		void (*more)(const char *obj));

#endif /* SY_TOOLS_CLIENT_H */
