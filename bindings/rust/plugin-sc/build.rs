// SPDX-License-Identifier: MIT
//! Compiles c/driver.c, the C program of tests/c_driver.rs, into OUT_DIR
//! (its path in SY_C_DRIVER). The C compiler as interop/build.rs finds it:
//! `CC_<target>`, `TARGET_CC`, `CC`, else `cc` (a cross build to AArch64:
//! `aarch64-linux-gnu-gcc`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=c/driver.c");
    let target = env::var("TARGET").unwrap();
    let cross = target != env::var("HOST").unwrap();
    let t = target.replace('-', "_");
    let mut cc = None;
    for v in [format!("CC_{t}"), "TARGET_CC".to_string(), "CC".to_string()] {
        println!("cargo:rerun-if-env-changed={v}");
        if let Ok(c) = env::var(&v) {
            if !cross || v != "CC" {
                cc = Some(c);
                break;
            }
        }
    }
    let cc = cc.unwrap_or_else(|| {
        if cross && target.starts_with("aarch64-") {
            "aarch64-linux-gnu-gcc".to_string()
        } else {
            "cc".to_string()
        }
    });
    let exe = PathBuf::from(env::var_os("OUT_DIR").unwrap()).join("c_driver");
    let st = Command::new(&cc)
        .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&exe)
        .arg("c/driver.c")
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(st.success(), "{cc} failed on c/driver.c");
    println!("cargo:rustc-env=SY_C_DRIVER={}", exe.display());
}
