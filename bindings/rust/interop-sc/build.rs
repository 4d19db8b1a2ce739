// SPDX-License-Identifier: MIT
//! Compiles c/sc.c against the headers switchyard-sys links the library
//! of (DEP_SWITCHYARD_INCLUDE), into a static library the tests link; the
//! compiler and archiver found as ../interop/build.rs finds them
//! (`CC_<target>`, `TARGET_CC`, `CC`, else `cc`; a cross build to AArch64:
//! `aarch64-linux-gnu-gcc`).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=c/sc.c");
    let target = env::var("TARGET").unwrap();
    let cross = target != env::var("HOST").unwrap();
    let tool = |name: &str, native: &str| {
        let t = target.replace('-', "_");
        for v in [
            format!("{name}_{t}"),
            format!("TARGET_{name}"),
            name.to_string(),
        ] {
            println!("cargo:rerun-if-env-changed={v}");
            if let Ok(c) = env::var(&v) {
                if !cross || v != name {
                    return c;
                }
            }
        }
        if cross && target.starts_with("aarch64-") {
            format!(
                "aarch64-linux-gnu-{}",
                if native == "cc" { "gcc" } else { native }
            )
        } else {
            native.to_string()
        }
    };
    let inc =
        env::var("DEP_SWITCHYARD_INCLUDE").expect("switchyard-sys gives its include directory");
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let cc = tool("CC", "cc");
    let obj = out.join("sc.o");
    let st = Command::new(&cc)
        .args(["-c", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&obj)
        .arg("-I")
        .arg(&inc)
        .arg("c/sc.c")
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(st.success(), "{cc} failed on c/sc.c");
    let lib = out.join("libinterop_sc_c.a");
    let _ = std::fs::remove_file(&lib);
    let st = Command::new(tool("AR", "ar"))
        .arg("crs")
        .arg(&lib)
        .arg(&obj)
        .status()
        .expect("run ar");
    assert!(st.success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=interop_sc_c");
}
