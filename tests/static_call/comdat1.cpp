/* SPDX-License-Identifier: MIT */
/* comdat1.cpp - see comdat.h */
#include "comdat.h"

DEFINE_STATIC_KEY_FALSE(comdat_key);
long comdat_a(long x) { return x + 1; }
long comdat_b(long x) { return x + 2; }
DEFINE_STATIC_CALL(comdat_sc, comdat_a);

long comdat_tu1(long x)
{
	return comdat_hot(x) + comdat_tpl<10>(x);
}
