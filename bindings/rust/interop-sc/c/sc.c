/* SPDX-License-Identifier: MIT */
/*
 * sc.c - the C side of a program whose static calls C and Rust share: a
 * call defined here and called from Rust sites, a Rust call called from C
 * sites, and updates of each from C.
 */
#include <switchyard.h>

long c_add1(long x)
{
	return x + 1;
}

long c_add2(long x)
{
	return x + 2;
}

DEFINE_STATIC_CALL(c_call, c_add1);

/* defined in Rust: define_static_call!(#[unsafe(export_name =
 * "__SCK__rust_call")] pub RUST_CALL: extern "C" fn(u64) -> u64 = ...) */
long rust_double(long x);
DECLARE_STATIC_CALL(rust_call, rust_double);

long c_site_c_call(long x)
{
	return static_call(c_call)(x);
}

long c_site_rust_call(long x)
{
	return static_call(rust_call)(x);
}

int c_update_rust_call(long (*f)(long))
{
	return static_call_update(rust_call, f);
}

int c_update_c_call_add2(void)
{
	return static_call_update(c_call, c_add2);
}

int c_update_c_call_null(void)
{
	return static_call_update(c_call, NULL);
}
