/* SPDX-License-Identifier: MIT */
/* libkey.c - defines shared_key (exported) and a hidden key, with sites of
 * its own. */
#include <switchyard.h>

#include "dso.h"

DEFINE_STATIC_KEY_FALSE(shared_key);
__attribute__((visibility("hidden"))) DEFINE_STATIC_KEY_TRUE(libkey_hidden);

DSO_API int libkey_site(void)
{
	return static_branch_unlikely(&shared_key);
}

DSO_API int libkey_hidden_site(void)
{
	return static_branch_likely(&libkey_hidden);
}

DSO_API int libkey_set_hidden(int on)
{
	return on ? static_branch_enable(&libkey_hidden)
		  : static_branch_disable(&libkey_hidden);
}

DSO_API int libkey_sc_a(void)
{
	return 1;
}

DSO_API int libkey_sc_b(void)
{
	return 2;
}

DEFINE_STATIC_CALL(shared_sc, libkey_sc_a);

DSO_API int libkey_sc_site(void)
{
	return static_call(shared_sc)();
}
