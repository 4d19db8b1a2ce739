/* SPDX-License-Identifier: MIT */
/*
 * flip.c - a static key flipped at run time, and the bytes of its site
 * before and after. Public API only: the site is found with
 * switchyard_for_each_site() (<switchyard/introspect.h>); the x86-64 site
 * forms are described in <switchyard/arch/x86_64.h>.
 */
#include <stdio.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(tracing);

__attribute__((noinline)) static int handle(int x)
{
	if (static_branch_unlikely(&tracing))
		printf("  trace: handle(%d)\n", x);
	return x * 2;
}

/* The first site of a key, as the registry describes it now. */
static int first_site(const struct switchyard_site_info *s, void *arg)
{
	*(struct switchyard_site_info *)arg = *s;
	return 1;	/* stop the walk; the strings are not kept */
}

static void show(const char *when)
{
	struct switchyard_site_info s = { 0 };
	const unsigned char *b;

	if (switchyard_for_each_site(&tracing.key, first_site, &s) != 1)
		return;
	b = s.addr;	/* code is readable: print what the CPU runs */
	printf("%-9s key %-8s site %p:", when,
	       static_key_enabled(&tracing) ? "enabled" : "disabled", s.addr);
	for (int i = 0; i < s.length; i++)
		printf(" %02x", b[i]);
	printf("   (%s)\n", b[0] == 0xeb ? "jmp rel8: take the branch" :
			    b[0] == 0xe9 ? "jmp rel32: take the branch" :
			    b[0] == 0xa8 ? "test al,imm8: fall through" :
			    b[0] == 0xa9 ? "test eax,imm32: fall through" :
			    s.jumps ? "jumps" : "falls through");
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
	struct switchyard_site_info s = { 0 };

	if (switchyard_for_each_site(&tracing.key, first_site, &s) != 1) {
		/* SWITCHYARD_NO_PATCHING, or not x86-64: a load and a test */
		printf("no site registered (built with SWITCHYARD_NO_PATCHING?)\n");
		return 1;
	}
	show("start");
	handle(1);
	if (static_branch_enable(&tracing))
		return 1;
	show("enable");
	handle(2);
	if (static_branch_disable(&tracing))
		return 1;
	show("disable");
	handle(3);
	printf("\nwhat the registry knows (switchyard_for_each_key/site):\n");
	return switchyard_for_each_key(print_key, NULL) ? 1 : 0;
}
