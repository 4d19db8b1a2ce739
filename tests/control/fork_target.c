/* SPDX-License-Identifier: MIT */
/*
 * fork_target.c - control across fork() (test_control_fork.sh). Run with
 * SWITCHYARD_CONTROL=1:
 *   fork_target daemon PIDFILE   daemon(3) (fork, the parent _exit()s,
 *                                setsid) and a second fork whose parent
 *                                _exit()s too (the double fork); the last
 *                                child writes "FIRST SECOND\n" (the two
 *                                children's pids) to PIDFILE and runs
 *                                until its standard input closes
 *   fork_target slowdaemon PIDFILE  the same, but the first process
 *                                leaves a second after its child (it
 *                                sleeps, then _exit()s) while the child
 *                                forks the daemon and leaves at once:
 *                                the daemon must still remove the first
 *                                process's socket, once it is gone
 *   fork_target workers          children of a parent that lives on: one
 *                                that execs, one that _exit()s; neither
 *                                may leave a socket. Prints "ok" or FAIL
 *                                lines; exit status 0 when all is well.
 *   fork_target closer FILE      as a daemon does after fork(): closes
 *                                every descriptor above 2, then opens
 *                                FILE (append) on the freed numbers and
 *                                exits: the library must not write to it
 *                                or close it (its stop() at exit).
 *   fork_target closeall         closefrom(0), as some daemons do, after
 *                                printing "closed PID": the library's new
 *                                descriptors must not take 0, 1 and 2;
 *                                waits for a signal
 *   fork_target rebind           as a daemon does once started: closes
 *                                every descriptor above 2, then puts a
 *                                listening socket of its own, with a
 *                                connection waiting, on the freed
 *                                numbers (3 to 15); prints "closed PID"
 *                                and runs until its standard input
 *                                closes; then prints "own ok" if that
 *                                connection is still there for it to
 *                                accept (the library must not take it),
 *                                else "own stolen", and "fork_key N".
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(fork_key);

static int fails;

/* pid's socket file must not exist (a child whose parent lives on) */
static void no_socket(int pid, const char *who)
{
	char path[8192];

	if (switchyard_control_path(pid, path, sizeof(path))) {
		printf("FAIL: %s: switchyard_control_path\n", who);
		fails++;
	} else if (!access(path, F_OK) || errno != ENOENT) {
		printf("FAIL: %s (pid %d) left a socket: %s\n", who, pid, path);
		fails++;
	}
}

static int workers(void)
{
	char path[8192];
	int st;
	pid_t c;

	if (switchyard_control_path(0, path, sizeof(path)) ||
	    access(path, F_OK)) {
		printf("FAIL: the parent serves no socket (%s)\n", path);
		return 1;
	}
	/* fork + exec: the waiting thread dies with the exec */
	c = fork();
	if (c == 0) {
		execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
		_exit(127);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		printf("FAIL: fork+exec child\n");
		fails++;
	}
	no_socket(c, "a child that exec'd");
	/* a worker that exits while its parent lives: nothing to remove */
	c = fork();
	if (c == 0) {
		char me[8192];

		if (!switchyard_control_path(0, me, sizeof(me)) &&
		    !access(me, F_OK))
			_exit(3);	/* it serves while its parent lives */
		_exit(0);
	}
	if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		printf("FAIL: the worker served a socket while its parent "
		       "lived (status %d)\n", st);
		fails++;
	}
	no_socket(c, "a worker that _exit()ed");
	/* static_key_enabled() keeps the key (and its site) in the program */
	printf("%s %d\n", fails ? "failed" : "ok", static_key_enabled(&fork_key));
	return fails != 0;
}

static int daemonize(const char *pidfile, bool slow)
{
	pid_t first, second;
	FILE *f;
	char c;

	if (!slow && daemon(1, 1))
		return 1;
	if (slow) {
		first = fork();
		if (first < 0)
			return 1;
		if (first > 0) {
			sleep(1);	/* the window, not a synchronisation */
			_exit(0);
		}
		setsid();
	}
	first = getpid();
	second = fork();
	if (second < 0)
		return 1;
	if (second > 0)
		_exit(0);	/* as daemon(3)'s parent does */
	second = getpid();
	f = fopen(pidfile, "w");
	if (!f)
		return 1;
	fprintf(f, "%d %d\n", (int)first, (int)second);
	fclose(f);
	while (read(0, &c, 1) > 0)
		;
	printf("fork_key %d\n", static_key_enabled(&fork_key));
	return static_branch_unlikely(&fork_key) ? 0 : 4;
}

static int closer(const char *file)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	for (int i = 0; i < 16; i++)
		if (open(file, O_WRONLY | O_APPEND | O_CREAT, 0600) < 0)
			return 1;
	printf("fork_key %d\n", static_key_enabled(&fork_key));
	return 0;	/* exit(): the library's destructor stops control */
}

static int rebind(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len;
	int l, c, a, on;
	char ch;

	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	/* an abstract name: nothing in the file system */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			  (size_t)snprintf(sa.sun_path + 1,
					   sizeof(sa.sun_path) - 1,
					   "fork_target-%d", (int)getpid()));
	l = socket(AF_UNIX, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) || listen(l, 4))
		return 1;
	c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, len))
		return 1;
	for (int fd = 3; fd < 16; fd++)
		if (fd != l && fd != c && dup2(l, fd) != fd)
			return 1;
	printf("closed %d\n", (int)getpid());
	while (read(0, &ch, 1) > 0)
		;
	fcntl(l, F_SETFL, O_NONBLOCK);
	a = accept(l, NULL, NULL);
	printf("own %s\n", a >= 0 ? "ok" : "stolen");
	on = static_key_enabled(&fork_key);
	printf("fork_key %d\n", on);
	return a >= 0 && static_branch_unlikely(&fork_key) ? 0 : 5;
}

static __attribute__((noreturn)) int closeall(void)
{
	printf("closed %d\n", (int)getpid());
	for (int fd = 0; fd < 1024; fd++)
		close(fd);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "daemon"))
		return daemonize(argv[2], false);
	if (argc == 3 && !strcmp(argv[1], "slowdaemon"))
		return daemonize(argv[2], true);
	if (argc == 2 && !strcmp(argv[1], "workers"))
		return workers();
	if (argc == 3 && !strcmp(argv[1], "closer"))
		return closer(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "rebind"))
		return rebind();
	if (argc == 2 && !strcmp(argv[1], "closeall"))
		return closeall();
	fprintf(stderr, "usage: fork_target daemon|slowdaemon PIDFILE | "
		"workers | "
		"closer FILE | rebind | closeall\n");
	return 2;
}
