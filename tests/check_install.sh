#!/bin/sh
# check_install.sh SRCDIR BUILDDIR - install into a temporary prefix and
# build a consumer with find_package(switchyard) and with pkg-config; check
# the installed files, the SONAME and that only the API is exported.
set -eu
src=$1; build=$2
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p/prefix" >/dev/null
lib=$p/prefix/lib
[ -d "$lib" ] || lib=$(dirname "$(find "$p/prefix" -name libswitchyard.so | head -1)")
for f in include/switchyard.h include/switchyard/static_key.h include/switchyard/core.h \
	include/switchyard/arch/x86_64.h; do
	[ -f "$p/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
for f in libswitchyard.so libswitchyard.a pkgconfig/switchyard.pc cmake/switchyard/switchyardConfig.cmake; do
	[ -e "$lib/$f" ] || { echo "FAIL: lib/$f not installed"; exit 1; }
done
soname=$(objdump -p "$lib/libswitchyard.so" | awk '/SONAME/ { print $2 }')
[ "$soname" = libswitchyard.so.0 ] || { echo "FAIL: SONAME is '$soname'"; exit 1; }
# Exported functions: the API and the two glue entry points, nothing else.
bad=$(nm -D --defined-only "$lib/libswitchyard.so" | awk '$2 ~ /[TtDdBbRr]/ { sub(/@.*/, "", $3); print $3 }' |
	grep -v -E '^(static_key_|__static_key_|jump_label_rate_limit$|jump_label_init$|switchyard_|sy__register_jump_table$|sy__unregister_jump_table$|sy__object_unloading$|SWITCHYARD_0$)' || true)
[ -z "$bad" ] || { echo "FAIL: exported beyond the API: $bad"; exit 1; }
cmake -S "$src/tests/install" -B "$p/c" -DCMAKE_PREFIX_PATH="$p/prefix" >/dev/null
cmake --build "$p/c" >/dev/null
LD_LIBRARY_PATH=$lib "$p/c/consumer" || { echo "FAIL: consumer (find_package) exit $?"; exit 1; }
"$p/c/consumer_static" || { echo "FAIL: consumer_static exit $?"; exit 1; }
# The README's first way to build against the library: not optional.
command -v pkg-config >/dev/null 2>&1 ||
	{ echo "FAIL: pkg-config not installed (scripts/deps.sh installs it)"; exit 1; }
PKG_CONFIG_PATH=$lib/pkgconfig
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags switchyard) || { echo "FAIL: pkg-config --cflags switchyard"; exit 1; }
libs=$(pkg-config --libs switchyard) || { echo "FAIL: pkg-config --libs switchyard"; exit 1; }
cc $cflags "$src/tests/install/consumer.c" -o "$p/pc" $libs ||
	{ echo "FAIL: consumer (pkg-config) does not build"; exit 1; }
LD_LIBRARY_PATH=$lib "$p/pc" || { echo "FAIL: consumer (pkg-config)"; exit 1; }
echo "pkg-config consumer ok"
echo "PASS: install, find_package, SONAME $soname, exports"
