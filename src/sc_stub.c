/* SPDX-License-Identifier: MIT */
/*
 * sc_stub.c - stubs for static call targets beyond a site's reach.
 *
 * A call instruction reaches +-2 GiB on x86-64 (`call rel32`), +-128 MiB
 * on AArch64 (BL); a program's executable and its shared libraries usually
 * lie farther apart. A site whose target is out of reach calls a stub
 * within reach instead, which jumps to the target's address stored in it:
 * `jmp *0(%rip)` + the address on x86-64 (what a PLT entry does, with the
 * address in the stub), `ldr x16, .+8; br x16` + the address on AArch64
 * (arch/<arch>/sy_arch.h, sy_arch_sc_stub()).
 *
 * Stubs live in pages we map next to the sites (within SY_SC_STUB_REACH),
 * filled with SY_SC_STUB_FILL (int3; UDF on AArch64), then made
 * read+execute (never writable and executable at once). A stub is written
 * once, through the poke engine (the one writer of code), before any site
 * refers to it, and never changed: a new target gets a new stub. On
 * x86-64 nothing executes a stub's bytes before a site's payload is
 * rewritten to call it, and that write is followed by the update's
 * SYNC_CORE (step 3 of the protocol), so the stub itself needs no sync; on
 * AArch64 a site's BL may be seen by another core as soon as it is
 * written, so the stub is synced before (SY_SC_STUB_SYNC).
 * Stubs are never freed (their number is the number of distinct far
 * targets per region, small); a stub for an address that a
 * dlclose()d library held still jumps to whatever that address holds,
 * which is what a site would call directly.
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#ifdef SY_SC_STUB_LEN

#define STUB_PAGE 4096
#define STUB_REACH SY_SC_STUB_REACH	/* within a site's call reach */

struct stub_page {
	uintptr_t base;
	size_t used;
};

static struct stub_page *pages;	/* patch lock */
static size_t n_pages;
static struct { uintptr_t addr, target; } *stubs;
static size_t n_stubs, cap_stubs;

static bool near(uintptr_t a, uintptr_t b)
{
	return (a > b ? a - b : b - a) < STUB_REACH;
}

uintptr_t sy_sc_stub_find(uintptr_t from, uintptr_t target)
{
	for (size_t i = 0; i < n_stubs; i++)
		if (stubs[i].target == target && near(stubs[i].addr, from))
			return stubs[i].addr;
	return 0;
}

/* A new page of int3 near from, read+execute; 0 if none could be had. */
static uintptr_t page_near(uintptr_t from)
{
	for (uintptr_t d = SY_SC_STUB_STEP; d < STUB_REACH - STUB_PAGE;
	     d += SY_SC_STUB_STEP) {
		for (int up = 0; up < 2; up++) {
			uintptr_t hint = ((up ? from + d : from - d) &
					  ~(uintptr_t)(STUB_PAGE - 1));
			void *p;

			if (!up && from < d)
				continue;
			p = mmap((void *)hint, STUB_PAGE, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS |
				 MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p != hint) {	/* an old kernel: a hint */
				munmap(p, STUB_PAGE);
				continue;
			}
			memset(p, SY_SC_STUB_FILL, STUB_PAGE);
			if (mprotect(p, STUB_PAGE, PROT_READ | PROT_EXEC)) {
				munmap(p, STUB_PAGE);
				return 0;
			}
			return hint;
		}
	}
	return 0;
}

struct stub_src {
	struct sy_poke_desc d;
	bool done;
};

static void stub_rewind(void *ctx)
{
	((struct stub_src *)ctx)->done = false;
}

static bool stub_next(void *ctx, struct sy_poke_desc *d)
{
	struct stub_src *s = ctx;

	if (s->done)
		return false;
	*d = s->d;
	s->done = true;
	return true;
}

/*
 * A stub slot (SY_SC_STUB_LEN bytes) near from, filled with what build
 * makes for its address, through the poke engine; its address in *addr.
 */
int sy_sc_stub_code(uintptr_t from, sy_sc_stub_build build, const void *ctx,
		    const void *key, uintptr_t *addr)
{
	struct stub_page *pg = NULL;
	struct stub_src s;
	struct sy_poke_src src = { stub_rewind, stub_next, &s };
	int r;

	for (size_t i = 0; i < n_pages; i++)
		if (pages[i].used + SY_SC_STUB_LEN <= STUB_PAGE &&
		    near(pages[i].base, from))
			pg = &pages[i];
	if (!pg) {
		void *p = realloc(pages, (n_pages + 1) * sizeof(*pages));
		uintptr_t base;

		if (!p)
			return -ENOMEM;
		pages = p;
		base = page_near(from);
		if (!base)
			return -ENOMEM;
		pg = &pages[n_pages++];
		pg->base = base;
		pg->used = 0;
	}
	*addr = pg->base + pg->used;
	memset(&s, 0, sizeof(s));
	s.d.addr = *addr;
	s.d.len = SY_SC_STUB_LEN;
	s.d.exact = true;
	s.d.key = key;
	memset(s.d.old, SY_SC_STUB_FILL, SY_SC_STUB_LEN);
	build(*addr, s.d.new_, ctx);
	/* x86-64: no sync: nothing can run the stub before a site calls it,
	 * and the write of that call is followed by a sync (file comment);
	 * AArch64 syncs here (SY_SC_STUB_SYNC, arch/aarch64/sy_arch.h) */
	r = SY_SC_STUB_SYNC ? sy_poke_apply(&src) : sy_poke_apply_nosync(&src);
	if (r)
		return r;
	pg->used += SY_SC_STUB_LEN;
	return 0;
}

static void build_jump(uintptr_t addr, uint8_t *out, const void *ctx)
{
	(void)addr;
	sy_arch_sc_stub(*(const uintptr_t *)ctx, out);
}

int sy_sc_stub_make(uintptr_t from, uintptr_t target, const void *key)
{
	uintptr_t addr;
	int r;

	if (sy_sc_stub_find(from, target))
		return 0;
	if (n_stubs == cap_stubs) {
		size_t cap = cap_stubs ? 2 * cap_stubs : 16;
		void *p = realloc(stubs, cap * sizeof(*stubs));

		if (!p)
			return -ENOMEM;
		stubs = p;
		cap_stubs = cap;
	}
	r = sy_sc_stub_code(from, build_jump, &target, key, &addr);
	if (r)
		return r;
	stubs[n_stubs].addr = addr;
	stubs[n_stubs].target = target;
	n_stubs++;
	return 0;
}

#else /* no patched static call sites on this architecture */

uintptr_t sy_sc_stub_find(uintptr_t from, uintptr_t target)
{
	(void)from;
	(void)target;
	return 0;
}

int sy_sc_stub_make(uintptr_t from, uintptr_t target, const void *key)
{
	(void)from;
	(void)target;
	(void)key;
	return -EOPNOTSUPP;
}

int sy_sc_stub_code(uintptr_t from, sy_sc_stub_build build, const void *ctx,
		    const void *key, uintptr_t *addr)
{
	(void)from;
	(void)build;
	(void)ctx;
	(void)key;
	*addr = 0;
	return -EOPNOTSUPP;
}
#endif
