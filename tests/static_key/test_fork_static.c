/* SPDX-License-Identifier: MIT */
/*
 * test_fork_static.c - the fork handlers come with the static library even
 * to a program that names none of their file's functions.
 *
 * The handlers (src/lock_order.c) are registered by a constructor. Linked
 * file by file from an archive, lock_order.o would be left out of a
 * program that only flips keys: nothing it calls is defined there. The
 * static library is therefore the library's objects linked into one
 * (CMakeLists.txt). Here a thread flips a key while the main thread forks;
 * each child flips the key itself, which never returns if the child
 * inherited the patch lock held by the flipping thread (no prepare
 * handler): alarm() then kills it and the check fails.
 * test_fork_static_perfile, the negative control, links the same program
 * against the objects archived file by file, and must fail.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"

#define FORKS 200

static DEFINE_STATIC_KEY_FALSE(k);
static int stop;

__attribute__((noinline)) static int hot(void)
{
	if (static_branch_unlikely(&k))
		return 1;
	return 0;
}

static void *flipper(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		static_branch_enable(&k);
		static_branch_disable(&k);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;
	int hung = 0, wrong = 0;

	CHECK(!pthread_create(&t, NULL, flipper, NULL));
	for (int i = 0; i < FORKS; i++) {
		int st;
		pid_t p = fork();

		if (p < 0) {
			CHECK(p >= 0);
			break;
		}
		if (!p) {
			alarm(10);	/* a child under heavy load is slow, not hung */
			static_branch_enable(&k);
			_exit(hot() == 1 ? 0 : 2);
		}
		if (waitpid(p, &st, 0) != p)
			continue;
		if (WIFSIGNALED(st)) {
			hung++;
			break;	/* one is proof enough */
		} else if (WEXITSTATUS(st))
			wrong++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	if (hung)
		fprintf(stderr, "a child never got the patch lock: fork "
			"handlers missing?\n");
	CHECK_EQ(hung, 0);
	CHECK_EQ(wrong, 0);
	return sy_test_done("test_fork_static");
}
