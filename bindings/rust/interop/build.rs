// SPDX-License-Identifier: MIT
//! Compiles c/interop.c against the headers switchyard-sys links the
//! library of (DEP_SWITCHYARD_INCLUDE), with the C compiler of `CC` (else
//! `cc`), into a static library the tests link.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=c/interop.c");
    println!("cargo:rerun-if-env-changed=CC");
    let inc = env::var("DEP_SWITCHYARD_INCLUDE").expect("switchyard-sys gives its include directory");
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let obj = out.join("interop.o");
    let st = Command::new(&cc)
        .args(["-c", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&obj)
        .arg("-I")
        .arg(&inc)
        .arg("c/interop.c")
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
    assert!(st.success(), "{cc} failed on c/interop.c");
    let lib = out.join("libinterop_c.a");
    let _ = std::fs::remove_file(&lib);
    let st = Command::new(env::var("AR").unwrap_or_else(|_| "ar".into()))
        .arg("crs")
        .arg(&lib)
        .arg(&obj)
        .status()
        .expect("run ar");
    assert!(st.success());
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=interop_c");
}
