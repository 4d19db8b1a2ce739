// SPDX-License-Identifier: MIT
//! Tests only (tests/dlopen.rs): a `cdylib` whose sites must be registered
//! before `dlopen` returns, and taken back at `dlclose`.

use switchyard::{define_static_key_false, static_branch_likely, static_branch_unlikely};

define_static_key_false!(PLUGIN_KEY);

/// An unlikely site of PLUGIN_KEY: false while it is disabled, true if the
/// site still held the jump the compiler emitted.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_unlikely() -> bool {
    static_branch_unlikely!(PLUGIN_KEY)
}

/// A likely site of PLUGIN_KEY.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_likely() -> bool {
    static_branch_likely!(PLUGIN_KEY)
}

/// Enables (1) or disables (0) PLUGIN_KEY: 0 or the negative errno.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_set(on: bool) -> i32 {
    let r = if on {
        PLUGIN_KEY.enable()
    } else {
        PLUGIN_KEY.disable()
    };
    r.map_or_else(|e| -e.errno(), |()| 0)
}

/// The number of sites the library registered for PLUGIN_KEY.
#[unsafe(no_mangle)]
pub extern "C" fn plugin_sites() -> usize {
    PLUGIN_KEY.sites().len()
}
