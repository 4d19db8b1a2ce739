/* SPDX-License-Identifier: MIT */
/* dso.h - what the DSO test objects share. */
#ifndef SY_TEST_DSO_H
#define SY_TEST_DSO_H

#include <switchyard.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DSO_API __attribute__((visibility("default")))

DECLARE_STATIC_KEY_FALSE(shared_key);	/* in libkey.so */
DECLARE_STATIC_KEY_TRUE(exe_key);	/* in the executable (test_dso.c) */

DSO_API int libkey_site(void);
DSO_API int libkey_hidden_site(void);
DSO_API int libkey_set_hidden(int on);
DSO_API int libuser_site(void);
DSO_API int libuser_exe_key_site(void);	/* uses exe_key */
/* a static call defined in libkey.so, and a site of it there */
DSO_API int libkey_sc_a(void);
DSO_API int libkey_sc_b(void);
DECLARE_STATIC_CALL(shared_sc, libkey_sc_a);
DSO_API int libkey_sc_site(void);

#ifdef __cplusplus
}
#endif

#endif
