/* SPDX-License-Identifier: MIT */
/* librc.c - sites of the program's run-time constants, in a library that
 * test_runtime_const.c opens after it initialised them. */
#include <switchyard.h>

extern unsigned long rc_base;
extern unsigned int rc_limit, rc_shift;

__attribute__((visibility("default"))) unsigned long librc_read(unsigned x,
								 const unsigned char **guard)
{
	unsigned long r = runtime_const_ptr(rc_base) + runtime_const_u32(rc_limit) +
		runtime_const_shift_right_32(x, rc_shift);
#ifdef SY__ARCH_HAVE_RUNTIME_CONST
	extern struct { const void *sym; int code; unsigned char end, size;
			unsigned short pad; } __start_sy_runtime_const[]
		__attribute__((visibility("hidden")));

	*guard = (const unsigned char *)&__start_sy_runtime_const[0].code +
		 __start_sy_runtime_const[0].code;
#else
	*guard = 0;
#endif
	return r;
}
