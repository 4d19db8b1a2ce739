/* SPDX-License-Identifier: MIT */
/*
 * test_memfd.c - the application closes and reuses descriptors that the
 * library opened for itself (the /proc/self/mem descriptor it keeps).
 *
 *   built without SY_MEMFD_FORK (test_memfd_reuse, and non-PIE:
 *   test_memfd_reuse_nopie): after a first flip, close every descriptor
 *   >= 3 (as daemons do), open a data file on the number the library's
 *   descriptor had, flip the key. The data file must stay empty (size 0:
 *   no code bytes written into it at offset = site address, which is small
 *   in a non-PIE executable), every flip must return 0 and the site must
 *   really change path.
 *   built with SY_MEMFD_FORK (test_memfd_fork): a forked child closes its
 *   descriptors, opens its own file on the inherited number, flips the key:
 *   its descriptor must still name its file afterwards, and write() to it
 *   must succeed.
 *
 * The data files are memfds: no clean-up, and any offset can be written
 * (so a write at a site's address would land, whatever the address).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"

#if !SY_TEST_HAVE_SITES
int main(void)
{
	SKIP("no patched sites in this build (fallback mode)");
}
#else

DEFINE_STATIC_KEY_FALSE(memfd_key);

__attribute__((noinline)) static int memfd_site(void)
{
	return static_branch_unlikely(&memfd_key);
}

static int list_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)) && n < max) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static void fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
}

/* The descriptor the library keeps on /proc/<pid>/mem, or -1. */
static int library_mem_fd(void)
{
	int fds[1024], n = list_fds(fds, 1024);
	char path[256];

	for (int i = 0; i < n; i++) {
		fd_path(fds[i], path, sizeof(path));
		size_t len = strlen(path);

		if (!strncmp(path, "/proc/", 6) && len > 4 &&
		    !strcmp(path + len - 4, "/mem"))
			return fds[i];
	}
	return -1;
}

/* "Close every descriptor I did not open", except keep (-1: none). */
static void close_all(int keep)
{
	int fds[1024], n = list_fds(fds, 1024);

	CHECK(n >= 3);
	for (int i = 0; i < n; i++)
		if (fds[i] >= 3 && fds[i] != keep)
			close(fds[i]);
}

/* A new data file on descriptor want (on the lowest free one if -1). */
static int open_data_file(int want)
{
	int fd = memfd_create("sy-test-data", 0);

	CHECK(fd >= 0);
	if (want >= 0 && fd != want) {
		CHECK_EQ(dup2(fd, want), want);
		close(fd);
		fd = want;
	}
	return fd;
}

static long long file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	return (long long)st.st_size;
}

/*
 * Change the key: the site and its bytes must follow, and the data file
 * (if data >= 0) keep its size.
 */
static void flip(int on, int data, long long size)
{
	CHECK_EQ(on ? static_branch_enable(&memfd_key) :
		      static_branch_disable(&memfd_key), 0);
	CHECK_EQ(memfd_site(), on);
	CHECK_EQ(sy_test_check_sites(&memfd_key.key), 1);
	if (data >= 0)
		CHECK_EQ(file_size(data), size);
}

#ifndef SY_MEMFD_FORK
#ifdef __PIE__
#define SY_NAME "test_memfd_reuse"
#else
#define SY_NAME "test_memfd_reuse_nopie"
#endif

int main(void)
{
	/* a first flip: the library opens its descriptor */
	flip(1, -1, 0);
	flip(0, -1, 0);
	int lib = library_mem_fd();

	printf("library's /proc/self/mem descriptor: %d\n", lib);
	close_all(-1);
	int data = open_data_file(lib);
	char path[256];

	printf("data file opened as descriptor %d\n", data);
	for (int i = 0; i < 8 && !sy_test_failures; i++) {
		flip(1, data, 0);
		flip(0, data, 0);
	}
	fd_path(data, path, sizeof(path));
	CHECK(strstr(path, "sy-test-data") != NULL);
	CHECK_EQ(close(data), 0);
	/* and once the number is free again */
	flip(1, -1, 0);
	flip(0, -1, 0);
	return sy_test_done(SY_NAME);
}
#else
static void child(int lib)
{
	char before[256], after[256], back[8] = "";

	close_all(-1);
	int mine = open_data_file(lib >= 0 ? lib : 3);

	fd_path(mine, before, sizeof(before));
	flip(1, mine, 0);
	fd_path(mine, after, sizeof(after));
	CHECK(strstr(before, "sy-test-data") != NULL);
	if (strcmp(before, after)) {
		sy_test_failures++;
		fprintf(stderr, "child: descriptor %d named %s, after the flip %s\n",
			mine, before, after);
	}
	CHECK_EQ(write(mine, "hello", 5), 5);
	CHECK_EQ(file_size(mine), 5);
	CHECK_EQ(pread(mine, back, 5, 0), 5);
	CHECK(!memcmp(back, "hello", 5));
	flip(0, mine, 5);
	flip(1, mine, 5);
	flip(0, mine, 5);
	fflush(NULL);
	_exit(sy_test_failures ? 1 : 0);
}

int main(void)
{
	flip(1, -1, 0);
	flip(0, -1, 0);
	int lib = library_mem_fd(), status = -1;

	printf("library's /proc/self/mem descriptor: %d\n", lib);
	fflush(NULL);
	pid_t p = fork();

	CHECK(p >= 0);
	if (p == 0)
		child(lib);
	CHECK_EQ(waitpid(p, &status, 0), p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the parent's own descriptor and key are unaffected */
	flip(1, -1, 0);
	flip(0, -1, 0);
	return sy_test_done("test_memfd_fork");
}
#endif
#endif /* SY_TEST_HAVE_SITES */
