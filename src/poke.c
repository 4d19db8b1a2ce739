/* SPDX-License-Identifier: MIT */
/*
 * poke.c - the poke engine: verify, write and synchronise a batch of code
 * changes.
 *
 * Live safety rests on two rules:
 *  - every change the registry asks for alters one byte per site (the
 *    opcode: see src/arch/x86_64/sy_arch.h), so a thread executing the site
 *    while it is written runs the old or the new instruction;
 *  - after the last write, one core-serialising call (sy_poke_sync()) makes
 *    every thread of the process drop any stale copy before the batch
 *    returns, so every later pass takes the new path.
 *
 * The bytes reach memory through the write paths of poke_write.c
 * (/proc/self/mem, else an mprotect() window), which also holds the sync.
 *
 * Nothing on the change path allocates memory or uses stdio, so a change
 * requested from a signal handler cannot deadlock on a lock held by the
 * code it interrupted (the re-entry into switchyard itself is refused by
 * sy_enter()).
 *
 * All state here is protected by the patch lock.
 */
#include <errno.h>
#include <string.h>

#include "poke_impl.h"

/* patch_batches, patched_sites, undone_batches: the write paths and the
 * sync count the rest (poke_write.c) */
static struct switchyard_stats counters;

/* Out of line: the buffers would cost every verify a stack canary. */
__attribute__((cold, noinline)) static int refuse(const struct sy_poke_desc *d,
						  enum sy_site_check why)
{
	char want[3 * SY_ARCH_MAX_INSN + 1], found[3 * SY_ARCH_MAX_INSN + 1];
	const uint8_t *code = (const uint8_t *)d->addr;

	sy_hex(want, sizeof(want), d->new_, d->len);
	sy_hex(found, sizeof(found), code, d->len);
	if (d->exact) {
		bool trap = false;

		for (unsigned i = 0; i < d->len; i++)
			trap |= sy_arch_is_trap(code + i);
		if (!d->key) {	/* an alternative: what names it */
			sy_report(SWITCHYARD_LOG_ERROR, NULL, d->addr,
				  "%s: refusing to patch site " SY_REPORT_SITE
				  ": expected [%s] or its other form, found "
				  "[%s]%s; nothing written", d->what, want,
				  found, trap ? " (a trap byte may be a "
				  "debugger breakpoint)" : "");
			return -EFAULT;
		}
		sy_report(SWITCHYARD_LOG_ERROR, d->key, d->addr,
			  "%s " SY_REPORT_KEY ": refusing to patch "
			  "site " SY_REPORT_SITE ": expected [%s] or its other "
			  "form, found [%s]%s; nothing written",
			  d->what ? d->what : "static call", want, found,
			  trap ? " (a trap byte may be a debugger breakpoint)"
			       : "");
		return -EFAULT;
	}
	if (why == SY_SITE_TRAPPED) {
		sy_report(SWITCHYARD_LOG_ERROR, d->key, d->addr,
			  "static key " SY_REPORT_KEY ": cannot change site "
			  SY_REPORT_SITE ": a debugger breakpoint sits on it "
			  "[%s] and the debugger will restore the opcode that "
			  "falls through whatever is written now; delete the "
			  "breakpoint (or set it after the site) and retry; "
			  "nothing written", found);
		return -EBUSY;
	}
	sy_report(SWITCHYARD_LOG_ERROR, d->key, d->addr,
		  "static key " SY_REPORT_KEY ": refusing to patch site "
		  SY_REPORT_SITE ": expected [%s] or its other form, found "
		  "[%s]%s; nothing written", want, found,
		  sy_arch_is_trap(code) ?
		  " (a debugger breakpoint: " SY_ARCH_TRAP_NAME ")" : "");
	return -EFAULT;
}

/*
 * Chunks: a copy of a range of code [lo, hi) with changes applied, written
 * back in one call (the bytes between sites are written back unchanged:
 * nothing else writes code while we hold the patch lock). A change joins
 * the open chunk when it lies after it, within CHUNK bytes of its start and
 * less than a page after its end, so that no page without a change is ever
 * written.
 *
 * Why writing a whole chunk is safe while other threads execute it: in the
 * chunk only the changed bytes differ from what is in memory, and the
 * registry's changes alter one byte per site (the opcode; Intel SDM vol. 3
 * 8.1.3 and src/arch/x86_64/sy_arch.h): whatever width the copy uses, a
 * processor fetching an instruction sees each byte either old or new, the
 * unchanged bytes are the same in both, so it decodes the old or the new
 * instruction. Rewriting a byte with its own value changes no instruction
 * (the processor may discard prefetched code, which costs time, not
 * correctness). A multi-byte change (a future user of this engine) must not
 * rely on this: it needs its own protocol.
 */
#define CHUNK 65536
static uint8_t chunk[CHUNK + 16];	/* patch lock held; +16: see chunk_put */
/*
 * What memory held when the chunk was copied: a debugger may plant or
 * remove a breakpoint in the copied range (another function's, between
 * two sites) before the chunk is written back, and writing back its stale
 * int3 (or the stale byte under it) would plant a breakpoint the debugger
 * forgot, or drop one it set. So just before the write, bytes that we do
 * not change and that memory no longer holds are taken afresh. What
 * remains is the few instructions between that check and the system call.
 */
static uint8_t chunk_orig[CHUNK];	/* patch lock held */

/*
 * Copy code into the chunk. Whole pages of it: ASan must not see this as an
 * overflow when a "site" lies in instrumented data (tests make such fake
 * sites), so the copy is done here, uninstrumented, 8 bytes at a time
 * (fixed-size memcpy compiles to plain moves, not a call to the
 * interceptor).
 */
#if defined(__SANITIZE_ADDRESS__)		/* gcc */
#define SY_ASAN 1
#elif defined(__has_feature)			/* clang */
#if __has_feature(address_sanitizer)
#define SY_ASAN 1
#endif
#endif
__attribute__((no_sanitize("address")))
static void copy_code(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t i = 0;

#ifndef SY_ASAN
	memcpy(dst, src, len);	/* the fast path: libc's vector copy */
	return;
#endif
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		__builtin_memcpy(&w, src + i, 8);
		__builtin_memcpy(dst + i, &w, 8);
	}
	for (; i < len; i++)
		dst[i] = src[i];
}

struct chunker {
	uintptr_t lo, hi;	/* hi == lo: empty */
	uintptr_t copied;	/* chunk holds the code of [lo, copied) */
	size_t first;		/* ordinal of its first change */
};

/* Where a write pass stopped: the chunk that failed and how much of it was
 * written (the chunks before it were written whole). */
struct write_fail {
	size_t first, last;	/* ordinals of its first and last change */
	uintptr_t lo;
	size_t done;		/* bytes written from lo */
	bool wrote;		/* anything at all, this chunk or before */
};

__attribute__((no_sanitize("address")))
static void refresh_chunk(const struct chunker *c)
{
	const uint8_t *mem = (const uint8_t *)c->lo;
	size_t len = c->hi - c->lo, i = 0;

#ifndef SY_ASAN
	if (!memcmp(mem, chunk_orig, len))	/* the fast path: libc's */
		return;
#endif
	/* word by word (uninstrumented: see copy_code()); the byte loop
	 * only where a word differs, which is almost never */
	for (; i + 8 <= len; i += 8) {
		uint64_t a, b;

		__builtin_memcpy(&a, mem + i, 8);
		__builtin_memcpy(&b, chunk_orig + i, 8);
		if (a == b)
			continue;
		for (size_t j = i; j < i + 8; j++)
			if (mem[j] != chunk_orig[j] && chunk[j] == chunk_orig[j])
				chunk[j] = mem[j];
	}
	for (; i < len; i++)
		if (mem[i] != chunk_orig[i] && chunk[i] == chunk_orig[i])
			chunk[i] = mem[i];
}

static int chunk_flush(struct chunker *c, size_t last, struct write_fail *f)
{
	size_t done;
	int r = 0;

	if (c->hi > c->lo) {
		refresh_chunk(c);
		r = sy_poke_write(c->lo, chunk, c->hi - c->lo, &done);
		if (r)
			*f = (struct write_fail){ c->first, last, c->lo, done, false };
	}
	c->lo = c->hi = c->copied = 0;
	return r;
}

static bool chunk_fits(const struct chunker *c, uintptr_t addr, unsigned len)
{
	return addr >= c->hi && addr + len - c->lo <= CHUNK &&
	       addr - c->hi < sy_poke_page_size();
}

/*
 * Add a change to the open chunk. The code around it is copied COPY_STEP
 * bytes at a time (up to the next COPY_STEP boundary after the change's
 * last byte: in the same page, which is mapped since the site is), so that
 * a dense run of sites costs a few large copies rather than one small copy
 * per site, and a lone site does not pay for a page (twice: the chunk and
 * chunk_orig; a whole page cost a 1-site change 0.4 us, cold cache lines).
 */
#define COPY_STEP 512
static inline void chunk_put(struct chunker *c, size_t ord, uintptr_t addr,
			     const uint8_t *bytes, unsigned len)
{
	uintptr_t end = addr + len;

	if (c->hi == c->lo) {
		c->lo = c->hi = c->copied = addr;
		c->first = ord;
	}
	if (end > c->copied) {
		uintptr_t to = (end + COPY_STEP - 1) & ~(uintptr_t)(COPY_STEP - 1);

		if (to - c->lo > CHUNK)
			to = c->lo + CHUNK;
		copy_code(chunk + (c->copied - c->lo),
			  (const uint8_t *)c->copied, to - c->copied);
		memcpy(chunk_orig + (c->copied - c->lo),
		       chunk + (c->copied - c->lo), to - c->copied);
		c->copied = to;
	}
	if (len <= 8) {
		/* Merge len bytes into an 8-byte word: a few instructions
		 * instead of a byte loop (the bytes beyond len keep what the
		 * chunk holds; the buffer's 16 spare bytes make the word
		 * access safe at its end, and `bytes` has 8 readable). */
		uint64_t w, b, mask = len == 8 ? ~0ull : (1ull << (8 * len)) - 1;

		memcpy(&w, chunk + (addr - c->lo), 8);
		memcpy(&b, bytes, 8);
		w = (w & ~mask) | (b & mask);
		memcpy(chunk + (addr - c->lo), &w, 8);
	} else {
		memcpy(chunk + (addr - c->lo), bytes, len);
	}
	c->hi = end;
}

/*
 * A change whose site already holds its new bytes is not written (the
 * registry asks for the form a site must have; a site registered but never
 * brought to its key's state, or a batch whose undo failed, leaves sites
 * that already have it). The verify pass records those per change, by
 * ordinal, so that the write pass skips them and an undo never "restores"
 * them to bytes they did not hold. Static (the change path does not
 * allocate): 1M changes, 128 KiB of bss touched only as far as batches
 * reach; a batch beyond that has every site verified strictly against its
 * old bytes.
 */
#define SKIP_CAP (1u << 20)
static uint64_t skip_bits[SKIP_CAP / 64];	/* patch lock held */

static inline void set_skip(size_t i, bool skip)
{
	uint64_t bit = 1ull << (i % 64);

	if (skip)
		skip_bits[i / 64] |= bit;
	else
		skip_bits[i / 64] &= ~bit;
}

static inline bool skipped(size_t i)
{
	return i < SKIP_CAP && (skip_bits[i / 64] >> (i % 64) & 1);
}

/*
 * The verify pass keeps what the write pass needs (ordinal, address and new
 * bytes) of up to WCACHE changes, so that the write pass of a batch that
 * fits need not describe every change a second time (describing is most of
 * the cost of a 10,000-site change). Static, not allocated: the change path
 * must not allocate (see the top of this file). 384 KiB of bss, touched
 * only as far as batches reach.
 */
#define WCACHE 16384
#define WCACHE_LEN 7
static struct {
	uintptr_t addr;
	uint8_t new_[8];	/* 8 readable bytes for chunk_put() */
	uint32_t ord;
	uint8_t len;
} wcache[WCACHE];	/* patch lock held */

/*
 * Write the changes whose ordinal is below `end` and that were not skipped:
 * from the verify pass's cache of `ncached` entries when it holds them all
 * (`cached`), else from src: the new bytes, or the old ones to undo (undo
 * always reads src, and with `f` set writes only what the failed pass
 * wrote: the chunks before the failed one, and the part of that one that
 * reached memory). On error, *fail says where the pass stopped.
 */
static int write_pass(const struct sy_poke_src *src, bool cached,
		      size_t ncached, size_t end, const struct write_fail *undo,
		      struct write_fail *fail)
{
	struct chunker c = { 0, 0, 0, 0 };
	struct sy_poke_desc d;
	size_t ord = 0, last = 0, flushed = 0;
	int r;

	if (!cached)
		src->rewind(src->ctx);
	for (size_t i = 0;; i++) {
		uintptr_t addr;
		const uint8_t *bytes;
		unsigned len;

		if (cached) {
			if (i == ncached)
				break;
			ord = wcache[i].ord;
			addr = wcache[i].addr;
			bytes = wcache[i].new_;
			len = wcache[i].len;
		} else {
			if (i >= end || !src->next(src->ctx, &d))
				break;
			ord = i;
			if (skipped(ord))
				continue;
			addr = d.addr;
			bytes = undo ? d.old : d.new_;
			len = d.len;
			if (undo && ord >= undo->first &&
			    addr + len > undo->lo + undo->done)
				continue;	/* not reached by the write */
		}
		if (c.hi > c.lo && !chunk_fits(&c, addr, len)) {
			r = chunk_flush(&c, last, fail);
			if (r)
				goto failed;
			flushed++;
		}
		chunk_put(&c, ord, addr, bytes, len);
		last = ord;
	}
	r = chunk_flush(&c, last, fail);
	if (!r)
		return 0;
failed:
	fail->wrote = flushed || fail->done;
	return r;
}

/*
 * Changes that are not "new over old": the rel of a site under a
 * debugger's breakpoint (FIX), or a step of a non-canonical site back to
 * canonical (PREP); see sy_arch_site_check(). They exist only where a
 * debugger has (or had) a breakpoint on a site: a handful. Each is written
 * on its own, never merged into a chunk: a chunk would write back the
 * int3 next to it, which the debugger may remove meanwhile. Patch lock
 * held.
 */
#define FIX_CAP 64
struct fix {
	uintptr_t addr;
	unsigned len;
	uint8_t bytes[SY_ARCH_MAX_INSN], old[SY_ARCH_MAX_INSN];
};
static struct fix fixes[FIX_CAP], preps[FIX_CAP];

static int fix_add(struct fix *v, size_t *n, const struct sy_poke_desc *d,
		   const struct sy_arch_fix *fx)
{
	struct fix *f;

	if (*n == FIX_CAP)
		return -ENOSPC;
	f = &v[(*n)++];
	f->addr = d->addr + fx->off;
	f->len = fx->len;
	memcpy(f->bytes, fx->bytes, fx->len);
	memcpy(f->old, (const uint8_t *)f->addr, fx->len);
	return 0;
}

/*
 * An exact change with a debugger's breakpoint inside (d->bp_mask): the
 * bytes that hold int3 at a masked position are the debugger's (its
 * shadow is old[i], which is new[i]: the describer checked), the others
 * must all be old (then the runs between the breakpoints that differ are
 * written as fixes, never the int3 itself: a chunk would write it back,
 * and the debugger may have removed it meanwhile) or all new (nothing to
 * do). Returns SY_SITE_OLD (no int3 found: an ordinary change), _NEW,
 * _FIX (added to fixes), or _FOREIGN.
 */
static enum sy_site_check exact_under_bp(const struct sy_poke_desc *d,
					 size_t *nfix, int *err)
{
	const uint8_t *mem = (const uint8_t *)d->addr;
	bool is_old = true, is_new = true, wild = false;

	*err = 0;
	for (unsigned i = 0; i < d->len; i++) {
		if ((d->bp_mask >> i & 1) && sy_arch_bp_byte(mem[i]) &&
		    !sy_arch_bp_byte(d->old[i])) {
			wild = true;
			continue;
		}
		is_old &= mem[i] == d->old[i];
		is_new &= mem[i] == d->new_[i];
	}
	if (is_new)
		return SY_SITE_NEW;
	if (!is_old)
		return SY_SITE_FOREIGN;
	if (!wild)
		return SY_SITE_OLD;
	for (unsigned i = 0; i < d->len;) {
		unsigned j;

		if ((d->bp_mask >> i & 1) && sy_arch_bp_byte(mem[i])) {
			i++;
			continue;
		}
		for (j = i; j < d->len && !((d->bp_mask >> j & 1) &&
					    sy_arch_bp_byte(mem[j])); j++)
			;
		/* [i, j): a run between breakpoints; write what differs */
		while (i < j && d->old[i] == d->new_[i])
			i++;
		if (i < j) {
			unsigned k = j;
			struct fix *f;

			while (d->old[k - 1] == d->new_[k - 1])
				k--;
			if (*nfix == FIX_CAP) {
				*err = -EBUSY;
				return SY_SITE_FIX;
			}
			f = &fixes[(*nfix)++];
			f->addr = d->addr + i;
			f->len = k - i;
			memcpy(f->bytes, d->new_ + i, k - i);
			memcpy(f->old, d->old + i, k - i);
		}
		i = j;
	}
	return SY_SITE_FIX;
}

/* Write fixes [0, n) (bytes, or old to undo); on error *done says how many
 * were written whole. */
static int fix_write(const struct fix *v, size_t n, bool undo, size_t *done)
{
	for (*done = 0; *done < n; (*done)++) {
		const struct fix *f = &v[*done];
		size_t w;
		int r = sy_poke_write(f->addr, undo ? f->old : f->bytes,
				      f->len, &w);

		if (r) {
			if (w && !undo)	/* a part: put it back */
				sy_poke_write(f->addr, f->old, w, &w);
			return r;
		}
	}
	return 0;
}

__attribute__((cold, noinline)) static int too_many(const struct sy_poke_desc *d)
{
	sy_report(SWITCHYARD_LOG_ERROR, d->key, d->addr,
		  "%s " SY_REPORT_KEY ": more than %d sites of one change are "
		  "under debugger breakpoints (at " SY_REPORT_SITE " and "
		  "others); nothing written",
		  !d->exact ? "static key" : d->what ? d->what : "static call",
		  FIX_CAP);
	return -EBUSY;
}

/*
 * The verify pass: classify every change (all or nothing: nothing is
 * written before every site is known good), cache what the write pass
 * needs, collect fixes and preps. Returns the number of changes to write
 * over old bytes, or a negative errno (reported).
 */
static long verify(const struct sy_poke_src *src, size_t *n_out,
		   size_t *nfix, size_t *nprep, bool *cached)
{
	struct sy_poke_desc d;
	struct sy_arch_fix fx;
	size_t n = 0, changes = 0;

	*nfix = *nprep = 0;
	*cached = true;
	src->rewind(src->ctx);
	for (; src->next(src->ctx, &d); n++) {
		enum sy_site_check c;
		bool skip = true;

		if (d.exact && d.bp_mask) {
			int err;

			c = exact_under_bp(&d, nfix, &err);
			if (err)
				return too_many(&d);
			if (c == SY_SITE_FIX && n >= SKIP_CAP)
				return refuse(&d, SY_SITE_FOREIGN);
			if (c == SY_SITE_FIX) {
				set_skip(n, true);	/* written as fixes */
				continue;
			}
		} else if (d.exact)
			c = !memcmp((const void *)d.addr, d.old, d.len) ?
				    SY_SITE_OLD :
			    !memcmp((const void *)d.addr, d.new_, d.len) ?
				    SY_SITE_NEW : SY_SITE_FOREIGN;
		else
			c = sy_arch_site_check((const uint8_t *)d.addr, d.new_,
					       d.len, d.hidden_jump, &fx);

		switch (c) {
		case SY_SITE_OLD:
			skip = false;
			break;
		case SY_SITE_NEW:
			if (n >= SKIP_CAP)	/* cannot be skipped by ordinal */
				return refuse(&d, SY_SITE_FOREIGN);
			break;
		case SY_SITE_FIX:
			if (n >= SKIP_CAP)
				return refuse(&d, SY_SITE_FOREIGN);
			if (fix_add(fixes, nfix, &d, &fx))
				return too_many(&d);
			break;
		case SY_SITE_PREP:
			if (n >= SKIP_CAP)
				return refuse(&d, SY_SITE_FOREIGN);
			/* beyond FIX_CAP: the next round takes the rest */
			fix_add(preps, nprep, &d, &fx);
			break;
		case SY_SITE_TRAPPED:
		case SY_SITE_FOREIGN:
		default:
			return refuse(&d, c);
		}
		if (n < SKIP_CAP)
			set_skip(n, skip);
		if (skip)
			continue;
		if (changes < WCACHE && d.len <= WCACHE_LEN) {
			wcache[changes].addr = d.addr;
			wcache[changes].ord = (uint32_t)n;
			wcache[changes].len = (uint8_t)d.len;
			memcpy(wcache[changes].new_, d.new_, 8);
		} else {
			*cached = false;
		}
		changes++;
	}
	*n_out = n;
	return (long)changes;
}

/*
 * Sites that are not canonical (a debugger's breakpoint was over them at a
 * change) are brought back first, a step at a time, each step keeping the
 * path and followed by a sync, then everything is verified again. At most
 * two steps per site, FIX_CAP sites a round. Returns what verify() returns
 * once no site needs a step (with *n, *nfix and *cached as it left them),
 * or a negative errno (reported; the steps taken changed no path).
 */
static long settle(const struct sy_poke_src *src, size_t *n, size_t *nfix,
		   bool *cached)
{
	size_t nprep = 0, done;
	long changes;
	int r;

	for (unsigned round = 0;; round++) {
		changes = verify(src, n, nfix, &nprep, cached);
		if (changes < 0 || !nprep)
			return changes;
		/* Each round takes every site it lists a step further; only
		 * someone else writing the same code could undo that (a
		 * debugger playing with its shadow bytes, in a loop). */
		if (round == 4096) {
			sy_log(SWITCHYARD_LOG_ERROR, "sites keep changing under "
			       "the change (another writer of code?); the key "
			       "and every site's path are unchanged");
			return -EAGAIN;
		}
		r = fix_write(preps, nprep, false, &done);
		if (done)
			sy_poke_sync();
		if (r) {
			sy_log(SWITCHYARD_LOG_ERROR, "writing code failed: %s; "
			       "nothing changed", strerror(-r));
			return r;
		}
	}
}

/*
 * A write of the batch failed with r: put back what it wrote, that is the
 * part of the write pass that reached memory (fail: NULL when the pass did
 * not run) and fixes [0, nfix), then sync if anything was written at all.
 * Returns r.
 */
__attribute__((cold, noinline)) static int undo(const struct sy_poke_src *src,
						int r,
						const struct write_fail *fail,
						size_t nfix)
{
	bool wrote = (fail && fail->wrote) || nfix;
	struct write_fail dummy;
	size_t done;

	sy_log(SWITCHYARD_LOG_ERROR, "writing code failed: %s; %s",
	       strerror(-r), wrote ? "undoing what was written"
				   : "nothing was written");
	if (fail && fail->wrote &&
	    write_pass(src, false, 0, fail->last + 1, fail, &dummy))
		sy_log(SWITCHYARD_LOG_ERROR,
		       "undo failed too: some sites of this change hold "
		       "their new form; the next change of their key "
		       "completes or reverts them");
	if (nfix)
		fix_write(fixes, nfix, true, &done);
	if (wrote) {
		counters.undone_batches++;
		sy_poke_sync();
	}
	return r;
}

static int poke_apply(const struct sy_poke_src *src, bool sync)
{
	size_t n = 0, nfix = 0, done;
	struct write_fail fail;
	bool cached;
	long changes;
	int r;

	changes = settle(src, &n, &nfix, &cached);
	if (changes < 0)
		return (int)changes;
	if (!changes && !nfix)
		return 0;	/* every site takes its new path already */
	r = fix_write(fixes, nfix, false, &done);
	if (r)
		return undo(src, r, NULL, done);
	r = changes ? write_pass(src, cached, (size_t)changes, n, NULL, &fail)
		    : 0;
	if (r)
		return undo(src, r, &fail, nfix);
	counters.patch_batches++;
	counters.patched_sites += (size_t)changes + nfix;
	if (sync)
		sy_poke_sync();
	return 0;
}

int sy_poke_apply(const struct sy_poke_src *src)
{
	return poke_apply(src, true);
}

int sy_poke_apply_nosync(const struct sy_poke_src *src)
{
	return poke_apply(src, false);
}

void sy_poke_stats(struct switchyard_stats *st)
{
	st->patch_batches = counters.patch_batches;
	st->patched_sites = counters.patched_sites;
	st->undone_batches = counters.undone_batches;
	sy_poke_write_stats(st);
}
