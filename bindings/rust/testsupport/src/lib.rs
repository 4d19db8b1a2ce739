// SPDX-License-Identifier: MIT
//! Tests only: what the workspace's tests and build scripts share.
//!
//! - [`build`]: for build scripts, the C compiler and archiver of the
//!   target, and compiling a C file into a static library or a program;
//! - [`cdylib`]: a `cdylib` of the workspace beside the running test;
//! - [`command`]: a program run through the emulator of a cross build;
//! - [`tool`]: the repository's `switchyard` tool, or a SKIP.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

/// For build scripts (a build-dependency).
pub mod build {
    use std::env;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The target's `name` tool (CC, AR) as the `cc` crate finds it:
    /// `<NAME>_<target>`, `TARGET_<NAME>`, `<NAME>` (not for a cross
    /// build), else `native`, or its `aarch64-linux-gnu-` form in a cross
    /// build to AArch64 (`cc` becomes `gcc` there).
    pub fn tool(name: &str, native: &str) -> String {
        let target = env::var("TARGET").unwrap();
        let cross = target != env::var("HOST").unwrap();
        let t = target.replace('-', "_");
        for v in [format!("{name}_{t}"), format!("TARGET_{name}"), name.to_string()] {
            println!("cargo:rerun-if-env-changed={v}");
            if let Ok(c) = env::var(&v) {
                if !cross || v != name {
                    return c;
                }
            }
        }
        if cross && target.starts_with("aarch64-") {
            format!("aarch64-linux-gnu-{}", if native == "cc" { "gcc" } else { native })
        } else {
            native.to_string()
        }
    }

    fn out_dir() -> PathBuf {
        PathBuf::from(env::var_os("OUT_DIR").unwrap())
    }

    /// Compiles `src` (relative to the package) with -Werror and the
    /// include directory `inc`, archives it as lib`lib`.a in OUT_DIR and
    /// tells cargo to link it.
    pub fn c_static_lib(src: &str, lib: &str, inc: &Path) {
        println!("cargo:rerun-if-changed={src}");
        let out = out_dir();
        let cc = tool("CC", "cc");
        let obj = out.join(format!("{lib}.o"));
        let st = Command::new(&cc)
            .args(["-c", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&obj)
            .arg("-I")
            .arg(inc)
            .arg(src)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
        assert!(st.success(), "{cc} failed on {src}");
        let a = out.join(format!("lib{lib}.a"));
        let _ = std::fs::remove_file(&a);
        let st = Command::new(tool("AR", "ar"))
            .arg("crs")
            .arg(&a)
            .arg(&obj)
            .status()
            .expect("run ar");
        assert!(st.success());
        println!("cargo:rustc-link-search=native={}", out.display());
        println!("cargo:rustc-link-lib=static={lib}");
    }

    /// Compiles and links `src` into the program `name` in OUT_DIR, with
    /// `libs` (e.g. "-ldl") after it; returns its path.
    pub fn c_program(src: &str, name: &str, libs: &[&str]) -> PathBuf {
        println!("cargo:rerun-if-changed={src}");
        let cc = tool("CC", "cc");
        let exe = out_dir().join(name);
        let st = Command::new(&cc)
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&exe)
            .arg(src)
            .args(libs)
            .status()
            .unwrap_or_else(|e| panic!("cannot run {cc}: {e}"));
        assert!(st.success(), "{cc} failed on {src}");
        exe
    }
}

/// The workspace's `cdylib` `file` (e.g. "libswitchyard_plugin_tests.so"):
/// beside the running test (target/<profile>/deps/), or one level up
/// where cargo copies a library it was asked to build.
pub fn cdylib(file: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|d| d.join(file))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no {file} near {}", deps.display()))
}

/// `program`, run through the emulator of `SY_TEST_EMULATOR` (its words
/// space-separated) in a cross build, directly otherwise.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let emu = std::env::var("SY_TEST_EMULATOR").unwrap_or_default();
    let mut words = emu.split_whitespace();
    match words.next() {
        Some(w) => {
            let mut c = Command::new(w);
            c.args(words).arg(program);
            c
        }
        None => Command::new(program),
    }
}

/// This test program itself run as a child ([`command`]) in the test
/// `child_mode`, alone (the caller's environment says what it does).
pub fn child() -> Command {
    let mut c = command(std::env::current_exe().unwrap());
    c.args(["child_mode", "--exact", "--nocapture", "--test-threads=1"]);
    c
}

/// The repository's `switchyard` tool: `SWITCHYARD_TOOL`, else
/// build/tools/switchyard of the repository. None (said on stderr as a
/// SKIP) when it is not there, unless `SWITCHYARD_TEST_REQUIRE_TOOL` is
/// set: then a panic.
pub fn tool() -> Option<PathBuf> {
    let t = match std::env::var_os("SWITCHYARD_TOOL") {
        Some(t) => PathBuf::from(t),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../build/tools/switchyard"),
    };
    if t.is_file() {
        return Some(t);
    }
    if std::env::var_os("SWITCHYARD_TEST_REQUIRE_TOOL").is_some() {
        panic!("the switchyard tool is not at {}", t.display());
    }
    eprintln!(
        "SKIP: the switchyard tool is not at {} (build it: cmake --build build \
         --target switchyard_cli; or set SWITCHYARD_TOOL)",
        t.display()
    );
    None
}

/// An object loaded with `dlopen(RTLD_NOW)`, its functions by name
/// (`dlsym`), unloaded with [`Lib::close`].
pub struct Lib(*mut core::ffi::c_void);

#[link(name = "dl")]
unsafe extern "C" {
    fn dlopen(path: *const core::ffi::c_char, flags: core::ffi::c_int) -> *mut core::ffi::c_void;
    fn dlsym(h: *mut core::ffi::c_void, name: *const core::ffi::c_char) -> *mut core::ffi::c_void;
    fn dlclose(h: *mut core::ffi::c_void) -> core::ffi::c_int;
    fn dlerror() -> *const core::ffi::c_char;
}

impl Lib {
    /// Loads `path` (its constructors run); panics with dlerror()'s
    /// message when it cannot.
    pub fn open(path: &std::path::Path) -> Lib {
        let p = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path; the object's constructors are
        // the caller's to trust (the workspace's own cdylibs).
        let h = unsafe { dlopen(p.as_ptr(), 2 /* RTLD_NOW */) };
        // SAFETY: dlerror's string, when dlopen failed.
        assert!(!h.is_null(), "dlopen {}: {:?}", path.display(), unsafe {
            std::ffi::CStr::from_ptr(dlerror())
        });
        Lib(h)
    }

    /// The function `name` of the object, as a `T` (a function pointer
    /// type); panics when there is none.
    ///
    /// # Safety
    /// `name` is a function of type `T`, and is not called after
    /// [`Lib::close`].
    pub unsafe fn sym<T: Copy>(&self, name: &str) -> T {
        let n = std::ffi::CString::new(name).unwrap();
        // SAFETY: a handle from dlopen.
        let p = unsafe { dlsym(self.0, n.as_ptr()) };
        assert!(!p.is_null(), "no {name} in the object");
        // SAFETY: the caller names a function of type T.
        unsafe { std::mem::transmute_copy(&p) }
    }

    /// Unloads the object (its destructors run): dlclose()'s result.
    pub fn close(self) -> i32 {
        // SAFETY: a handle from dlopen, closed once (self is consumed).
        unsafe { dlclose(self.0) }
    }
}

// sigset_t of glibc on Linux (1024 bits) and the calls that block signals.
#[repr(C)]
struct SigSet([u64; 16]);
const SIG_BLOCK: i32 = 0;
unsafe extern "C" {
    fn sigfillset(set: *mut SigSet) -> i32;
    fn pthread_sigmask(how: i32, set: *const SigSet, old: *mut SigSet) -> i32;
}

/// Blocks every signal in the calling thread (pthread_sigmask), and
/// checks that it took (SIGUSR1 and SIGTERM blocked after it): for the
/// torture tests' workers that run the sites with every signal blocked.
pub fn block_all_signals() {
    let mut all = SigSet([0; 16]);
    let mut now = SigSet([0; 16]);
    // SAFETY: valid sigset_t-sized buffers.
    unsafe {
        assert_eq!(sigfillset(&mut all), 0);
        assert_eq!(pthread_sigmask(SIG_BLOCK, &all, std::ptr::null_mut()), 0);
        assert_eq!(pthread_sigmask(SIG_BLOCK, std::ptr::null(), &mut now), 0);
    }
    // SIGUSR1 (10) and SIGTERM (15) are blocked now
    assert!(now.0[0] & (1 << 9) != 0 && now.0[0] & (1 << 14) != 0);
}
