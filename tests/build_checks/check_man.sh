#!/bin/sh
# SPDX-License-Identifier: MIT
# check_man.sh SRCDIR - the library's man page, doc/man/switchyard.3, stays
# complete as the API grows:
#  - every function declared SWITCHYARD_API in the public headers, and every
#    name src/libswitchyard.map exports by name, appears in it followed by
#    "(", as a whole word;
#  - every macro the headers define appears in it as a whole word
#    (function-like ones followed by "(");
#  - every environment variable src/ reads with getenv() or secure_getenv()
#    appears in its ENVIRONMENT section;
#  - it and switchyard(1) render without a groff warning, at the default
#    width and at 60 columns (a long word that cannot be broken warns).
# Names of the form SY__* / sy__* are the headers' internals ("not API"),
# include guards and the SWITCHYARD_API attribute macro are not API either.
# Exit 77 (SKIP) when groff is missing (scripts/deps.sh installs it): the
# names are checked first all the same.
set -u
src=$1
page=$src/doc/man/switchyard.3
fail=0
no() { echo "FAIL: $*"; fail=1; }
[ -f "$page" ] || { echo "FAIL: $page does not exist"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -- "$src/include/switchyard.h" "$src"/include/switchyard/*.h \
	"$src"/include/switchyard/arch/*.h

# The page as a reader sees it, near enough: roff comments dropped (a name
# only in a comment is not documented), font changes and the escapes this
# page uses taken out, so that \fBname(\fIx\fB)\fR reads "name(x)".
sed -e '/^\.\\"/d' -e "/^'\\\\\"/d" -e 's/\\".*//' \
	-e 's/\\f\[[^]]*\]//g' -e 's/\\f([A-Za-z0-9][A-Za-z0-9]//g' \
	-e 's/\\f[A-Za-z0-9]//g' -e 's/\\([a-z-][a-z>-]/ /g' \
	-e 's/\\[&:|^]//g' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$page" >"$tmp/text"
# ... and its ENVIRONMENT section alone.
sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$tmp/text" >"$tmp/env"

# Functions: the identifier before the first "(" of each declaration that
# starts with SWITCHYARD_API (some wrap after the return type).
awk '/^[ \t]*SWITCHYARD_API[ \t]/ { d = ""; on = 1 }
	on { d = d " " $0
		if (index(d, "(")) {
			sub(/\(.*/, "", d); sub(/[^A-Za-z0-9_]+$/, "", d)
			sub(/.*[^A-Za-z0-9_]/, "", d); print d; on = 0
		} }' "$@" >"$tmp/fn"
# The version script's names (not its globs): what the .so really exports.
sed -n '/global:/,/local:/s/^[ \t]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' \
	"$src/src/libswitchyard.map" >>"$tmp/fn"
# Macros, function-like and not.
sed -n 's/^[ \t]*#[ \t]*define[ \t][ \t]*\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' \
	"$@" >>"$tmp/fn"
sed -n 's/^[ \t]*#[ \t]*define[ \t][ \t]*\([A-Za-z_][A-Za-z0-9_]*\)\([ \t].*\)\{0,1\}$/\1/p' \
	"$@" >"$tmp/obj"
internal='^(SY__|sy__)|^SWITCHYARD(_[A-Z0-9_]*)?_H$|^SWITCHYARD_API$'
grep -Ev "$internal" "$tmp/fn" | sort -u >"$tmp/fn.api"
grep -Ev "$internal" "$tmp/obj" | sort -u >"$tmp/obj.api"
nfn=$(wc -l <"$tmp/fn.api"); nobj=$(wc -l <"$tmp/obj.api")
# A broken extraction must not pass as "nothing to check".
[ "$nfn" -ge 100 ] && [ "$nobj" -ge 30 ] ||
	no "only $nfn function names and $nobj other macros found in the headers"

while read -r name; do
	grep -qE "(^|[^A-Za-z0-9_])$name[[:space:]]*\\(" "$tmp/text" ||
		no "switchyard.3 does not document $name()"
done <"$tmp/fn.api"
while read -r name; do
	grep -qwF -- "$name" "$tmp/text" ||
		no "switchyard.3 does not document $name"
done <"$tmp/obj.api"

# Environment variables: as src/ names them in its getenv calls.
grep -rhoE '(secure_)?getenv\("[A-Za-z_][A-Za-z0-9_]*"\)' "$src/src" |
	sed 's/.*("\(.*\)")/\1/' | sort -u >"$tmp/vars"
nvar=$(wc -l <"$tmp/vars")
[ "$nvar" -ge 5 ] || no "only $nvar environment variables found in src/"
while read -r name; do
	grep -qwF -- "$name" "$tmp/env" ||
		no "switchyard.3 ENVIRONMENT does not name $name"
done <"$tmp/vars"
echo "names: $nfn functions and function-like macros, $nobj other macros, $nvar environment variables"

# Cross-references to the project's own pages name a page that is installed:
# switchyard(1) and switchyard(3), not SWITCHYARD_KEY_DESCRIPTION(3) (a
# macro documented in switchyard(3); man(1) finds no such page).
for p in "$page" "$src/doc/man/switchyard.1"; do
	sed -e 's/\\f[A-Za-z]//g' -e 's/^\.[A-Z][A-Z]* //' -e 's/ (\([0-9]\))/(\1)/g' "$p" |
		grep -oE '[A-Za-z_][A-Za-z0-9_]*\([0-9]\)' | grep -iE '^(switchyard|sy_|static_|define_)' |
		grep -vxE 'switchyard\((1|3)\)' | sort -u >"$tmp/xref"
	while read -r ref; do
		no "$(basename "$p") refers to $ref, which is not an installed page"
	done <"$tmp/xref"
done

if ! command -v groff >/dev/null 2>&1; then
	[ $fail = 0 ] || exit 1
	echo "SKIP: groff not installed (scripts/deps.sh installs groff-base): pages not rendered"
	exit 77
fi
for p in "$page" "$src/doc/man/switchyard.1"; do
	for ll in "" -rLL=60n; do
		groff -man -Tutf8 -ww -z $ll "$p" >"$tmp/out" 2>&1
		[ ! -s "$tmp/out" ] || no "groff $ll $(basename "$p"): $(cat "$tmp/out")"
	done
done

[ $fail = 0 ] && echo "check_man: all checks passed"
exit $fail
