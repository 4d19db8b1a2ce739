// SPDX-License-Identifier: MIT
//! A Rust `cdylib` with a static call, loaded with `dlopen` and unloaded
//! with `dlclose`, three times: its site is registered and patched before
//! `dlopen` returns, it follows the updates, and the glue's destructor and
//! the library's run at `dlclose` without harm (the next load starts from
//! the definition again).
//!
//! The plugin links its own copy of the library (the default static
//! link), so everything here goes through its exported functions.

use std::path::PathBuf;

fn plugin() -> PathBuf {
    switchyard_testsupport::cdylib("libswitchyard_plugin_sc_tests.so")
}

#[test]
fn a_cdylib_registers_its_static_calls_before_dlopen_returns() {
    let path = plugin();
    for round in 0..3 {
        let lib = switchyard_testsupport::Lib::open(&path);
        // SAFETY: the plugin's exported functions, with their types.
        unsafe {
            let call: extern "C" fn(u64) -> u64 = lib.sym("plugin_sc_call");
            let update: extern "C" fn(u32) -> i32 = lib.sym("plugin_sc_update");
            let sites: extern "C" fn() -> usize = lib.sym("plugin_sc_sites");
            let patched: extern "C" fn() -> i32 = lib.sym("plugin_sc_patched");
            if switchyard::PATCHING {
                // patched before dlopen returned, before its first call
                assert_eq!(patched(), 1, "round {round}");
                assert_eq!(sites(), 1, "round {round}");
            }
            assert_eq!(call(5), 10, "round {round}: the definition's target");
            assert_eq!(update(1), 0);
            assert_eq!(call(5), 25);
            assert_eq!(update(2), 0);
            assert_eq!(call(5), 0);
            assert_eq!(update(3), 0);
            let _ = call(5);
            assert_eq!(update(0), 0);
            assert_eq!(call(6), 12);
            if switchyard::PATCHING {
                assert_eq!(patched(), 1, "round {round}");
            }
            // left on another target: the next load must start from the
            // definition
            assert_eq!(update(1), 0);
            assert_eq!(lib.close(), 0);
        }
    }
}
