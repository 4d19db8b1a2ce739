/* SPDX-License-Identifier: MIT */
/*
 * test_sc_comdat.cpp - sites in COMDAT functions (comdat.h) link, register
 * once, and follow the key and the static call from either translation
 * unit.
 */
#include "comdat.h"
#include "sy_sc_sites.h"
#include "sy_test.h"

long comdat_tu2(long x)
{
	return comdat_hot(x) + comdat_tpl<10>(x);
}

int main(void)
{
	int n = 0;

#ifdef SY__ARCH_HAVE_STATIC_CALL
	for (sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		n += r->meta->key == &STATIC_CALL_KEY(comdat_sc);
	CHECK_EQ(n, 2);		/* one copy of each function's site kept */
#endif
#if SY_TEST_HAVE_SITES
	n = 0;
	for (sy_test_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++)
		n += (e->key & ~3ul) == (unsigned long)&comdat_key;
	CHECK_EQ(n, 1);
#endif
	(void)n;
	CHECK_EQ(comdat_tu1(1), 2 + 12);
	CHECK_EQ(comdat_tu2(1), 2 + 12);
	static_branch_enable(&comdat_key);
	CHECK_EQ(static_call_update(comdat_sc, comdat_b), 0);
	CHECK_EQ(comdat_tu1(1), 1003 + 13);
	CHECK_EQ(comdat_tu2(1), 1003 + 13);
	static_branch_disable(&comdat_key);
	CHECK_EQ(static_call_update(comdat_sc, comdat_a), 0);
	CHECK_EQ(comdat_tu2(1), 2 + 12);
	return sy_test_done("sc_comdat");
}
