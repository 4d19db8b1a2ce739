/* SPDX-License-Identifier: MIT */
/*
 * liblisted.c - opened with dlopen: a key of its own with three sites, and
 * calls to take and count references on it.
 */
#include <switchyard.h>

#define LISTED_API __attribute__((visibility("default")))

LISTED_API DEFINE_STATIC_KEY_FALSE(listed_key);

LISTED_API int listed_site_0(void)
{
	return static_branch_unlikely(&listed_key);
}

LISTED_API int listed_site_1(void)
{
	return static_branch_unlikely(&listed_key);
}

LISTED_API int listed_site_2(void)
{
	return static_branch_unlikely(&listed_key);
}

LISTED_API int listed_inc(void)
{
	return static_branch_inc(&listed_key);
}
