// SPDX-License-Identifier: MIT
//! A Rust `cdylib` with keys, loaded with `dlopen` and unloaded with
//! `dlclose`, three times: its sites are registered before `dlopen`
//! returns (a site of a disabled key falls through at the first call),
//! they follow the key, and the glue's destructor and the library's run
//! at `dlclose` without harm (the next load starts afresh).
//!
//! The plugin links its own copy of the library (the default static
//! link), so everything here goes through its exported functions.

use std::ffi::{CString, c_char, c_int, c_void};
use std::path::PathBuf;

#[link(name = "dl")]
unsafe extern "C" {
    fn dlopen(path: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(h: *mut c_void, name: *const c_char) -> *mut c_void;
    fn dlclose(h: *mut c_void) -> c_int;
    fn dlerror() -> *const c_char;
}
const RTLD_NOW: c_int = 2;

/// The plugin: beside this test (target/<profile>/deps/), or one level up
/// where cargo copies a library it was asked to build.
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libswitchyard_plugin_tests.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no libswitchyard_plugin_tests.so near {}", deps.display()))
}

unsafe fn sym<T: Copy>(h: *mut c_void, name: &str) -> T {
    let n = CString::new(name).unwrap();
    let p = unsafe { dlsym(h, n.as_ptr()) };
    assert!(!p.is_null(), "no {name} in the plugin");
    // SAFETY: the caller names a function of type T.
    unsafe { std::mem::transmute_copy(&p) }
}

#[test]
fn a_cdylib_registers_before_dlopen_returns() {
    if !switchyard::PATCHING {
        return;
    }
    let path = CString::new(plugin().to_str().unwrap()).unwrap();
    for round in 0..3 {
        let h = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
        assert!(!h.is_null(), "dlopen: {:?}", unsafe {
            std::ffi::CStr::from_ptr(dlerror())
        });
        unsafe {
            let unlikely: extern "C" fn() -> bool = sym(h, "plugin_unlikely");
            let likely: extern "C" fn() -> bool = sym(h, "plugin_likely");
            let set: extern "C" fn(bool) -> i32 = sym(h, "plugin_set");
            let sites: extern "C" fn() -> usize = sym(h, "plugin_sites");
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
            assert_eq!(dlclose(h), 0);
        }
    }
}
