// SPDX-License-Identifier: MIT
//! Compiles c/driver.c, the C program of tests/c_driver.rs, into OUT_DIR
//! (its path in SY_C_DRIVER). The C compiler as interop/build.rs finds it:
//! `CC_<target>`, `TARGET_CC`, `CC`, else `cc` (a cross build to AArch64:
//! `aarch64-linux-gnu-gcc`).

fn main() {
    let exe = switchyard_testsupport::build::c_program("c/driver.c", "c_driver", &["-ldl"]);
    println!("cargo:rustc-env=SY_C_DRIVER={}", exe.display());
}
