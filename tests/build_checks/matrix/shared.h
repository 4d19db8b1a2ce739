/* SPDX-License-Identifier: MIT */
/* shared.h - C++ only: keys and their descriptions defined in
 * an inline function and in a function template of a header that prog.c and
 * lib.c both include. Their records must not be defined twice at link time
 * (g++ gave the records of an inline function's statics one global symbol
 * each: "multiple definition of f()::sy__name_1", issue [10/15]). */
#ifndef SY_MATRIX_SHARED_H
#define SY_MATRIX_SHARED_H
#ifdef __cplusplus

inline int shared_inline(int on)
{
	static DEFINE_STATIC_KEY_FALSE(shared_k);
	SWITCHYARD_KEY_DESCRIPTION(shared_k, "a key in an inline function");

	if (on)
		static_branch_enable(&shared_k);
	return static_branch_unlikely(&shared_k) ? 1 : 0;
}

template <int N> int shared_template()
{
	static DEFINE_STATIC_KEY_TRUE(shared_tk);
	SWITCHYARD_KEY_DESCRIPTION(shared_tk, "a key in a template");

	return static_branch_likely(&shared_tk) ? N : 0;
}
#endif
#endif
