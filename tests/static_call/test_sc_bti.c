/* SPDX-License-Identifier: MIT */
/*
 * test_sc_bti.c - opens libsc_bti.c's module (branch protection, guarded
 * pages: see there) and runs its checks, then its controls in children:
 * an indirect call to a function with no landing pad must die of SIGILL
 * (the pages are guarded: else SKIP, this machine has no BTI), and so
 * must the same function reached through a callee-save site's veneer.
 *
 * The module's executable segments are guarded here with PROT_BTI, as a
 * C library built with branch protection does for an object marked BTI
 * (Debian's does not apply it to dlopen()ed objects).
 */

#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"

#ifndef PROT_BTI
#define PROT_BTI 0x10	/* <asm/mman.h> on arm64 */
#endif

static uintptr_t module_addr;
static int guard_errors, guarded_segments;

static int guard_phdr(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		hi = lo + ph->p_memsz;
		if (module_addr < lo || module_addr >= hi)
			continue;
		lo &= ~(uintptr_t)4095;
		if (mprotect((void *)lo, hi - lo,
			     PROT_READ | PROT_EXEC | PROT_BTI))
			guard_errors++;
		else
			guarded_segments++;
	}
	return 0;
}

/* fn run in a child: its fate, as a signal number or 1000 + status */
static int in_child(long (*fn)(void))
{
	int st;
	pid_t p;

	fflush(stdout);
	p = fork();
	if (p == 0) {
		printf("returned %ld\n", fn());
		fflush(stdout);
		_exit(0);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFSIGNALED(st) ? WTERMSIG(st) : 1000 + WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	int (*run)(void);
	long (*control)(void), (*plain)(void);
	int r;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	run = (int (*)(void))dlsym(h, "bti_run");
	control = (long (*)(void))dlsym(h, "bti_control");
	plain = (long (*)(void))dlsym(h, "bti_plain");
	CHECK(run && control && plain);
	if (!run || !control || !plain)
		return sy_test_done("sc_bti");
	module_addr = (uintptr_t)run;
	dl_iterate_phdr(guard_phdr, NULL);
	printf("guarded %d executable segment(s) of the module, %d "
	       "refused\n", guarded_segments, guard_errors);
	CHECK_EQ(run(), 0);
	/* again: under qemu-user the write path is the mprotect window, and
	 * qemu's /proc/self/smaps (the host's) cannot show the guard for
	 * the library to restore it (on Linux it shows "bt") */
	dl_iterate_phdr(guard_phdr, NULL);
	r = in_child(plain);
	printf("an indirect call to a function with no landing pad: %d "
	       "(SIGILL %d: the pages are guarded)\n", r, SIGILL);
	if (r != SIGILL) {
		printf("SKIP: the module's pages are not guarded (no BTI "
		       "here): the control cannot run\n");
		sy_test_done("sc_bti");
		return 77;
	}
	r = in_child(control);
	printf("control: the same through a veneer: %d (want SIGILL)\n", r);
	CHECK_EQ(r, SIGILL);
	return sy_test_done("sc_bti");
}
