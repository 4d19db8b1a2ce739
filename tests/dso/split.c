/* SPDX-License-Identifier: MIT */
/*
 * split.c - an executable that takes shared_key's address directly (a copy
 * relocation) while libkey_symbolic.so binds its own: the registry reports
 * the split at start-up (check_split.sh matches the message), and the
 * program shows the consequence it warns about: it exits 0 only when the
 * split is there to see. The same for the static call shared_sc (reported
 * where static calls are patched: it says whether they are).
 */
#include <stdio.h>

#include "dso.h"

int main(void)
{
	int exe_on, lib_on;

#ifdef SY__ARCH_HAVE_STATIC_CALL
	printf("static calls: patched\n");
#else
	printf("static calls: not patched here\n");
#endif
	static_branch_enable(&shared_key);
	exe_on = static_key_enabled(&shared_key);
	lib_on = libkey_site();
	printf("executable's instance enabled: %d, library's site: %d%s\n",
	       exe_on, lib_on, exe_on != lib_on ? " (split seen)" : "");
	if (!(exe_on == 1 && lib_on == 0))
		return 1;
	static_call_update(shared_sc, libkey_sc_b);
	exe_on = static_call(shared_sc)();
	lib_on = libkey_sc_site();
	printf("executable's static call: %d, library's site: %d%s\n",
	       exe_on, lib_on, exe_on != lib_on ? " (split seen)" : "");
	return exe_on == 2 && lib_on == 1 ? 0 : 1;
}
