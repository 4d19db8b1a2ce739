#!/bin/sh
# check_install.sh SRCDIR BUILDDIR - install into a temporary prefix and
# build a consumer with find_package(switchyard) and with pkg-config; check
# the installed files, the SONAME and that only the API is exported. Then
# the same consumers against two more layouts of a second build: a
# multiarch libdir (lib/x86_64-linux-gnu, prefix /usr, DESTDIR) and an
# absolute libdir, checking the directories the .pc names.
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
# The library's man page, under whatever CMAKE_INSTALL_MANDIR is.
[ -n "$(find "$p/prefix" -path '*/man3/switchyard.3')" ] ||
	{ echo "FAIL: man3/switchyard.3 not installed"; exit 1; }
# The suppression file for helgrind and DRD (README), under the data dir.
[ -n "$(find "$p/prefix" -path '*/switchyard/switchyard.supp')" ] ||
	{ echo "FAIL: share/switchyard/switchyard.supp not installed"; exit 1; }
soname=$(objdump -p "$lib/libswitchyard.so" | awk '/SONAME/ { print $2 }')
[ "$soname" = libswitchyard.so.0 ] || { echo "FAIL: SONAME is '$soname'"; exit 1; }
# Exported functions: the API and the two glue entry points, nothing else.
bad=$(nm -D --defined-only "$lib/libswitchyard.so" | awk '$2 ~ /[TtDdBbRr]/ { sub(/@.*/, "", $3); print $3 }' |
	grep -v -E '^(static_key_|__static_key_|__static_call_return0$|__static_call_update$|jump_label_rate_limit$|jump_label_init$|boot_cpu_has$|switchyard_|sy__register_jump_table$|sy__unregister_jump_table$|sy__register_static_call_sites$|sy__unregister_static_call_sites$|sy__register_runtime_consts$|sy__unregister_runtime_consts$|sy__register_alternatives$|sy__unregister_alternatives$|sy__object_unloading$|SWITCHYARD_0$)' || true)
[ -z "$bad" ] || { echo "FAIL: exported beyond the API: $bad"; exit 1; }
cmake -S "$src/tests/build_checks/install" -B "$p/c" -DCMAKE_PREFIX_PATH="$p/prefix" >/dev/null
cmake --build "$p/c" >/dev/null
LD_LIBRARY_PATH=$lib "$p/c/consumer" || { echo "FAIL: consumer (find_package) exit $?"; exit 1; }
"$p/c/consumer_static" || { echo "FAIL: consumer_static exit $?"; exit 1; }
# switchyard_prepatch() from the package, with the installed tool
if [ -x "$p/prefix/bin/switchyard" ]; then
	[ -x "$p/c/pp/consumer" ] || { echo "FAIL: switchyard_prepatch() made no copy"; exit 1; }
	LD_LIBRARY_PATH=$lib "$p/c/pp/consumer" || { echo "FAIL: prepatched consumer exit $?"; exit 1; }
	cmp -s "$p/c/consumer" "$p/c/pp/consumer" && { echo "FAIL: switchyard_prepatch() changed nothing"; exit 1; }
	echo "switchyard_prepatch() ok"
fi
# The README's first way to build against the library: not optional.
command -v pkg-config >/dev/null 2>&1 ||
	{ echo "FAIL: pkg-config not installed (scripts/deps.sh installs it)"; exit 1; }
PKG_CONFIG_PATH=$lib/pkgconfig
export PKG_CONFIG_PATH
cflags=$(pkg-config --cflags switchyard) || { echo "FAIL: pkg-config --cflags switchyard"; exit 1; }
libs=$(pkg-config --libs switchyard) || { echo "FAIL: pkg-config --libs switchyard"; exit 1; }
cc $cflags "$src/tests/build_checks/install/consumer.c" -o "$p/pc" $libs ||
	{ echo "FAIL: consumer (pkg-config) does not build"; exit 1; }
LD_LIBRARY_PATH=$lib "$p/pc" || { echo "FAIL: consumer (pkg-config)"; exit 1; }
echo "pkg-config consumer ok"

# Other install layouts, from a second configuration of the library alone
# (the same compilers): the .pc and the CMake package must name the real
# include and library directories whatever the depth of the libdir.
#   multiarch  prefix /usr, libdir lib/x86_64-linux-gnu (Debian's layout),
#              staged with DESTDIR: the files are read where they land,
#              so their paths must be relative to their own location
#   absolute   absolute CMAKE_INSTALL_LIBDIR and _INCLUDEDIR, as Fedora's
#              %cmake passes them (-DCMAKE_INSTALL_LIBDIR=/usr/lib64)
cachevar() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
cc_=$(cachevar CMAKE_C_COMPILER); cxx_=$(cachevar CMAKE_CXX_COMPILER)
canon() { (cd "$1" 2>/dev/null && pwd -P) || echo "(missing: $1)"; }
# only_dir NAME FLAG DIR ARGS...: every FLAG<dir> among ARGS names DIR;
# prints how many there are (fails, saying which, otherwise).
only_dir() {
	name=$1 flag=$2 want=$3 n=0
	shift 3
	for t in "$@"; do
		case $t in "$flag"*) n=$((n + 1))
			[ "$(canon "${t#"$flag"}")" = "$want" ] ||
				{ echo "FAIL ($name): .pc flag $t is not $want" >&2; return 1; };;
		esac
	done
	echo $n
}

# check_layout NAME ROOT INCDIR LIBDIR [CMAKE-ARG]: the installed .pc and
# CMake package under LIBDIR point to INCDIR and LIBDIR; consumers build and
# run with them (find_package searches ROOT, or as CMAKE-ARG says).
check_layout() {
	name=$1 root=$2 inc=$3 ldir=$4 how=${5:-}
	for f in "$inc/switchyard.h" "$ldir/libswitchyard.so" "$ldir/libswitchyard.a" \
		"$ldir/pkgconfig/switchyard.pc" "$ldir/cmake/switchyard/switchyardConfig.cmake"; do
		[ -e "$f" ] || { echo "FAIL ($name): ${f#$p/} not installed"; exit 1; }
	done
	want_i=$(canon "$inc"); want_l=$(canon "$ldir")
	cf=$(PKG_CONFIG_PATH=$ldir/pkgconfig pkg-config --cflags switchyard) &&
	lf=$(PKG_CONFIG_PATH=$ldir/pkgconfig pkg-config --libs switchyard) ||
		{ echo "FAIL ($name): pkg-config switchyard"; exit 1; }
	ni=$(only_dir "$name" -I "$want_i" $cf) || exit 1
	nl=$(only_dir "$name" -L "$want_l" $lf) || exit 1
	[ "$ni" = 1 ] && [ "$nl" = 1 ] ||
		{ echo "FAIL ($name): .pc gives '$cf' '$lf' (want one -I, one -L)"; exit 1; }
	cc $cf "$src/tests/build_checks/install/consumer.c" -o "$p/pc-$name" $lf ||
		{ echo "FAIL ($name): consumer (pkg-config) does not build"; exit 1; }
	LD_LIBRARY_PATH=$ldir "$p/pc-$name" ||
		{ echo "FAIL ($name): consumer (pkg-config) exit $?"; exit 1; }
	rm -rf "$p/c-$name"
	cmake -S "$src/tests/build_checks/install" -B "$p/c-$name" -DCMAKE_PREFIX_PATH="$root" \
		${how:+"$how"} >/dev/null &&
	cmake --build "$p/c-$name" >/dev/null ||
		{ echo "FAIL ($name): consumer (find_package) does not build"; exit 1; }
	dir=$(sed -n 's/^switchyard_DIR:[A-Z]*=//p' "$p/c-$name/CMakeCache.txt")
	[ "$(canon "$dir")" = "$(canon "$ldir/cmake/switchyard")" ] ||
		{ echo "FAIL ($name): find_package used '$dir'"; exit 1; }
	LD_LIBRARY_PATH=$ldir "$p/c-$name/consumer" ||
		{ echo "FAIL ($name): consumer (find_package) exit $?"; exit 1; }
	"$p/c-$name/consumer_static" ||
		{ echo "FAIL ($name): consumer_static (find_package) exit $?"; exit 1; }
	echo "$name layout ok: -I$want_i -L$want_l"
}
configure() {
	cmake -S "$src" -B "$p/b" -DSWITCHYARD_BUILD_TESTS=OFF \
		-DSWITCHYARD_BUILD_BENCH=OFF -DSWITCHYARD_BUILD_EXAMPLES=OFF \
		${cc_:+"-DCMAKE_C_COMPILER=$cc_"} ${cxx_:+"-DCMAKE_CXX_COMPILER=$cxx_"} \
		"$@" >/dev/null || { echo "FAIL: configure $*"; exit 1; }
}
configure -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu
cmake --build "$p/b" >/dev/null || { echo "FAIL: library build (layouts)"; exit 1; }
DESTDIR=$p/stage cmake --install "$p/b" >/dev/null
check_layout multiarch "$p/stage/usr" "$p/stage/usr/include" "$p/stage/usr/lib/x86_64-linux-gnu"
# Only the install paths change: nothing is recompiled.
configure -DCMAKE_INSTALL_PREFIX="$p/abs" -DCMAKE_INSTALL_LIBDIR="$p/abs/lib64" \
	-DCMAKE_INSTALL_INCLUDEDIR="$p/abs/include"
cmake --build "$p/b" >/dev/null || { echo "FAIL: library build (layouts)"; exit 1; }
cmake --install "$p/b" >/dev/null
# (find_package looks in <prefix>/lib64 only where CMake's platform files
# say the system uses it, not on Debian: hence switchyard_DIR.)
check_layout absolute "$p/abs" "$p/abs/include" "$p/abs/lib64" \
	-Dswitchyard_DIR="$p/abs/lib64/cmake/switchyard"

echo "PASS: install, find_package, SONAME $soname, exports; multiarch and absolute libdir"
