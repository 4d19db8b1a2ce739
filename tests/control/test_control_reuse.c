/* SPDX-License-Identifier: MIT */
/*
 * test_control_reuse - a program closes every descriptor (as a daemon
 * does) while a control client is connected, and reuses the numbers for
 * files of its own. The library notices its socket gone, drops its
 * clients and serves a new socket; it must neither close, read nor write
 * the program's files that now sit on its old numbers.
 *
 * The program's files are pipes, put on the library's numbers by dup2()
 * (the listening socket last, so that the library sees the loss when all
 * its other numbers are the program's): each read end holds one byte.
 * After control answers again on its new socket (which proves the library
 * went through its loss and dropped the old client), every pipe end must
 * still be open and every byte still unread.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>

#include "sy_ctl.h"
#include "sy_test.h"
#include "sy_watchdog.h"

DEFINE_STATIC_KEY_FALSE(reuse_key);

/* the program's pipes: the read end on a number the library had */
static int rd[64], wr[64], n;

static bool owned(int fd)
{
	for (int i = 0; i < n; i++)
		if (rd[i] == fd || wr[i] == fd)
			return true;
	return false;
}

static void take(int fd)
{
	int p[2];

	if (n == 64 || pipe(p)) {
		CHECK(0);
		return;
	}
	CHECK_EQ(dup2(p[0], fd), fd);
	close(p[0]);
	rd[n] = fd;
	wr[n] = p[1];
	CHECK_EQ(write(wr[n], "x", 1), 1);
	n++;
}

/* a site: keys are known to the control socket through their sites */
__attribute__((noinline)) static int reuse_site(void)
{
	return static_branch_unlikely(&reuse_key);
}

int main(void)
{
	int c, listener;
	bool served = false;
	char buf[65536];

	switchyard_set_log(sy_test_log, NULL);
	sy_watchdog_arm(30, "control was not served again in 30 s");
	if (switchyard_control_start())
		SKIP("no control socket here (runtime directory?)");
	/* a client, accepted and served: its connection stays open */
	c = sy_ctl_connect();
	CHECK(c >= 0);
	CHECK_EQ(reuse_site(), 0);
	CHECK_EQ(sy_ctl_ask(c, "list\n", buf, sizeof(buf)), 0);
	CHECK(strstr(buf, "reuse_key") != NULL);

	/*
	 * Every descriptor above 2 but the client's end (the library's
	 * socket, its client, its wake-up pipe, /proc/self/mem...) replaced
	 * by a pipe of the program's, each at once (dup2): the read end on
	 * the old number, holding a byte. The listening socket goes last, so
	 * that when the library sees it gone, every other number it had is
	 * already the program's.
	 */
	listener = -1;
	for (int fd = 3; fd < 1024; fd++) {
		int acc = 0;
		socklen_t len = sizeof(acc);

		if (fd == c || fcntl(fd, F_GETFD) == -1 || owned(fd))
			continue;
		if (!getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) &&
		    acc) {
			listener = fd;
			continue;
		}
		take(fd);
	}
	CHECK(listener > 2);
	if (listener > 2)
		take(listener);
	CHECK(n > 2);
	close(c);

	/* the library sees its socket gone (within its 1 s poll) and binds
	 * a new one about a second later; meanwhile a connection may reach
	 * the old socket, which the library's poll still holds: no reply */
	for (int i = 0; i < 300 && !served; i++) {
		int s;

		sy_sleep_ms(50);
		s = sy_ctl_connect();
		if (s < 0)
			continue;
		served = !sy_ctl_ask(s, "set reuse_key on\n", buf, sizeof(buf));
		close(s);
	}
	CHECK(served);
	CHECK(static_key_enabled(&reuse_key));
	CHECK_EQ(reuse_site(), 1);
	for (int i = 0; i < n; i++) {
		int avail = -1;

		CHECK(fcntl(rd[i], F_GETFD) != -1);	/* not closed */
		CHECK(fcntl(wr[i], F_GETFD) != -1);
		CHECK_EQ(ioctl(rd[i], FIONREAD, &avail), 0);
		CHECK_EQ(avail, 1);			/* not read */
	}
	CHECK_EQ(switchyard_control_stop(), 0);
	sy_watchdog_disarm();
	return sy_test_done("control_reuse");
}
