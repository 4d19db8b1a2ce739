/* SPDX-License-Identifier: MIT */
/*
 * sc_site_bytes.c - bytes per call site in every section, for
 * run_static_calls.sh: 100 calls x = f(x) in one function, built as a
 * shared object (-fPIC -shared, left unlinked to libswitchyard) once as
 * static calls (-DSC_STATIC) and once as direct calls; the difference of
 * each section's size over 100 is what a static call site adds to a
 * direct call. The key and its target are in both builds.
 */
#include <switchyard.h>

long sc_site_tgt(long x);

long sc_site_tgt(long x)
{
	return x * 3 + 1;
}

DEFINE_STATIC_CALL(sc_site_key, sc_site_tgt);

#ifdef SC_STATIC
#define CALL x = static_call(sc_site_key)(x);
#else
#define CALL x = sc_site_tgt(x);
#endif
#define CALL10 CALL CALL CALL CALL CALL CALL CALL CALL CALL CALL

long sc_site_fn(long x);

long sc_site_fn(long x)
{
	CALL10 CALL10 CALL10 CALL10 CALL10 CALL10 CALL10 CALL10 CALL10 CALL10
	return x;
}
