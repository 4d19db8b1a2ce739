/* SPDX-License-Identifier: MIT */
/*
 * ctl_path.c - where the control sockets live, and how the server binds
 * and the client connects to them whatever the directory's length
 * (ctl_path.h).
 *
 * sun_path holds 108 bytes; $XDG_RUNTIME_DIR may be longer (a test suite
 * under a long checkout path, a container's bind mount). Both sides open
 * the directory once, check the opened directory (owner, mode, a
 * directory and not a symlink), and then name the socket through
 * /proc/self/fd/<fd>/<pid>.sock: a short path whatever the directory's,
 * resolved through the very directory that was checked (a rename of it,
 * or of any directory above it, changes nothing), and the kernel still
 * checks search permission on it. Without /proc (a sandbox), the plain
 * path serves when it fits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_path.h"

int sy_ctl_dir_of(char *buf, size_t size, uid_t uid)
{
	const char *rt = secure_getenv("XDG_RUNTIME_DIR");
	int n;

	if (rt && rt[0] == '/')
		n = snprintf(buf, size, "%s/switchyard", rt);
	else
		n = snprintf(buf, size, "/tmp/switchyard-%u", (unsigned)uid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int sy_ctl_dir(char *buf, size_t size)
{
	return sy_ctl_dir_of(buf, size, geteuid());
}

int sy_ctl_dir_open(const char *dir, bool serve, uid_t owner, char *why,
		    size_t whysize)
{
	uid_t me = geteuid();
	struct stat st;
	char whom[48];
	int fd, r;

	why[0] = 0;
	if (serve && mkdir(dir, 0700) && errno != EEXIST) {
		r = -errno;
		snprintf(why, whysize, "%s: %s", dir, strerror(-r));
		return r;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		/* O_NOFOLLOW on a symlink: ELOOP (ENOTDIR with O_DIRECTORY
		 * on some kernels): say what it is */
		if ((r == -ELOOP || r == -ENOTDIR) && !lstat(dir, &st) &&
		    S_ISLNK(st.st_mode)) {
			snprintf(why, whysize, "%s is a symbolic link", dir);
			return -EPERM;
		}
		snprintf(why, whysize, "%s: %s", dir, strerror(-r));
		return r;
	}
	if (fstat(fd, &st)) {
		r = -errno;
		close(fd);
		snprintf(why, whysize, "%s: %s", dir, strerror(-r));
		return r;
	}
	/* a user other than root: only their own (or root's); root: the
	 * owner asked for (the process's), or any for `ps` */
	if (me != 0 || owner == me)
		snprintf(whom, sizeof(whom), "you");
	else
		snprintf(whom, sizeof(whom), "uid %u (the process's)",
			 (unsigned)owner);
	if (me != 0)
		owner = me;
	if (serve ? st.st_uid != me || (st.st_mode & 0777) != 0700 :
		    (owner != (uid_t)-1 && st.st_uid != owner &&
		     st.st_uid != 0) ||
		    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, whysize, "%s is owned by uid %u with mode %04o; "
			 "it must be %s%s%s", dir, (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777), serve ?
			 "a directory of mode 0700 owned by this process's "
			 "uid" : "owned by ", serve ? "" : whom, serve ? "" :
			 " or root and writable by no one else (another user "
			 "may have made it)");
		close(fd);
		return -EPERM;
	}
	return fd;
}

int sy_ctl_addr(int dirfd, const char *dir, const char *name,
		struct sockaddr_un *sa, socklen_t *len)
{
	char proc[64];
	struct stat a, b;
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
	if (!fstat(dirfd, &a) && !stat(proc, &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", proc,
			     name);
	else
		n = snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/%s", dir,
			     name);
	if (n < 0 || (size_t)n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
			   (size_t)n + 1);
	return 0;
}
