// SPDX-License-Identifier: MIT
//! Tests only (tests/interop.rs): the C functions of c/interop.c.

use switchyard::define_static_key_false;

define_static_key_false!(
    /// The Rust key that C code tests and flips.
    #[unsafe(no_mangle)]
    pub rust_key
);

unsafe extern "C" {
    /// The C key (DEFINE_STATIC_KEY_FALSE(c_key)).
    pub safe static c_key: switchyard::StaticKey;
    /// A C site of c_key.
    pub safe fn c_site_c_key() -> bool;
    /// A C site of rust_key.
    pub safe fn c_site_rust_key() -> bool;
    /// A likely C site of rust_key.
    pub safe fn c_site_rust_key_likely() -> bool;
    /// static_branch_enable(&rust_key) from C.
    pub safe fn c_enable_rust_key() -> i32;
    /// static_branch_disable(&rust_key) from C.
    pub safe fn c_disable_rust_key() -> i32;
    /// static_branch_enable(&c_key) from C.
    pub safe fn c_enable_c_key() -> i32;
    /// static_branch_disable(&c_key) from C.
    pub safe fn c_disable_c_key() -> i32;
}

define_static_key_false!(
    /// A key whose sites sit in a generic and an inline function,
    /// instantiated here and in the tests' crate.
    pub GENERIC_KEY
);

/// A site in a generic function: one per instance, in whichever crate
/// instantiates it.
pub fn generic_site<T: Default + PartialEq>() -> bool {
    switchyard::static_branch_unlikely!(GENERIC_KEY) && T::default() == T::default()
}

/// A site in an inline function: copied into the crates that call it.
#[inline]
pub fn inline_site() -> bool {
    switchyard::static_branch_likely!(GENERIC_KEY)
}

/// This crate's own instances.
pub fn lib_instances() -> [bool; 2] {
    [generic_site::<u8>(), inline_site()]
}
