/* SPDX-License-Identifier: MIT */
/*
 * sy_ctl.h - a client of this process's own control socket, for C tests
 * (test_sc_protocol, test_control_reuse). The socket is reached by its
 * name from its directory (the full path may pass sun_path's 108 bytes: a
 * runtime directory at a long path).
 *
 *   fd = sy_ctl_connect();                      // or -1
 *   r = sy_ctl_ask(fd, "set k on\n", buf, n);   // 0, or -1 (error reply)
 */
#ifndef SY_CTL_H
#define SY_CTL_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <switchyard.h>

static inline int sy_ctl_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[4096];
	char *slash;
	int s, dir;

	if (switchyard_control_path(0, path, sizeof(path)) < 0)
		return -1;
	slash = strrchr(path, '/');
	if (!slash || strlen(slash + 1) >= sizeof(a.sun_path))
		return -1;
	*slash = 0;
	strcpy(a.sun_path, slash + 1);
	dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -1;
	s = -1;
	if (!chdir(path)) {
		s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a))) {
			close(s);
			s = -1;
		}
	}
	if (fchdir(dir) && s >= 0) {
		close(s);
		s = -1;
	}
	close(dir);
	return s;
}

/* Send req, read the reply up to its newline into buf: 0, or -1 when it
 * could not be sent or read, or says "error" (printed). */
static inline int sy_ctl_ask(int s, const char *req, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	/* MSG_NOSIGNAL: a socket the library dropped (its program closed
	 * the listening one) must not kill the test with SIGPIPE */
	if (size < 2 ||
	    send(s, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
		return -1;
	while (got < size - 1 && (n = read(s, buf + got, size - 1 - got)) > 0) {
		got += (size_t)n;
		if (buf[got - 1] == '\n')
			break;
	}
	buf[got] = 0;
	if (!got)
		return -1;	/* no reply */
	if (buf[got - 1] != '\n' || strstr(buf, "\"error\"")) {
		fprintf(stderr, "control: %s -> %s\n", req, buf);
		return -1;
	}
	return 0;
}

#endif /* SY_CTL_H */
