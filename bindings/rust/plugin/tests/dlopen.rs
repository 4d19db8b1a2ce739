// SPDX-License-Identifier: MIT
//! A Rust `cdylib` with keys, loaded with `dlopen` and unloaded with
//! `dlclose`, three times: its sites are registered before `dlopen`
//! returns (a site of a disabled key falls through at the first call),
//! they follow the key, and the glue's destructor and the library's run
//! at `dlclose` without harm (the next load starts afresh).
//!
//! The plugin links its own copy of the library (the default static
//! link), so everything here goes through its exported functions.

use std::path::PathBuf;

fn plugin() -> PathBuf {
    switchyard_testsupport::cdylib("libswitchyard_plugin_tests.so")
}

#[test]
fn a_cdylib_registers_before_dlopen_returns() {
    if !switchyard::PATCHING {
        return;
    }
    let path = plugin();
    for round in 0..3 {
        let lib = switchyard_testsupport::Lib::open(&path);
        unsafe {
            let unlikely: extern "C" fn() -> bool = lib.sym("plugin_unlikely");
            let likely: extern "C" fn() -> bool = lib.sym("plugin_likely");
            let set: extern "C" fn(bool) -> i32 = lib.sym("plugin_set");
            let sites: extern "C" fn() -> usize = lib.sym("plugin_sites");
            // registered before dlopen returned: the unlikely site falls
            // through (the emitted jump would say true), the likely one
            // jumps (it would say false)... both say "disabled"
            assert!(!unlikely() && !likely(), "round {round}");
            assert_eq!(sites(), 2, "round {round}");
            assert_eq!(set(true), 0);
            assert!(unlikely() && likely(), "round {round}");
            assert_eq!(set(false), 0);
            assert!(!unlikely() && !likely(), "round {round}");
            // left enabled: the next load must start from the definition
            assert_eq!(set(true), 0);
            assert_eq!(lib.close(), 0);
        }
    }
}
