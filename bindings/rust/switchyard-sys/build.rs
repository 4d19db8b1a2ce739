// SPDX-License-Identifier: MIT
//! Builds libswitchyard from the repository this crate sits in (cmake) and
//! links it statically; with the `system` feature, links an installed
//! libswitchyard.so found through pkg-config instead.
//!
//! Environment:
//! - `SWITCHYARD_SOURCE_DIR`: the repository to build from (default: the
//!   one above this crate, `../../..`).
//! - `SWITCHYARD_LIB_DIR`: a directory that already holds the built
//!   library (`libswitchyard.a`; with `system`, `libswitchyard.so`): no
//!   cmake run. The repository's test suite points it at its own build.
//! - `SWITCHYARD_CMAKE_TOOLCHAIN_FILE`: a CMake toolchain file for a cross
//!   build (default for an AArch64 target on another host: the
//!   repository's `cmake/aarch64-linux-gnu.cmake`).
//! - `PKG_CONFIG`, `PKG_CONFIG_PATH`: the pkg-config command and its search
//!   path (feature `system`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for v in [
        "SWITCHYARD_SOURCE_DIR",
        "SWITCHYARD_LIB_DIR",
        "SWITCHYARD_CMAKE_TOOLCHAIN_FILE",
        "PKG_CONFIG",
        "PKG_CONFIG_PATH",
        "PKG_CONFIG_LIBDIR",
        "PKG_CONFIG_SYSROOT_DIR",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    // docs.rs builds the documentation without a C toolchain: nothing to
    // link for rustdoc.
    if env::var_os("DOCS_RS").is_some() {
        return;
    }
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        fail("libswitchyard is a Linux library: this target is not Linux");
    }
    if env::var_os("CARGO_FEATURE_SYSTEM").is_some() {
        link_system();
    } else {
        link_static();
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("switchyard-sys: {msg}");
    std::process::exit(1);
}

fn out_dir() -> PathBuf {
    PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
}

/// The repository's top directory: SWITCHYARD_SOURCE_DIR, else the one
/// this crate sits in (bindings/rust/switchyard-sys).
fn source_dir() -> PathBuf {
    let dir = match env::var_os("SWITCHYARD_SOURCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let m = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap());
            m.join("../../..")
        }
    };
    if !dir.join("CMakeLists.txt").is_file() || !dir.join("include/switchyard.h").is_file() {
        fail(&format!(
            "no switchyard sources at {} (CMakeLists.txt, include/switchyard.h): \
             build the crate inside the switchyard repository, set \
             SWITCHYARD_SOURCE_DIR to one, set SWITCHYARD_LIB_DIR to a built \
             library, or enable the `system` feature",
            dir.display()
        ));
    }
    dir.canonicalize().unwrap_or(dir)
}

fn link_static() {
    let src = source_dir();
    let built = match env::var_os("SWITCHYARD_LIB_DIR") {
        Some(d) => PathBuf::from(d).join("libswitchyard.a"),
        None => cmake_build(&src),
    };
    let data =
        fs::read(&built).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", built.display())));
    let lib = out_dir().join("lib");
    fs::create_dir_all(&lib).unwrap();
    let mut data = data;
    let n = retain_record_sections(&mut data)
        .unwrap_or_else(|e| fail(&format!("{}: {e}", built.display())));
    if n == 0 {
        fail(&format!(
            "{}: no sy_* record section found: not libswitchyard.a?",
            built.display()
        ));
    }
    fs::write(lib.join("libswitchyard.a"), &data).unwrap();
    println!("cargo:rerun-if-changed={}", built.display());
    println!("cargo:rustc-link-search=native={}", lib.display());
    println!("cargo:rustc-link-lib=static=switchyard");
    // Libs.private of switchyard.pc
    for l in ["pthread", "dl", "m"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
    // For dependents' build scripts (DEP_SWITCHYARD_INCLUDE, ...): C code
    // of a mixed crate compiles against the same headers.
    println!("cargo:include={}", src.join("include").display());
    println!("cargo:root={}", src.display());
    println!("cargo:static=1");
}

/// Configures and builds the static library with cmake in OUT_DIR; its
/// path.
fn cmake_build(src: &Path) -> PathBuf {
    for d in ["src", "include", "cmake", "CMakeLists.txt"] {
        println!("cargo:rerun-if-changed={}", src.join(d).display());
    }
    let build = out_dir().join("cmake-build");
    let cmake = env::var("CMAKE").unwrap_or_else(|_| "cmake".into());
    let mut cfg = Command::new(&cmake);
    cfg.arg("-S").arg(src).arg("-B").arg(&build);
    // Ninja when there is one, unless an earlier configure of this
    // directory chose another generator (cmake refuses to switch).
    if !build.join("CMakeCache.txt").exists()
        && Command::new("ninja").arg("--version").output().is_ok()
    {
        cfg.args(["-G", "Ninja"]);
    }
    // The library only: tests, benchmarks, examples, the tool and the
    // fuzzers take most of the build's time and are not linked.
    cfg.args([
        "-DSWITCHYARD_BUILD_TESTS=OFF",
        "-DSWITCHYARD_BUILD_BENCH=OFF",
        "-DSWITCHYARD_BUILD_EXAMPLES=OFF",
        "-DSWITCHYARD_BUILD_TOOLS=OFF",
        "-DSWITCHYARD_FUZZ=OFF",
    ]);
    let profile = if env::var("PROFILE").as_deref() == Ok("debug") {
        "Debug"
    } else {
        "RelWithDebInfo"
    };
    cfg.arg(format!("-DCMAKE_BUILD_TYPE={profile}"));
    if let Some(tc) = toolchain_file(src) {
        cfg.arg(format!("-DCMAKE_TOOLCHAIN_FILE={}", tc.display()));
    }
    run(&mut cfg, "cmake (configure)");
    let mut b = Command::new(&cmake);
    b.arg("--build")
        .arg(&build)
        .args(["--target", "switchyard_static"]);
    if let Ok(j) = env::var("NUM_JOBS") {
        b.args(["--parallel", &j]);
    }
    run(&mut b, "cmake --build");
    build.join("libswitchyard.a")
}

/// The toolchain file of a cross build: SWITCHYARD_CMAKE_TOOLCHAIN_FILE,
/// else the repository's own for an AArch64 target built elsewhere.
fn toolchain_file(src: &Path) -> Option<PathBuf> {
    if let Some(f) = env::var_os("SWITCHYARD_CMAKE_TOOLCHAIN_FILE") {
        return Some(PathBuf::from(f));
    }
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    if target != host && target.starts_with("aarch64-") && target.contains("linux-gnu") {
        let f = src.join("cmake/aarch64-linux-gnu.cmake");
        return f.is_file().then_some(f);
    }
    None
}

fn run(cmd: &mut Command, what: &str) {
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => fail(&format!("{what} failed ({s}): {cmd:?}")),
        Err(e) => fail(&format!(
            "cannot run {what} ({e}): switchyard-sys builds the C library with \
             cmake >= 3.22 and a C compiler; install them, or enable the \
             `system` feature to link an installed library"
        )),
    }
}

/// Links the shared library: from SWITCHYARD_LIB_DIR, else where
/// pkg-config's switchyard.pc says.
fn link_system() {
    if let Some(d) = env::var_os("SWITCHYARD_LIB_DIR") {
        let d = PathBuf::from(d);
        if !d.join("libswitchyard.so").exists() {
            fail(&format!(
                "no libswitchyard.so in SWITCHYARD_LIB_DIR ({})",
                d.display()
            ));
        }
        println!("cargo:rustc-link-search=native={}", d.display());
        println!("cargo:rustc-link-lib=dylib=switchyard");
        println!("cargo:libdir={}", d.display());
        return;
    }
    let pc = env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let query = |args: &[&str]| -> String {
        let out = Command::new(&pc)
            .args(args)
            .arg("switchyard")
            .output()
            .unwrap_or_else(|e| {
                fail(&format!(
                    "cannot run {pc} ({e}): install pkg-config, or set SWITCHYARD_LIB_DIR"
                ))
            });
        if !out.status.success() {
            fail(&format!(
                "{pc} {} switchyard failed: {}\ninstall the library (README.md, \
                 \"Installing and linking\") and set PKG_CONFIG_PATH to its \
                 lib/pkgconfig, or build without the `system` feature",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let libs = query(&["--libs"]);
    for w in libs.split_whitespace() {
        if let Some(d) = w.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={d}");
        } else if let Some(l) = w.strip_prefix("-l") {
            println!("cargo:rustc-link-lib=dylib={l}");
        }
    }
    let libdir = query(&["--variable=libdir"]);
    if !libdir.is_empty() {
        println!("cargo:libdir={libdir}");
    }
    let inc = query(&["--variable=includedir"]);
    if !inc.is_empty() {
        println!("cargo:include={inc}");
    }
}

/// Marks every `sy_*` section of every ELF object in the archive
/// SHF_GNU_RETAIN; returns how many it marked.
///
/// Why: the library finds its own records (alternatives, run-time
/// constants inside its copy routine) through the linker's
/// `__start_SECTION`/`__stop_SECTION`. GNU ld keeps every section such a
/// symbol names; LLD, Rust's default linker on x86_64-unknown-linux-gnu
/// since 1.90, applies `-z start-stop-gc` under `--gc-sections`: a section
/// nothing else references is dropped and the link fails ("undefined
/// hidden symbol: __start_sy_altinstr"). A dependency cannot add
/// `-z nostart-stop-gc` to its dependents' links, so the flag that LLD
/// honours goes on the sections themselves, in our copy of the archive.
fn retain_record_sections(a: &mut [u8]) -> Result<usize, String> {
    const SHF_GNU_RETAIN: u64 = 0x20_0000;
    if !a.starts_with(b"!<arch>\n") {
        return Err("not an ar archive".into());
    }
    let mut n = 0;
    let mut off = 8;
    while off + 60 <= a.len() {
        let size: usize = std::str::from_utf8(&a[off + 48..off + 58])
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or("malformed archive member header")?;
        let start = off + 60;
        let end = start
            .checked_add(size)
            .filter(|&e| e <= a.len())
            .ok_or("truncated archive")?;
        let m = &mut a[start..end];
        // ELF64, little-endian: x86-64 and AArch64
        if m.len() >= 64 && m.starts_with(b"\x7fELF") && m[4] == 2 && m[5] == 1 {
            let rd16 = |m: &[u8], o: usize| u16::from_le_bytes([m[o], m[o + 1]]) as usize;
            let rd32 =
                |m: &[u8], o: usize| u32::from_le_bytes(m[o..o + 4].try_into().unwrap()) as usize;
            let rd64 = |m: &[u8], o: usize| u64::from_le_bytes(m[o..o + 8].try_into().unwrap());
            let shoff = rd64(m, 0x28) as usize;
            let (shentsize, shnum, shstrndx) = (rd16(m, 0x3a), rd16(m, 0x3c), rd16(m, 0x3e));
            if shentsize < 64 || shoff + shnum * shentsize > m.len() || shstrndx >= shnum {
                return Err("malformed ELF section headers".into());
            }
            let strtab = rd64(m, shoff + shstrndx * shentsize + 0x18) as usize;
            for i in 0..shnum {
                let h = shoff + i * shentsize;
                let name_at = strtab + rd32(m, h);
                let name = m
                    .get(name_at..)
                    .and_then(|s| s.split(|&c| c == 0).next())
                    .unwrap_or(b"");
                let ident = name.iter().all(|&c| c == b'_' || c.is_ascii_alphanumeric());
                if name.starts_with(b"sy_") && ident {
                    let fl = rd64(m, h + 8) | SHF_GNU_RETAIN;
                    m[h + 8..h + 16].copy_from_slice(&fl.to_le_bytes());
                    n += 1;
                }
            }
        }
        off = end + (size & 1);
    }
    Ok(n)
}
