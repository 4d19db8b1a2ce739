/* SPDX-License-Identifier: MIT */
/*
 * interop.c - the C side of a program whose keys C and Rust share: a key
 * defined here and used by Rust sites, a Rust key used by C sites, and
 * calls that flip each from C.
 */
#include <stdbool.h>
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(c_key);

/* defined in Rust: define_static_key_false!(#[unsafe(no_mangle)] pub rust_key) */
extern struct static_key_false rust_key;

bool c_site_c_key(void)
{
	return static_branch_unlikely(&c_key);
}

bool c_site_rust_key(void)
{
	return static_branch_unlikely(&rust_key);
}

bool c_site_rust_key_likely(void)
{
	return static_branch_likely(&rust_key);
}

int c_enable_rust_key(void)
{
	return static_branch_enable(&rust_key);
}

int c_disable_rust_key(void)
{
	return static_branch_disable(&rust_key);
}

int c_enable_c_key(void)
{
	return static_branch_enable(&c_key);
}

int c_disable_c_key(void)
{
	return static_branch_disable(&c_key);
}
