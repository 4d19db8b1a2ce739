/* SPDX-License-Identifier: MIT */
/*
 * libsc_plugin.c - a plugin (opened with dlopen by test_sc_dlclose.c) with
 * two static call sites: one calls a static call the plugin defines (a near
 * target: a patched `call rel32`), one a static call the program defines (a
 * far target, usually: the detour). Both arm the calling thread's rseq
 * area with a descriptor of the plugin's sites.
 *
 * For the negative control it also holds an rseq_cs descriptor of its own,
 * in its data: what a library that kept its descriptors inside the object
 * would leave behind. It is valid while the plugin is loaded (version 0,
 * an empty section, an abort handler preceded by the rseq signature glibc
 * registers), so that only the unloading can make the kernel refuse it.
 */
#include <linux/rseq.h>
#include <stdint.h>

#include <switchyard/static_call.h>

static int plug_impl(int x)
{
	return x + 1000;
}

DEFINE_STATIC_CALL(sc_plug, plug_impl);

int main_impl(int x);
DECLARE_STATIC_CALL(sc_main, main_impl);

int plug_call_own(int x)
{
	return static_call(sc_plug)(x);
}

int plug_call_main(int x)
{
	return static_call(sc_main)(x);
}

/* The signature glibc registers (RSEQ_SIG on x86), then an abort handler
 * that is never run (the section is empty). */
__asm__(".pushsection .text\n\t"
	".globl plug_ctl_abort\n\t"
	".hidden plug_ctl_abort\n\t"
	".long 0x53053053\n"
	"plug_ctl_abort:\n\t"
	"ud2\n\t"
	".popsection");
extern const char plug_ctl_abort[] __attribute__((visibility("hidden")));

struct rseq_cs plug_ctl_desc;

/* Fill plug_ctl_desc (its addresses are known at run time only) and
 * return it. */
struct rseq_cs *plug_ctl_descriptor(void)
{
	plug_ctl_desc.version = 0;
	plug_ctl_desc.flags = 0;
	plug_ctl_desc.start_ip = (uintptr_t)plug_call_own;
	plug_ctl_desc.post_commit_offset = 0;
	plug_ctl_desc.abort_ip = (uintptr_t)plug_ctl_abort;
	return &plug_ctl_desc;
}
