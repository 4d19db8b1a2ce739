/* SPDX-License-Identifier: MIT */
/*
 * flip.c - a static key flipped at run time, and the bytes of its site
 * before and after.
 */
#include <stdio.h>
#include <string.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(tracing);

static const unsigned char *site_addr;	/* found from the site table */

__attribute__((noinline)) static int handle(int x)
{
	if (static_branch_unlikely(&tracing))
		printf("  trace: handle(%d)\n", x);
	return x * 2;
}

/* The table of sites of this executable (see doc/FORMAT.md). */
struct entry { int code, target; unsigned long key; };
extern struct entry __start_sy_jump_entries[] __attribute__((visibility("hidden")));
extern struct entry __stop_sy_jump_entries[] __attribute__((visibility("hidden")));

static void show(const char *when)
{
	int len = site_addr[0] == 0xa8 || site_addr[0] == 0xeb ? 2 : 5;

	printf("%-9s key %-8s site %p:", when,
	       static_key_enabled(&tracing) ? "enabled" : "disabled",
	       (const void *)site_addr);
	for (int i = 0; i < len; i++)
		printf(" %02x", site_addr[i]);
	printf("   (%s)\n", site_addr[0] == 0xeb ? "jmp rel8: take the branch" :
			    site_addr[0] == 0xe9 ? "jmp rel32: take the branch" :
			    site_addr[0] == 0xa8 ? "test al,imm8: fall through" :
			    "test eax,imm32: fall through");
}

static int print_site(const struct switchyard_site_info *s, void *arg)
{
	(void)arg;
	printf("  site %p  %s+%zu  %s:%u  %d bytes, %s\n", s->addr,
	       s->function ? s->function : "?", s->offset,
	       s->file ? s->file : "?", s->line, s->length,
	       s->jumps ? "jumps" : "falls through");
	return 0;
}

static int print_key(const struct switchyard_key_info *k, void *arg)
{
	(void)arg;
	printf("key %s (%s): %s, count %d, %zu site%s\n", k->name, k->object,
	       k->enabled ? "enabled" : "disabled", k->count, k->sites,
	       k->sites == 1 ? "" : "s");
	return switchyard_for_each_site(k->key, print_site, NULL);
}

int main(void)
{
	for (struct entry *e = __start_sy_jump_entries; e < __stop_sy_jump_entries; e++)
		if ((e->key & ~3ul) == (unsigned long)&tracing.key)
			site_addr = (const unsigned char *)&e->code + e->code;
	if (!site_addr) {
		printf("no site found (built with SWITCHYARD_NO_PATCHING?)\n");
		return 1;
	}
	show("start");
	handle(1);
	static_branch_enable(&tracing);
	show("enable");
	handle(2);
	static_branch_disable(&tracing);
	show("disable");
	handle(3);
	printf("\nwhat the registry knows (switchyard_for_each_key/site):\n");
	return switchyard_for_each_key(print_key, NULL) ? 1 : 0;
}
