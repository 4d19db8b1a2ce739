/* SPDX-License-Identifier: MIT */
/*
 * e2_calls_indirect.c - the indirect-call loops of e2_calls.c: x = f(x) and
 * s += f(i) through the function pointer sc_fp, loaded (relaxed) at every
 * call as an ops table's slot would be. Built twice from this one file:
 * plain (c_pointer, t_pointer) and with SC_RETPOLINE and the compiler's
 * retpoline flags (c_retpoline, t_retpoline; bench/CMakeLists.txt), so the
 * two differ only in how the indirect call is compiled.
 */
#include "sc_call.h"

#ifdef SC_RETPOLINE
#define SC_NAME(k) k##_retpoline
#else
#define SC_NAME(k) k##_pointer
#endif

SC_LOOPFN long SC_NAME(c)(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = __atomic_load_n(&sc_fp, __ATOMIC_RELAXED)(x);
	return x;
}

SC_LOOPFN long SC_NAME(t)(long x, long n)
{
	long s = x;

	for (long i = 0; i < n; i++)
		s += __atomic_load_n(&sc_fp, __ATOMIC_RELAXED)(i);
	return s;
}
