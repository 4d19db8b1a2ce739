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

static int verify(const struct sy_poke_desc *d)
{
	char want[3 * SY_ARCH_MAX_INSN + 1], found[3 * SY_ARCH_MAX_INSN + 1];
	const uint8_t *code = (const uint8_t *)d->addr;
	unsigned i;

	for (i = 0; i < d->len && code[i] == d->old[i]; i++)
		;
	if (i == d->len)
		return 0;
	sy_hex(want, sizeof(want), d->old, d->len);
	sy_hex(found, sizeof(found), code, d->len);
	sy_log(SWITCHYARD_LOG_ERROR,
	       "refusing to patch site %p: expected [%s], found [%s]; "
	       "nothing written",
	       (void *)d->addr, want, found);
	return -EFAULT;
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

/*
 * Write len bytes at addr through /proc/self/mem: one pwrite(2). A call
 * costs about a microsecond whatever its size up to a few pages, so the
 * engine writes chunks, not sites. (pwritev would not help: /proc/<pid>/mem
 * has no write_iter, so the kernel loops over the segments, one call each.)
 */
static int write_procmem(uintptr_t addr, const uint8_t *buf, size_t len)
{
	int r = mem_open();
	ssize_t n;

	if (r)
		return r;
	counters.write_calls++;
	n = pwrite(mem_fd, buf, len, (off_t)addr);
	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EIO;
}

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

/* Write len bytes at addr by opening a read-write-execute window over
 * their pages, and restoring the pages' protection after. */
static int write_mprotect(uintptr_t addr, const uint8_t *buf, size_t len)
{
	uintptr_t ps = page_size();
	uintptr_t lo = addr & ~(ps - 1), hi = (addr + len + ps - 1) & ~(ps - 1);
	int prot, prot2, r;

	/* A chunk lies within one object's text; check that both ends share
	 * one protection, which the restore below assumes. */
	r = prot_of(addr, &prot);
	if (!r)
		r = prot_of(addr + len - 1, &prot2);
	if (!r && prot2 != prot)
		r = -EINVAL;
	if (r)
		return r;
	counters.write_calls++;
	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	memcpy((void *)addr, buf, len);
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

static int write_code(uintptr_t addr, const uint8_t *buf, size_t len)
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
 * Chunks: a copy of a range of code [lo, hi) with changes applied, written
 * back in one call (the bytes between sites are written back unchanged:
 * nothing else writes code while we hold the patch lock). A change joins
 * the open chunk when it lies after it, within CHUNK bytes of its start and
 * less than a page after its end, so that no page without a change is ever
 * written.
 */
#define CHUNK 65536
static uint8_t chunk[CHUNK];	/* patch lock held */

struct chunker {
	uintptr_t lo, hi;	/* hi == lo: empty */
};

static int chunk_flush(struct chunker *c)
{
	int r = 0;

	if (c->hi > c->lo)
		r = write_code(c->lo, chunk, c->hi - c->lo);
	c->lo = c->hi = 0;
	return r;
}

static bool chunk_fits(const struct chunker *c, uintptr_t addr, unsigned len)
{
	return addr >= c->hi && addr + len - c->lo <= CHUNK &&
	       addr - c->hi < page_size();
}

static void chunk_put(struct chunker *c, uintptr_t addr, const uint8_t *bytes,
		      unsigned len)
{
	if (c->hi == c->lo)
		c->lo = c->hi = addr;
	memcpy(chunk + (c->hi - c->lo), (const void *)c->hi, addr - c->hi);
	memcpy(chunk + (addr - c->lo), bytes, len);
	c->hi = addr + len;
}

/*
 * Write changes [0, end) of src: the new bytes, or the old ones to undo.
 * On error, *written_to is the end of the chunk that failed: changes
 * [0, *written_to) may have been written, the others were not.
 */
static int write_pass(const struct sy_poke_src *src, size_t end, bool undo,
		      size_t *written_to)
{
	struct chunker c = { 0, 0 };
	struct sy_poke_desc d;
	int r;

	for (size_t i = 0; i < end; i++) {
		if (!src->get(src->ctx, i, &d))
			continue;
		if (c.hi > c.lo && !chunk_fits(&c, d.addr, d.len)) {
			r = chunk_flush(&c);
			if (r) {
				*written_to = i;
				return r;
			}
		}
		chunk_put(&c, d.addr, undo ? d.old : d.new_, d.len);
	}
	r = chunk_flush(&c);
	if (r)
		*written_to = end;
	return r;
}

int sy_poke_apply(const struct sy_poke_src *src)
{
	struct sy_poke_desc d;
	size_t i, changes = 0, written_to = 0;
	int r;

	/* Verify every change before the first write: all or nothing. */
	for (i = 0; i < src->n; i++) {
		if (!src->get(src->ctx, i, &d))
			continue;
		r = verify(&d);
		if (r)
			return r;
		changes++;
	}
	if (!changes)
		return 0;
	r = write_pass(src, src->n, false, &written_to);
	if (r) {
		size_t dummy;

		sy_log(SWITCHYARD_LOG_ERROR, "writing code failed: %s; undoing",
		       strerror(-r));
		if (write_pass(src, written_to, true, &dummy))
			sy_log(SWITCHYARD_LOG_ERROR,
			       "undo failed too: code is inconsistent");
		sy_arch_sync_cores();
		return r;
	}
	counters.patch_batches++;
	counters.patched_sites += changes;
	counters.sync_calls++;
	/* A failed sync leaves correct code behind (every byte is written);
	 * only other threads may run the old bytes a while longer. Until
	 * [2/8] that is reported, not undone. */
	r = sy_arch_sync_cores();
	if (r && r != -ENOSYS)
		sy_log(SWITCHYARD_LOG_WARN, "membarrier failed: %s",
		       strerror(-r));
	return 0;
}

void sy_poke_stats(struct switchyard_stats *st)
{
	st->patch_batches = counters.patch_batches;
	st->patched_sites = counters.patched_sites;
	st->sync_calls = counters.sync_calls;
	st->write_calls = counters.write_calls;
}
