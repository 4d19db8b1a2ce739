// SPDX-License-Identifier: MIT
//! The static-keys crate's tests/ui_test.rs compiles tests/ui/no_entries.rs
//! with trybuild and expects it to build and run: a program without any
//! key calling `global_init()`. Here the same file is compiled into this
//! test and its `main` run (trybuild would build the C library a second
//! time in its own target directory, minutes under qemu, to check the same
//! thing): it must compile, link (no sites: `__start_`/`__stop_` of an
//! empty section still resolve) and return.
mod upstream {
    include!(concat!(env!("OUT_DIR"), "/no_entries.rs"));
    pub fn run() {
        main()
    }
}

#[test]
fn no_entries() {
    upstream::run();
}
