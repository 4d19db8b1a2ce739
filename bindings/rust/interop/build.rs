// SPDX-License-Identifier: MIT
//! Compiles c/interop.c against the headers switchyard-sys links the
//! library of (DEP_SWITCHYARD_INCLUDE), into a static library the tests
//! link. The C compiler as the `cc` crate finds it: `CC_<target>`,
//! `TARGET_CC`, `CC`, else `cc` (a cross build to AArch64:
//! `aarch64-linux-gnu-gcc`); `ar` likewise.

fn main() {
    let inc =
        std::env::var("DEP_SWITCHYARD_INCLUDE").expect("switchyard-sys gives its include directory");
    switchyard_testsupport::build::c_static_lib("c/interop.c", "interop_c", std::path::Path::new(&inc));
}
