#!/bin/sh
# cargo_test.sh SRC - `cargo test` of the Rust crates (SRC/bindings/rust/)
# against this build: its static library (SWITCHYARD_LIB_DIR), its tool
# (SWITCHYARD_TOOL), cargo's output in the build directory
# (CARGO_TARGET_DIR); tests/rust/CMakeLists.txt sets them. In a cross
# build SY_CARGO_TARGET names the Rust target, SY_CARGO_LINKER,
# SY_CARGO_CC, SY_CARGO_AR its tools and SY_CARGO_RUNNER the emulator.
#
# The crates depend on nothing outside their workspace (Cargo.lock says
# so): cargo runs offline, and --locked holds it to the lock file.
set -u
src=$1
if ! command -v cargo >/dev/null 2>&1; then
	echo "SKIP: cargo not found (Rust >= 1.87, e.g. from rustup.rs)"
	exit 77
fi
# asm! label operands: Rust 1.87
v=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
set -- $v
if [ -z "$v" ] || { [ "$1" -eq 1 ] && [ "$2" -lt 87 ]; }; then
	echo "SKIP: rustc ${1:-?}.${2:-?} is older than 1.87 (asm! label operands)"
	exit 77
fi
set --
if [ -n "${SY_CARGO_TARGET:-}" ]; then
	t=$SY_CARGO_TARGET
	lib=$(rustc --print target-libdir --target "$t" 2>/dev/null)
	if ! ls "$lib"/libstd-* >/dev/null 2>&1; then
		echo "SKIP: Rust's standard library for $t is not installed" \
			"(rustup target add $t)"
		exit 77
	fi
	up=$(echo "$t" | tr 'a-z-' 'A-Z_')
	low=$(echo "$t" | tr '-' '_')
	export "CARGO_TARGET_${up}_LINKER=$SY_CARGO_LINKER"
	export "CARGO_TARGET_${up}_RUNNER=$SY_CARGO_RUNNER"
	export "CC_${low}=$SY_CARGO_CC" "AR_${low}=$SY_CARGO_AR"
	set -- --target "$t"
fi
exec cargo test --offline --locked \
	--manifest-path "$src/bindings/rust/Cargo.toml" --workspace "$@"
