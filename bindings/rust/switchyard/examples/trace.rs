// SPDX-License-Identifier: MIT
//! A key set from outside the program:
//!
//! ```sh
//! cargo run --example trace                                   # no trace
//! SWITCHYARD_KEYS='trace::TRACE=on' cargo run --example trace  # traces
//! switchyard list target/debug/examples/trace                 # its key and site
//! ```
//!
//! The program calls nothing of the crate but the macros: its sites are
//! registered all the same, before `main` (the crate's per-object glue).

use switchyard::{define_static_key_false, static_branch_unlikely};

define_static_key_false!(TRACE);

fn handle(x: u32) -> u32 {
    if static_branch_unlikely!(TRACE) {
        println!("trace: handle({x})");
    }
    x * 2
}

fn main() {
    let sum: u32 = (0..3).map(handle).sum();
    println!("sum {sum}");
}
