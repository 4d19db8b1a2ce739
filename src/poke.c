/* SPDX-License-Identifier: MIT */
/*
 * poke.c - the poke engine: verify, write and synchronise a batch of code
 * changes.
 *
 * Write paths, in order of preference:
 *  1. pwrite(2) to /proc/self/mem. The kernel writes through its own
 *     mapping of the page (FOLL_FORCE): the text mapping never becomes
 *     writable, and a private file mapping stays file-backed (the written
 *     page becomes an anonymous copy-on-write page inside it), so profilers
 *     still symbolise it. Hardened kernels may refuse it
 *     (proc_mem.force_override=never).
 *  2. mprotect(2) the pages read-write-execute, store, and restore the
 *     pages' original protection, read from /proc/self/maps. RWX, not RW:
 *     the page may hold the code that is running this very function (static
 *     link).
 * SWITCHYARD_PATCH_METHOD=procmem|mprotect in the environment forces one.
 *
 * All state here is protected by the patch lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

enum poke_method { METHOD_AUTO, METHOD_PROCMEM, METHOD_MPROTECT };

static int method = -1;
static int mem_fd = -1;
static pid_t mem_fd_pid;
static struct switchyard_stats counters;

static enum poke_method get_method(void)
{
	if (method < 0) {
		const char *s = getenv("SWITCHYARD_PATCH_METHOD");

		method = METHOD_AUTO;
		if (s && !strcmp(s, "procmem"))
			method = METHOD_PROCMEM;
		else if (s && !strcmp(s, "mprotect"))
			method = METHOD_MPROTECT;
	}
	return (enum poke_method)method;
}

static uintptr_t page_size(void)
{
	static uintptr_t ps;

	if (!ps)
		ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	return ps;
}

void sy_poke_init(struct sy_poke_batch *b)
{
	memset(b, 0, sizeof(*b));
}

void sy_poke_fini(struct sy_poke_batch *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static int verify(const struct sy_poke *p)
{
	char want[3 * SY_ARCH_MAX_INSN + 1], found[3 * SY_ARCH_MAX_INSN + 1];
	const uint8_t *code = (const uint8_t *)p->addr;
	unsigned i;

	for (i = 0; i < p->len && code[i] == p->old[i]; i++)
		;
	if (i == p->len)
		return 0;
	sy_hex(want, sizeof(want), p->old, p->len);
	sy_hex(found, sizeof(found), (const uint8_t *)p->addr, p->len);
	sy_log(SWITCHYARD_LOG_ERROR,
	       "refusing to patch site %p: expected [%s], found [%s]; "
	       "nothing written",
	       (void *)p->addr, want, found);
	return -EFAULT;
}

int sy_poke_reserve(struct sy_poke_batch *b, size_t n)
{
	struct sy_poke *v;

	if (n <= b->cap)
		return 0;
	v = realloc(b->v, n * sizeof(*v));
	if (!v)
		return b->err = -ENOMEM;
	b->v = v;
	b->cap = n;
	return 0;
}

int sy_poke_add(struct sy_poke_batch *b, uintptr_t addr, const uint8_t *old,
		const uint8_t *new_, unsigned len)
{
	struct sy_poke *p;

	if (b->err)
		return b->err;
	if (len == 0 || len > SY_ARCH_MAX_INSN)
		return b->err = -EINVAL;
	if (b->n == b->cap && sy_poke_reserve(b, b->cap ? 2 * b->cap : 16))
		return b->err;
	p = &b->v[b->n++];
	p->addr = addr;
	p->len = (uint8_t)len;
	memcpy(p->old, old, len);
	memcpy(p->new_, new_, len);
	return 0;
}

static int cmp_poke(const void *a, const void *b)
{
	uintptr_t x = ((const struct sy_poke *)a)->addr;
	uintptr_t y = ((const struct sy_poke *)b)->addr;

	return x < y ? -1 : x > y;
}

/* ---- write path 1: /proc/self/mem ---------------------------------------- */

static int mem_open(void)
{
	pid_t pid = getpid();

	/* A descriptor inherited across fork() still names the parent's
	 * memory: writing through it would patch the parent. */
	if (mem_fd >= 0 && mem_fd_pid != pid) {
		close(mem_fd);
		mem_fd = -1;
	}
	if (mem_fd < 0) {
		mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		if (mem_fd < 0)
			return -errno;
		mem_fd_pid = pid;
	}
	return 0;
}

static int write_procmem(uintptr_t addr, const uint8_t *buf, size_t len)
{
	int r = mem_open();

	if (r)
		return r;
	counters.write_calls++;
	ssize_t n = pwrite(mem_fd, buf, len, (off_t)addr);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EIO;
}

/* ---- write path 2: mprotect window ---------------------------------------- */

/* Protection of the mapping holding addr, from /proc/self/maps. */
static int prot_of(uintptr_t addr, int *prot)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (addr < lo || addr >= hi)
			continue;
		*prot = (perms[0] == 'r' ? PROT_READ : 0) |
			(perms[1] == 'w' ? PROT_WRITE : 0) |
			(perms[2] == 'x' ? PROT_EXEC : 0);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static int write_mprotect(uintptr_t addr, const uint8_t *buf, size_t len)
{
	uintptr_t ps = page_size();
	uintptr_t lo = addr & ~(ps - 1);
	uintptr_t hi = (addr + len + ps - 1) & ~(ps - 1);
	int prot, r;

	/* A run never crosses two mappings with different protections in
	 * practice (it lies within one object's text); checking both ends
	 * catches the exception. */
	r = prot_of(addr, &prot);
	if (!r) {
		int prot2;

		r = prot_of(addr + len - 1, &prot2);
		if (!r && prot2 != prot)
			r = -EINVAL;
	}
	if (r)
		return r;
	counters.write_calls++;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	memcpy((void *)addr, buf, len);
	if (mprotect((void *)lo, hi - lo, prot)) {
		/* The write happened; failing to drop W now would leave a
		 * W+X mapping behind, which must not happen silently. */
		sy_log(SWITCHYARD_LOG_ERROR,
		       "could not restore protection of %p..%p: %s",
		       (void *)lo, (void *)hi, strerror(errno));
		return -errno;
	}
	return 0;
}

static int write_run(uintptr_t addr, const uint8_t *buf, size_t len)
{
	enum poke_method m = get_method();
	int r = -EPERM;

	if (m != METHOD_MPROTECT) {
		r = write_procmem(addr, buf, len);
		if (!r || m == METHOD_PROCMEM)
			return r;
	}
	return write_mprotect(addr, buf, len);
}

/*
 * Write pokes [i, j) as one run: the span from the first byte of the first
 * to the last byte of the last, with the bytes in between copied from
 * memory as they are (nothing else writes code while we hold the patch
 * lock). Pokes join a run while the gap to the next is under a page, so a
 * run never covers a page without a site.
 */
static int write_span(const struct sy_poke *v, size_t i, size_t j, bool undo)
{
	uintptr_t lo = v[i].addr, hi = v[j - 1].addr + v[j - 1].len;
	uint8_t stackbuf[256];
	uint8_t *buf = stackbuf;
	int r;

	if (hi - lo > sizeof(stackbuf)) {
		buf = malloc(hi - lo);
		if (!buf)
			return -ENOMEM;
	}
	memcpy(buf, (const void *)lo, hi - lo);
	for (size_t k = i; k < j; k++)
		memcpy(buf + (v[k].addr - lo), undo ? v[k].old : v[k].new_,
		       v[k].len);
	r = write_run(lo, buf, hi - lo);
	if (buf != stackbuf)
		free(buf);
	return r;
}

/* End of the run that starts at poke i (pokes are sorted by address). */
static size_t run_end(const struct sy_poke *v, size_t i, size_t n)
{
	uintptr_t ps = page_size();

	for (i++; i < n; i++)
		if (v[i].addr - (v[i - 1].addr + v[i - 1].len) >= ps)
			break;
	return i;
}

int sy_poke_commit(struct sy_poke_batch *b)
{
	size_t i, j, done;
	int r = b->err;

	if (r || b->n == 0)
		return r;
	for (i = 1; i < b->n && b->v[i - 1].addr <= b->v[i].addr; i++)
		;
	if (i < b->n)
		qsort(b->v, b->n, sizeof(*b->v), cmp_poke);
	/* Verify the whole batch before the first write: a batch is
	 * all-or-nothing. Overlapping pokes would be a registry bug. */
	for (i = 0; i < b->n; i++) {
		if (i && b->v[i].addr < b->v[i - 1].addr + b->v[i - 1].len)
			return -EINVAL;
		r = verify(&b->v[i]);
		if (r)
			return r;
	}
	for (i = 0; i < b->n; i = j) {
		j = run_end(b->v, i, b->n);
		r = write_span(b->v, i, j, false);
		if (r)
			goto undo;
	}
	counters.patch_batches++;
	counters.patched_sites += b->n;
	counters.sync_calls++;
	/* A failed sync leaves correct code behind (every byte was written by
	 * this thread); only other threads may run the old bytes a while
	 * longer. Until [2/8], that is reported, not undone. */
	r = sy_arch_sync_cores();
	if (r && r != -ENOSYS)
		sy_log(SWITCHYARD_LOG_WARN, "membarrier failed: %s",
		       strerror(-r));
	return 0;

undo:
	done = i;
	sy_log(SWITCHYARD_LOG_ERROR, "writing code at %p failed: %s; undoing",
	       (void *)b->v[i].addr, strerror(-r));
	for (i = 0; i < done; i = j) {
		j = run_end(b->v, i, done);
		if (write_span(b->v, i, j, true))
			sy_log(SWITCHYARD_LOG_ERROR,
			       "undo at %p failed: code is inconsistent",
			       (void *)b->v[i].addr);
	}
	sy_arch_sync_cores();
	return r;
}

void sy_poke_stats(struct switchyard_stats *st)
{
	st->patch_batches = counters.patch_batches;
	st->patched_sites = counters.patched_sites;
	st->sync_calls = counters.sync_calls;
	st->write_calls = counters.write_calls;
}
