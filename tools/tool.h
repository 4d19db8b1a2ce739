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

#endif /* SY_TOOLS_TOOL_H */
