#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run_rust_static_keys.sh - the peer figure for peers_flip: latency of one
# enable + one disable of a key with 1, 100, 1,000 and 10,000 sites, with
# the Rust crate static-keys 0.8.2 (single-threaded). Builds the Cargo
# project in bench/peers/rust-static-keys/ (release; the suite's PEERS
# builds the same project) and runs it; its stdout is one JSON object per
# site count, passed through unchanged. Diagnostics on stderr.
#
# Usage: run_rust_static_keys.sh [CARGO_TARGET_DIR] [SAMPLES]
#   CARGO_TARGET_DIR defaults to /tmp/sy-rust-static-keys-target
#   SAMPLES defaults to 201 (the program reduces it for very slow keys)
# Exit status 77 (skip) when cargo is not installed.

set -eu

if ! command -v cargo >/dev/null 2>&1; then
	echo "SKIP: cargo not installed"
	exit 77
fi

here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
CARGO_TARGET_DIR=${1:-/tmp/sy-rust-static-keys-target}
export CARGO_TARGET_DIR

cargo build --release \
	--manifest-path "$here/../peers/rust-static-keys/Cargo.toml" >&2
exec "$CARGO_TARGET_DIR/release/sy-bench-rust-static-keys" ${2:+"$2"}
