// SPDX-License-Identifier: MIT
//! Tells the crate whether switchyard-sys linked the library statically
//! (`sy_static_lib`: the changes then check that the process holds no
//! second copy), and whether `core::hint::cold_path` (stable since Rust
//! 1.95) exists: the branch macros put the out-of-line side of a site on a
//! cold path where it does; older compilers (>= 1.87, for `asm!` label
//! operands) still lay the fall-through first, without the hint.

use std::env;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(sy_cold_path)");
    println!("cargo::rustc-check-cfg=cfg(sy_static_lib)");
    // switchyard-sys linked the library statically (links metadata)
    println!("cargo:rerun-if-env-changed=DEP_SWITCHYARD_STATIC");
    if env::var_os("DEP_SWITCHYARD_STATIC").is_some() {
        println!("cargo:rustc-cfg=sy_static_lib");
    }
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let minor = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|v| {
            // "rustc 1.95.0 (59807616e 2026-04-14)"
            let ver = v.split_whitespace().nth(1)?.to_string();
            let mut it = ver.split('.');
            let major: u32 = it.next()?.parse().ok()?;
            let minor: u32 = it.next()?.parse().ok()?;
            Some(if major > 1 { u32::MAX } else { minor })
        })
        .unwrap_or(0);
    if minor >= 95 {
        println!("cargo:rustc-cfg=sy_cold_path");
    }
}
