/* SPDX-License-Identifier: MIT */
/*
 * poke_write.c - how the poke engine (poke.c) gets bytes into code and the
 * cores to see them: the write paths, and the core sync after a batch.
 *
 * Write paths, in order of preference:
 *  1. pwrite(2) to /proc/self/mem. The kernel writes through its own
 *     mapping of the page (FOLL_FORCE): the text mapping never becomes
 *     writable, and a private file mapping stays file-backed (the written
 *     page becomes an anonymous copy-on-write page inside it), so profilers
 *     still symbolise it. Hardened kernels may refuse it
 *     (proc_mem.force_override=never).
 *  2. Unless the policy is SWITCHYARD_POLICY_STRICT: mprotect(2) the pages
 *     read-write-execute, store, and restore the pages' original
 *     protection, read from /proc/self/maps. RWX, not RW: other threads
 *     (and, in a static link, this very function) execute those pages
 *     meanwhile, and a page without X would fault under them.
 * SWITCHYARD_PATCH_METHOD=procmem|mprotect in the environment forces one
 * (for tests).
 *
 * This is the change path: nothing here allocates memory or uses stdio
 * (see the top of poke.c).
 *
 * All state here is protected by the patch lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "poke_impl.h"

/*
 * Negative control of tests/static_call/test_sc_after.c: a test-only build
 * with SY__POKE_NOSYNC skips the writer's cache maintenance and the core
 * sync, which on Arm hardware leaves other cores (and this one) running
 * stale instructions after a change returned. 0 in the library.
 */
#ifndef SY__POKE_NOSYNC
#define SY__POKE_NOSYNC 0
#endif

enum poke_method { METHOD_AUTO, METHOD_PROCMEM, METHOD_MPROTECT };

static int method = -1;
static enum switchyard_policy policy = SWITCHYARD_POLICY_DEFAULT;
static int strict_reported;
static int mem_fd = -1;
static pid_t mem_fd_pid;
/* write_calls, rwx_windows, sync_calls, sync_fallbacks: the engine counts
 * the rest (sy_poke_stats()) */
static struct switchyard_stats counters;

static enum poke_method get_method(void)
{
	if (method < 0) {
		const char *s = secure_getenv("SWITCHYARD_PATCH_METHOD");

		method = METHOD_AUTO;
		if (s && !strcmp(s, "procmem"))
			method = METHOD_PROCMEM;
		else if (s && !strcmp(s, "mprotect"))
			method = METHOD_MPROTECT;
		else if (s && *s && strcmp(s, "auto"))
			sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_PATCH_METHOD="
			       "\"%.64s\" is not procmem, mprotect or auto: "
			       "ignored (auto)", s);
#ifdef SY_ARCH_HAVE_EMULATED
		/* where an emulator runs us, code written through
		 * /proc/self/mem is not what it executes (arch/<arch>/
		 * sy_arch.h): every change would do nothing, silently. Not
		 * said: every program run so would print it (the statistics'
		 * rwx_windows show it, switchyard(3) says so) */
		if (method == METHOD_AUTO && sy_arch_emulated())
			method = METHOD_MPROTECT;
#endif
	}
	return (enum poke_method)method;
}

/* ---- write path 1: /proc/self/mem ---------------------------------------- */

/*
 * The descriptor is trusted only while it still is the file we opened: an
 * application may close descriptors it does not own (daemons do, and so do
 * children after fork()) and reuse the number for a file of its own, which
 * pwrite() at offset = code address would then corrupt. Before every use
 * its device and inode are compared with those recorded at open (a
 * /proc/<pid>/mem inode is never a regular file's). A number that no longer
 * names our file is forgotten, never closed: it is the application's now.
 * After fork() the inherited descriptor names the parent's memory; it is
 * closed only if it still is that file (then it is ours), and a new one is
 * opened.
 *
 * What remains: a thread that closes a descriptor it does not own and
 * opens a file that reuses the number exactly between our check and our
 * pwrite(); no library that keeps a descriptor can exclude that, and
 * daemons close foreign descriptors before they start threads.
 */
static dev_t mem_dev;
static ino_t mem_ino;

static bool mem_fd_is_ours(void)
{
	struct stat st;

	return mem_fd >= 0 && fstat(mem_fd, &st) == 0 && st.st_dev == mem_dev &&
	       st.st_ino == mem_ino;
}

static int mem_open(void)
{
	pid_t pid = getpid();
	struct stat st;
	int fd;

	if (mem_fd >= 0) {
		bool ours = mem_fd_is_ours();

		if (ours && mem_fd_pid == pid)
			return 0;
		/* A descriptor inherited across fork() still names the
		 * parent's memory: writing through it would patch the
		 * parent. */
		if (ours)
			close(mem_fd);
		mem_fd = -1;
	}
	fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int r = -errno;

		close(fd);
		return r;
	}
	mem_fd = fd;
	mem_fd_pid = pid;
	mem_dev = st.st_dev;
	mem_ino = st.st_ino;
	return 0;
}

/*
 * Write len bytes at addr through /proc/self/mem: one pwrite(2). A call
 * costs about a microsecond whatever its size up to a few pages, so the
 * engine writes chunks, not sites. (pwritev would not help: /proc/<pid>/mem
 * has no write_iter, so the kernel loops over the segments, one call each.)
 */
static int write_procmem(uintptr_t addr, const uint8_t *buf, size_t len,
			 size_t *done)
{
	int r = mem_open();

	if (r)
		return r;
#ifdef SY__POKE_SLOW
	/*
	 * Test-only build (tests/static_call/CMakeLists.txt, torture_sc_slow):
	 * each byte that changes is written on its own, the last first, with
	 * 100 us between them, so that a protocol that lets a thread run
	 * bytes while they are written shows it (a torn call lands in the
	 * torture's int3 padding) instead of hiding behind a one-call write.
	 * *done jumps to len at the end: this build never fails a write.
	 */
	for (size_t i = len; i--;) {
		const struct timespec pause = { 0, 100000 };

		if (((const uint8_t *)addr)[i] == buf[i])
			continue;
		counters.write_calls++;
		if (pwrite(mem_fd, buf + i, 1, (off_t)(addr + i)) != 1)
			return -EIO;
		nanosleep(&pause, NULL);
	}
	*done = len;
	return 0;
#endif
#ifdef SY_ARCH_CODE_WORD
	/*
	 * One pwrite per instruction word that changes (AArch64): the kernel
	 * copies into its own mapping of the page with its memcpy, which for
	 * an aligned 4-byte copy makes 32-bit stores of the word (single-copy
	 * atomic: Arm ARM B2.2.1), while a longer copy may use 128-bit or
	 * unaligned stores that promise nothing for a word inside them. That
	 * is the kernel's implementation, not its contract; the mprotect
	 * window (sy_arch_code_store()) is exact by the architecture.
	 */
	while (*done < len) {
		uintptr_t a = addr + *done;
		size_t n = SY_ARCH_CODE_WORD - a % SY_ARCH_CODE_WORD;

		if (n > len - *done)
			n = len - *done;
		if (memcmp((const void *)a, buf + *done, n)) {
			ssize_t w;

			counters.write_calls++;
			w = pwrite(mem_fd, buf + *done, n, (off_t)a);
			if (w != (ssize_t)n)
				return w < 0 ? -errno : -EIO;
		}
		*done += n;
	}
	return 0;
#endif
	while (*done < len) {
		ssize_t n;

		counters.write_calls++;
		n = pwrite(mem_fd, buf + *done, len - *done,
			   (off_t)(addr + *done));
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		*done += (size_t)n;	/* short write: go on from there */
	}
	return 0;
}

/* Parse a hex number at *p, advancing it. */
static unsigned long parse_hex(const char **p)
{
	unsigned long v = 0;

	for (;; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (unsigned long)(c - 'a' + 10);
		else
			return v;
	}
}

/*
 * Protections of the mappings holding lo and hi - 1, from /proc/self/maps,
 * read with open/read (no stdio: see the top of this file). -EINVAL when
 * they differ or a gap lies between (the restore would be wrong).
 */
static int prot_of(uintptr_t lo, uintptr_t hi, int *prot)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int found = -1, r = -ENOENT;
	uintptr_t covered = lo;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(buf, '\n'))) {
			const char *p = buf;
			unsigned long a = parse_hex(&p), b;
			int pr;

			p++;	/* '-' */
			b = parse_hex(&p);
			p++;	/* ' ' */
			pr = (p[0] == 'r' ? PROT_READ : 0) |
			     (p[1] == 'w' ? PROT_WRITE : 0) |
			     (p[2] == 'x' ? PROT_EXEC : 0);
			if (covered < hi && a <= covered && covered < b) {
				if (found >= 0 && pr != found) {
					r = -EINVAL;
					goto out;
				}
				found = pr;
				covered = b;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0;	/* an absurdly long line: skip it */
	}
	if (found >= 0 && covered >= hi) {
		*prot = found;
		r = 0;
	} else if (found >= 0) {
		r = -EINVAL;
	}
out:
	close(fd);
	return r;
}

#ifdef SY_ARCH_PROT_VMFLAG
/*
 * Whether the mapping holding addr carries SY_ARCH_PROT_VMFLAG in its
 * VmFlags (/proc/self/smaps): AArch64's guarded pages (PROT_BTI, "bt"),
 * which /proc/self/maps does not show. A window that restored r-x without
 * it would silently take an object's branch target protection away.
 * Unreadable, or not found: false (qemu-user's smaps, the host's view,
 * never shows it).
 */
static bool vmflag_of(uintptr_t addr)
{
	char buf[4096];
	size_t have = 0;
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
	bool in = false, flag = false;

	if (fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(buf, '\n'))) {
			const char *p = buf;

			*nl = 0;
			if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')) {
				unsigned long a = parse_hex(&p), b;

				p++;	/* '-' */
				b = parse_hex(&p);
				in = a <= addr && addr < b;
			} else if (in && !strncmp(p, "VmFlags:", 8)) {
				flag = strstr(p, " " SY_ARCH_PROT_VMFLAG) != NULL;
				goto out;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have + 1);
		}
		if (have == sizeof(buf) - 1)
			have = 0;	/* an absurdly long line: skip it */
	}
out:
	close(fd);
	return flag;
}
#endif

/*
 * Write len bytes at addr by opening a read-write-execute window over their
 * pages, and restoring the pages' protection after. Safe while other
 * threads execute these pages: mprotect() only adds PROT_WRITE (X stays
 * set in every page table entry, so no instruction fetch faults), and the
 * store itself follows the same one-byte rule as the /proc/self/mem path
 * (see the chunk comment in poke.c).
 */
static int write_mprotect(uintptr_t addr, const uint8_t *buf, size_t len,
			  size_t *done)
{
	uintptr_t ps = sy_poke_page_size();
	uintptr_t lo = addr & ~(ps - 1), hi = (addr + len + ps - 1) & ~(ps - 1);
	int prot, r;

	/* A chunk lies within one object's text; the restore below assumes
	 * one protection over the whole window. */
	r = prot_of(lo, hi, &prot);
	if (r)
		return r;
#ifdef SY_ARCH_PROT_VMFLAG
	if (vmflag_of(lo))
		prot |= SY_ARCH_PROT_EXTRA;
#endif
	counters.write_calls++;
	counters.rwx_windows++;
	if (mprotect((void *)lo, hi - lo,
		     PROT_READ | PROT_WRITE | PROT_EXEC |
		     (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))))
		return -errno;
	sy_arch_code_store((void *)addr, buf, len);
	*done = len;
	if (mprotect((void *)lo, hi - lo, prot)) {
		/* The write happened; failing to drop W now would leave a
		 * W+X mapping behind, which must not happen silently. */
		r = -errno;
		sy_log(SWITCHYARD_LOG_ERROR,
		       "could not restore protection of %p..%p: %s",
		       (void *)lo, (void *)hi, strerror(-r));
		return r;
	}
	return 0;
}

/*
 * Write len bytes at addr. On error, *done says how many leading bytes were
 * written (the rest were not).
 */
static int write_paths(uintptr_t addr, const uint8_t *buf, size_t len,
		       size_t *done)
{
	enum poke_method m = get_method();
	int r = -EPERM;

	*done = 0;
	if (m != METHOD_MPROTECT) {
		r = write_procmem(addr, buf, len, done);
		if (!r || m == METHOD_PROCMEM || *done)
			return r;
	}
	if (policy == SWITCHYARD_POLICY_STRICT) {
		/* The only path left would map the code writable and
		 * executable at once, which the application forbade. */
		if (!strict_reported) {
			strict_reported = 1;
			if (m == METHOD_MPROTECT)
				sy_log(SWITCHYARD_LOG_ERROR,
				       "SWITCHYARD_PATCH_METHOD=mprotect asks "
				       "for a writable+executable window, which "
				       "the strict policy forbids: nothing "
				       "written");
			else
				sy_log(SWITCHYARD_LOG_ERROR,
				       "/proc/self/mem refused the write (%s) "
				       "and the strict policy forbids a "
				       "writable+executable window",
				       strerror(-r));
		}
		return r;
	}
	return write_mprotect(addr, buf, len, done);
}

/*
 * Under valgrind, code runs from translations that valgrind made of it
 * earlier; by default it checks for changed code only on the stack
 * (--smc-check=stack), so a rewritten site would keep running its old
 * translation. The client request tells valgrind to drop the translations
 * of the bytes we wrote (a few instructions that do nothing when not under
 * valgrind). Without the header at build time, --smc-check=all is needed.
 */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SY_HAVE_VALGRIND 1
#endif
#endif

int sy_poke_write(uintptr_t addr, const uint8_t *buf, size_t len,
		  size_t *done)
{
	int r = write_paths(addr, buf, len, done);

	/* the writing thread's part of making the new code visible (AArch64:
	 * cache maintenance; the other threads: sy_poke_sync()) */
	if (*done)
		if (!SY__POKE_NOSYNC)
			sy_arch_code_written(addr, *done);
#ifdef SY_HAVE_VALGRIND
	if (*done)
		VALGRIND_DISCARD_TRANSLATIONS((const void *)addr, *done);
#endif
	return r;
}

static int set_policy_locked(enum switchyard_policy p)
{
	policy = p;
	strict_reported = 0;
	return 0;
}

int switchyard_set_policy(enum switchyard_policy p)
{
	int r = sy_enter();

	if (r)
		return r;
	if (p != SWITCHYARD_POLICY_DEFAULT && p != SWITCHYARD_POLICY_STRICT) {
		sy_leave();
		return -EINVAL;
	}
	r = SY_LOCKED(set_policy_locked(p));
	sy_leave();
	return r;
}

/*
 * Make every thread of the process serialise before we return (Intel SDM
 * vol. 3 8.1.3: a processor may execute stale bytes of modified code until
 * it executes a serialising instruction). One system call per batch,
 * whatever its size.
 *  1. membarrier(PRIVATE_EXPEDITED_SYNC_CORE) (src/arch/<arch>/sync.c).
 *  2. If the kernel lacks or denies it: change the protection of a page of
 *     our own that is present in memory. The kernel must flush the TLB of
 *     every CPU that runs a thread of the process, by interrupt, and the
 *     return from an interrupt (IRET) is serialising; a thread that is not
 *     running serialises when it is switched back in. This is the same
 *     trick as liburcu's and the .NET runtime's FlushProcessWriteBuffers.
 *  3. If that fails too: the bytes are written and each site is in the
 *     old or the new form, so the program stays correct, but another core
 *     may take the old path for a short while after we return; reported
 *     once.
 */
static void *ipi_page;

static int sync_by_tlb_flush(void)
{
	uintptr_t ps = sy_poke_page_size();

	if (!ipi_page) {
		void *p = mmap(NULL, ps, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -errno;
		ipi_page = p;
	}
	/* Write first: only a present page has TLB entries to shoot down. */
	__atomic_store_n((volatile char *)ipi_page, 1, __ATOMIC_RELAXED);
	if (mprotect(ipi_page, ps, PROT_READ))
		return -errno;
	if (mprotect(ipi_page, ps, PROT_READ | PROT_WRITE))
		return -errno;
	return 0;
}

void sy_poke_sync(void)
{
	static int reported;
	int r;

#ifdef SY__POKE_SLOW
	{	/* test-only build (write_procmem()): late syncs */
		const struct timespec pause = { 0, 300000 };

		nanosleep(&pause, NULL);
	}
#endif
	counters.sync_calls++;
	if (SY__POKE_NOSYNC)
		return;
	r = sy_arch_sync_cores();
	if (!r)
		return;
	counters.sync_fallbacks++;
	r = sync_by_tlb_flush();
	if (!r || reported)
		return;
	reported = 1;
	sy_log(SWITCHYARD_LOG_WARN,
	       "neither membarrier nor a TLB flush could synchronise the "
	       "cores (%s): other threads may run the old code for a moment "
	       "after a change returns", strerror(-r));
}


void sy_poke_write_stats(struct switchyard_stats *st)
{
	st->sync_calls = counters.sync_calls;
	st->sync_fallbacks = counters.sync_fallbacks;
	st->write_calls = counters.write_calls;
	st->rwx_windows = counters.rwx_windows;
}
