/* SPDX-License-Identifier: MIT */
/* sc_dso.h - static calls across objects: what each side declares. */
#ifndef SC_DSO_H
#define SC_DSO_H

#include <switchyard.h>

#ifdef __cplusplus
extern "C" {
#endif
int lib_impl(int x);		/* libsc.so: x + 100 */
int lib_call_exe(int x);	/* libsc.so: static_call(sc_exe)(x) */
int lib_update_own(int which);	/* libsc.so: sc_lib to lib_impl or NULL */
int exe_impl(int x);		/* the executable: x + 1 */
#ifdef __cplusplus
}
#endif

DECLARE_STATIC_CALL(sc_lib, lib_impl);	/* defined in libsc.so */
DECLARE_STATIC_CALL(sc_exe, exe_impl);	/* defined in the executable */

#endif
