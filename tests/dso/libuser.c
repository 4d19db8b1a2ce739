/* SPDX-License-Identifier: MIT */
/* libuser.c - uses shared_key, defined in libkey.so (library <-> library). */
#include <switchyard.h>

#include "dso.h"

DSO_API int libuser_site(void)
{
	if (static_branch_unlikely(&shared_key))
		return 1;
	return 0;
}

/* A key defined in the executable, used by a library. */
DSO_API int libuser_exe_key_site(void)
{
	return static_branch_likely(&exe_key);
}
