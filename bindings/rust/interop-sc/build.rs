// SPDX-License-Identifier: MIT
//! Compiles c/sc.c against the headers switchyard-sys links the library
//! of (DEP_SWITCHYARD_INCLUDE), into a static library the tests link; the
//! compiler and archiver found as ../interop/build.rs finds them
//! (`CC_<target>`, `TARGET_CC`, `CC`, else `cc`; a cross build to AArch64:
//! `aarch64-linux-gnu-gcc`).

fn main() {
    let inc =
        std::env::var("DEP_SWITCHYARD_INCLUDE").expect("switchyard-sys gives its include directory");
    switchyard_testsupport::build::c_static_lib("c/sc.c", "interop_sc_c", std::path::Path::new(&inc));
}
