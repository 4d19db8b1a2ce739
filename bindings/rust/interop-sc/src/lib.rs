// SPDX-License-Identifier: MIT
//! Tests only (tests/interop_sc.rs): the C functions of c/sc.c, and the
//! Rust static call that C code calls.

use switchyard::{StaticCall, define_static_call};

/// What C calls the Rust call's targets with.
pub type Fun = extern "C" fn(u64) -> u64;

/// A target of the Rust call.
#[unsafe(no_mangle)]
pub extern "C" fn rust_double(x: u64) -> u64 {
    x * 2
}

/// Another target of the Rust call.
pub extern "C" fn rust_square(x: u64) -> u64 {
    x * x
}

define_static_call!(
    /// The Rust static call that C sites call (`rust_call` in C).
    #[unsafe(export_name = "__SCK__rust_call")]
    pub RUST_CALL: Fun = rust_double
);

unsafe extern "C" {
    /// The C static call (DEFINE_STATIC_CALL(c_call, c_add1)).
    #[link_name = "__SCK__c_call"]
    pub safe static C_CALL: StaticCall<Fun>;
    /// c_call's first target: x + 1.
    pub safe fn c_add1(x: u64) -> u64;
    /// A C site of c_call.
    pub safe fn c_site_c_call(x: u64) -> u64;
    /// A C site of rust_call.
    pub safe fn c_site_rust_call(x: u64) -> u64;
    /// static_call_update(rust_call, f) from C.
    pub safe fn c_update_rust_call(f: Fun) -> i32;
    /// static_call_update(c_call, c_add2) from C.
    pub safe fn c_update_c_call_add2() -> i32;
    /// static_call_update(c_call, NULL) from C.
    pub safe fn c_update_c_call_null() -> i32;
}
