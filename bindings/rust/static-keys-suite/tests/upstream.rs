// SPDX-License-Identifier: MIT
//! The static-keys crate's tests/basic.rs (0.8.2), unedited, against
//! switchyard's compat names (the lib of this package is named
//! `static_keys`). Upstream says to run it with `--test-threads=1`
//! because flipping a key while other threads run is unsafe there; here
//! it runs with the default threads: both tests flip keys while the other
//! runs, which switchyard allows.
include!(concat!(env!("OUT_DIR"), "/basic.rs"));
