// SPDX-License-Identifier: MIT
//! Copies the static-keys crate's test files from the source cargo fetched
//! (found with `cargo metadata`) into OUT_DIR, where tests/upstream.rs
//! includes them. One change: a leading `//!` comment becomes `//`
//! (`include!` splices items, where an inner doc comment is an error); the
//! code is not edited: a test that needs a change to pass is a difference
//! to report, not to hide.
use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap());
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("Cargo.toml");
    let md = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(env::var("TARGET").unwrap())
        .arg("--manifest-path")
        .arg(&manifest)
        .output()
        .expect("cargo metadata");
    assert!(md.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&md.stderr));
    let text = String::from_utf8(md.stdout).unwrap();
    // the upstream package's manifest path: a plain search, no JSON crate
    let key = "/static-keys-0.8.2/Cargo.toml\"";
    let end = text.find(key).expect("static-keys 0.8.2 in cargo metadata") + key.len() - "/Cargo.toml\"".len();
    let start = text[..end].rfind('"').unwrap() + 1;
    let root = PathBuf::from(&text[start..end]);
    for f in ["tests/basic.rs", "tests/ui/no_entries.rs"] {
        let src = root.join(f);
        let dst = out.join(src.file_name().unwrap());
        let text = fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        let text: String = text
            .lines()
            .map(|l| match l.strip_prefix("//!") {
                Some(rest) => format!("//{rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        fs::write(&dst, text).unwrap();
        println!("cargo:rerun-if-changed={}", src.display());
    }
    println!("cargo:rerun-if-changed=build.rs");
}
