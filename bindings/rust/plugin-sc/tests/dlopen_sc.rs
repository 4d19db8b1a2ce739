// SPDX-License-Identifier: MIT
//! A Rust `cdylib` with a static call, loaded with `dlopen` and unloaded
//! with `dlclose`, three times: its site is registered and patched before
//! `dlopen` returns, it follows the updates, and the glue's destructor and
//! the library's run at `dlclose` without harm (the next load starts from
//! the definition again).
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

/// The plugin: beside this test (target/<profile>/deps/), or one level up.
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libswitchyard_plugin_sc_tests.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no libswitchyard_plugin_sc_tests.so near {}",
                deps.display()
            )
        })
}

/// # Safety
/// `name` is a function of type T in the object `h`.
unsafe fn sym<T: Copy>(h: *mut c_void, name: &str) -> T {
    let n = CString::new(name).unwrap();
    // SAFETY: a handle from dlopen.
    let p = unsafe { dlsym(h, n.as_ptr()) };
    assert!(!p.is_null(), "no {name} in the plugin");
    // SAFETY: the caller names a function of type T.
    unsafe { std::mem::transmute_copy(&p) }
}

#[test]
fn a_cdylib_registers_its_static_calls_before_dlopen_returns() {
    let path = CString::new(plugin().to_str().unwrap()).unwrap();
    for round in 0..3 {
        // SAFETY: the plugin's constructors are the library's and the glue's.
        let h = unsafe { dlopen(path.as_ptr(), RTLD_NOW) };
        // SAFETY: dlerror's string, when dlopen failed.
        assert!(!h.is_null(), "dlopen: {:?}", unsafe {
            std::ffi::CStr::from_ptr(dlerror())
        });
        // SAFETY: the plugin's exported functions, with their types.
        unsafe {
            let call: extern "C" fn(u64) -> u64 = sym(h, "plugin_sc_call");
            let update: extern "C" fn(u32) -> i32 = sym(h, "plugin_sc_update");
            let sites: extern "C" fn() -> usize = sym(h, "plugin_sc_sites");
            let patched: extern "C" fn() -> i32 = sym(h, "plugin_sc_patched");
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
            assert_eq!(dlclose(h), 0);
        }
    }
}
