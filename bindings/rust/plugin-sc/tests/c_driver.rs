// SPDX-License-Identifier: MIT
//! A C program (c/driver.c) loads this package's cdylib, a Rust object
//! with a static key and a static call, with dlopen three times: both
//! sites work before their first use and follow their changes, and each
//! load starts from the definitions (the issue's "a C program dlopen-ing a
//! Rust cdylib with keys and calls").

#[test]
fn a_c_program_dlopens_a_rust_cdylib_with_keys_and_calls() {
    if !switchyard::PATCHING {
        return;
    }
    // through the emulator of SY_TEST_EMULATOR in a cross build
    let lib = switchyard_testsupport::cdylib("libswitchyard_plugin_sc_tests.so");
    let out = switchyard_testsupport::command(env!("SY_C_DRIVER"))
        .arg(lib).output().expect("run the C driver");
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && so.trim() == "ok", "driver: {:?}\n{so}{se}", out.status);
}
