// SPDX-License-Identifier: MIT
//! Tests only: `static_keys` as a port would see it, switchyard's
//! [`switchyard::compat`] under the other crate's name. The `static-keys`
//! crate's own test files (0.8.2, fetched by cargo) run against it in
//! `tests/upstream.rs`.
pub use switchyard::compat::*;
