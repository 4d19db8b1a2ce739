// SPDX-License-Identifier: MIT
//! A C program (c/driver.c) loads this package's cdylib, a Rust object
//! with a static key and a static call, with dlopen three times: both
//! sites work before their first use and follow their changes, and each
//! load starts from the definitions (the issue's "a C program dlopen-ing a
//! Rust cdylib with keys and calls").

use std::path::PathBuf;
use std::process::Command;

fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join("libswitchyard_plugin_sc_tests.so"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no libswitchyard_plugin_sc_tests.so near {}", deps.display()))
}

#[test]
fn a_c_program_dlopens_a_rust_cdylib_with_keys_and_calls() {
    if !switchyard::PATCHING {
        return;
    }
    // through the emulator of SY_TEST_EMULATOR in a cross build
    let emu = std::env::var("SY_TEST_EMULATOR").unwrap_or_default();
    let mut words = emu.split_whitespace();
    let mut c = match words.next() {
        Some(w) => {
            let mut c = Command::new(w);
            c.args(words).arg(env!("SY_C_DRIVER"));
            c
        }
        None => Command::new(env!("SY_C_DRIVER")),
    };
    let out = c.arg(plugin()).output().expect("run the C driver");
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && so.trim() == "ok", "driver: {:?}\n{so}{se}", out.status);
}
