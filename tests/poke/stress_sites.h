/* SPDX-License-Identifier: MIT */
/*
 * stress_sites.h - 1,024 sites over 16 keys for the stress tests: 8 FALSE
 * keys tested with static_branch_unlikely(), 8 TRUE keys with
 * static_branch_likely(), 64 sites each. Each site is its own function
 * returning whether the key was seen enabled. One site in four has a cold
 * out-of-line path (a 5-byte site at -O2: hot/cold splitting moves it to
 * .text.unlikely), one in eight a far one (200 bytes of straight-line code
 * in between); the rest are 2-byte sites.
 *
 * Include once, in the test's translation unit.
 */
#ifndef SY_STRESS_SITES_H
#define SY_STRESS_SITES_H

#include <switchyard.h>

#define STRESS_KEYS 16
#define STRESS_SITES_PER_KEY 64
#define STRESS_SITES (STRESS_KEYS * STRESS_SITES_PER_KEY)

DEFINE_STATIC_KEY_ARRAY_FALSE(stress_kf, 8);
DEFINE_STATIC_KEY_ARRAY_TRUE(stress_kt, 8);

__attribute__((unused)) static struct static_key *stress_key(int k)
{
	return k < 8 ? &stress_kf[k].key : &stress_kt[k - 8].key;
}

__attribute__((cold, noinline)) static int stress_cold(void)
{
	return 1;
}

#define SF(k, j)                                                              \
	__attribute__((noinline)) static int sf_##k##_##j(void)               \
	{                                                                     \
		if ((j) % 4 == 0) {                                           \
			if (static_branch_unlikely(&stress_kf[k]))            \
				return stress_cold();                         \
			return 0;                                             \
		}                                                             \
		if ((j) % 8 == 1) {                                           \
			if (static_branch_unlikely(&stress_kf[k]))            \
				return 1;                                     \
			__asm__ volatile(".skip 200, 0x90");                  \
			return 0;                                             \
		}                                                             \
		if (static_branch_unlikely(&stress_kf[k]))                    \
			return 1;                                             \
		return 0;                                                     \
	}
#define ST(k, j)                                                              \
	__attribute__((noinline)) static int st_##k##_##j(void)               \
	{                                                                     \
		if ((j) % 4 == 0) {                                           \
			if (!static_branch_likely(&stress_kt[k]))             \
				return 1 - stress_cold();                     \
			return 1;                                             \
		}                                                             \
		if (static_branch_likely(&stress_kt[k]))                      \
			return 1;                                             \
		return 0;                                                     \
	}

#define J8(M, k, b) M(k, b##0) M(k, b##1) M(k, b##2) M(k, b##3) \
	M(k, b##4) M(k, b##5) M(k, b##6) M(k, b##7)
#define J64(M, k) J8(M, k, 1) J8(M, k, 2) J8(M, k, 3) J8(M, k, 4) \
	J8(M, k, 5) J8(M, k, 6) J8(M, k, 7) J8(M, k, 8)
#define K8(M) J64(M, 0) J64(M, 1) J64(M, 2) J64(M, 3) J64(M, 4) J64(M, 5) \
	J64(M, 6) J64(M, 7)

K8(SF)
K8(ST)

#define PF(k, j) sf_##k##_##j,
#define PT(k, j) st_##k##_##j,

/* stress_fn[k * 64 + j] is site j of key k. */
static int (*const stress_fn[STRESS_SITES])(void) = { K8(PF) K8(PT) };

#endif /* SY_STRESS_SITES_H */
