/* SPDX-License-Identifier: MIT */
/*
 * ctl_path.h - where the control sockets live and how to reach them
 * (src/ctl_path.c). Shared by the library's server (control.c) and the
 * tool's client (tools/client.c), which compiles the file in. Not API.
 */
#ifndef SY_CTL_PATH_H
#define SY_CTL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/*
 * The directory of this user's sockets (no trailing slash):
 * $XDG_RUNTIME_DIR/switchyard, or /tmp/switchyard-<euid> when the variable
 * is unset or not absolute. 0, -ENAMETOOLONG. Thread-safe (it reads the
 * environment); not async-signal-safe.
 */
__attribute__((visibility("hidden")))
int sy_ctl_dir(char *buf, size_t size);

/* The same for the sockets of processes running as uid (root reaching
 * another user's process): $XDG_RUNTIME_DIR/switchyard when this process
 * has the variable, else /tmp/switchyard-<uid>. */
__attribute__((visibility("hidden")))
int sy_ctl_dir_of(char *buf, size_t size, uid_t uid);

/*
 * Open the directory dir without following a symbolic link and check the
 * opened directory (fstat: what is checked is what is used):
 *   serve  (the library): made with mode 0700 if absent; it must be owned
 *          by this effective uid and have mode 0700 exactly;
 *   !serve (the tool): it must be owned by this effective uid or by root,
 *          and not be writable by group or others. For root, owner
 *          takes the place of this uid: root reaching user U's process
 *          accepts U's directory (owner U) and no other user's;
 *          (uid_t)-1 accepts any owner (`ps` of a directory root named).
 *          owner is ignored when not root, and when serve.
 * Returns the descriptor (O_RDONLY | O_DIRECTORY | O_CLOEXEC), or a
 * negative errno: -EPERM when the directory fails the check, -ENOENT when
 * absent (!serve), others from mkdir/open. why (size whysize) says what
 * was wrong, naming dir. Thread-safe; not async-signal-safe.
 */
__attribute__((visibility("hidden")))
int sy_ctl_dir_open(const char *dir, bool serve, uid_t owner, char *why,
		    size_t whysize);

/*
 * The address of the socket NAME in the directory open at dirfd (whose
 * path is dir): /proc/self/fd/<dirfd>/NAME when /proc shows that very
 * directory there (short whatever dir's length; the walk still checks the
 * directory's permissions; and it is the directory that was checked, not
 * whatever is at dir's path now), else dir/NAME when it fits sun_path.
 * *len is the length to pass to bind()/connect(). 0, or -ENAMETOOLONG
 * (dir/NAME does not fit and /proc is not mounted). Thread-safe; not
 * async-signal-safe.
 */
__attribute__((visibility("hidden")))
int sy_ctl_addr(int dirfd, const char *dir, const char *name,
		struct sockaddr_un *sa, socklen_t *len);

#endif /* SY_CTL_PATH_H */
