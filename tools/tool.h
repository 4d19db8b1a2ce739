/* SPDX-License-Identifier: MIT */
/*
 * tool.h - what the files of the switchyard tool share. Not library API.
 */
#ifndef SY_TOOLS_TOOL_H
#define SY_TOOLS_TOOL_H

#include <stdbool.h>
#include <stdio.h>

/* C++ names demangled (*owned: free() it), others as they are */
const char *demangle(const char *name, char **owned);
/* s as a JSON string */
void json_str(FILE *f, const char *s);

/* switchyard prepatch IN [-o OUT] [--json] (prepatch.c): exit status */
int cmd_prepatch(const char *in, const char *out, bool json);

/* the control socket's client (client.c) */
/* s is all decimal digits (a PID argument, not a file name) */
bool looks_like_pid(const char *s);
/* s as a PID (1 to pid_max - 1, digits only): 0 and *pid, or 2 (the usage
 * exit status) with a message */
int parse_pid(const char *s, int *pid);
/* connected to process pid's control socket, its directory and its server
 * checked: 0 and *fd, or 1 with a message */
int ctl_connect(int pid, int *fd);
/* --json given: ctl_error() also says the error as JSON on stdout */
extern bool ctl_json;
/* A live process's command failed: "switchyard: MSG" on stderr and, with
 * ctl_json, {"error": "MSG"} on stdout (a script reading the JSON gets an
 * object that says why, not empty input) */
void ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* switchyard ps [--json]: exit status */
int cmd_ps(bool json);

#endif /* SY_TOOLS_TOOL_H */
