/* SPDX-License-Identifier: MIT */
/*
 * control_impl.h - between the control socket's thread (control.c) and its
 * requests (control_cmd.c).
 */
#ifndef SY_CONTROL_IMPL_H
#define SY_CONTROL_IMPL_H

#include <stddef.h>

#include "internal.h"

/* The longest request line, its newline excluded. */
#define CTL_LINE 1024

/* The reply to one request line (malloc'ed, *len bytes; an error reply
 * when out of memory), or NULL when not even that could be made. Run by
 * the control thread, without the patch lock. */
SY_HIDDEN char *sy_ctl_request(const char *line, size_t *len);

#endif /* SY_CONTROL_IMPL_H */
