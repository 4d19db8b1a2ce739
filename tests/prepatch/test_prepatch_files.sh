#!/bin/sh
# SPDX-License-Identifier: MIT
# test_prepatch_files.sh CASE TOOL PROG CRPROG TMP [RUNNER] - what `switchyard
# prepatch` does to the file it replaces, one CASE per ctest test:
#  owner     as root, a set-user-ID (set-group-ID) file of another user
#            keeps its owner, group and mode, in place and with -o (it
#            became set-user-ID root); as that other user, someone else's
#            file is refused in place, and -o makes a copy without the
#            set-user-ID bit (needs root and the user nobody);
#  xattr     extended attributes are kept: a user attribute, file
#            capabilities (root), an ACL; a default ACL of the directory
#            gives the new file no ACL the original lacked;
#  symlink   a symbolic link (a chain, into another directory) is followed:
#            the file it names is patched, the links stay; -o through a
#            link likewise; -o to a dangling link is refused;
#  namemax   a file whose name is NAME_MAX (255) bytes long;
#  notfile   -o naming a FIFO, a character device (root: a copy of
#            /dev/null's) or a link to one is refused (exit 1, "not a
#            regular file"), and the node is left as it was;
#  copyreloc a TRUE key of a library copied into the executable
#            (R_X86_64_COPY, R_AARCH64_COPY) is listed as the library's,
#            state unknown, and prepatch leaves its site as compiled.
# PROG is a program with keys (pp_prog), CRPROG the copy relocation one.
# RUNNER: the words of the command that runs the programs (a cross build's
# emulator; TOOL is then a script that runs the tool through it), or -.
set -u
case=$1 tool=$2 prog=$3 crprog=$4 tmp=$5 runner=${6:--}
fail=0 ran=0
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
no() { echo "FAIL: $*"; fail=1; }
skip() { echo "SKIP: $*"; exit 77; }
# shellcheck disable=SC2086 # the runner's words, split on purpose
run() { if [ "$runner" = - ]; then "$@"; else $runner "$@"; fi; }
leftover() {	# leftover DIR...: a temporary file left behind
	for dir in "$@"; do
		ls -A "$dir" | grep -q '^\.sy-prepatch\.' &&
			no "a temporary file was left in $dir"
	done
}
"$tool" prepatch "$prog" -o "$tmp/ref" >/dev/null || no "prepatch -o ref"
cmp -s "$prog" "$tmp/ref" && no "control: prepatch changed nothing in PROG"
patched() {	# patched FILE WHAT: FILE holds the prepatched program
	cmp -s "$1" "$tmp/ref" || no "$2: not prepatched"
}

case $case in
owner)
	[ "$(id -u)" = 0 ] || skip "needs root (it gives files to another user)"
	id nobody >/dev/null 2>&1 || skip "no user nobody"
	ng=$(id -g nobody)
	d=$tmp/own
	mkdir "$d"
	for m in 4755 2755 6755; do
		cp "$prog" "$d/p$m" && chown "nobody:$ng" "$d/p$m" &&
			chmod "$m" "$d/p$m" || exit 1
		"$tool" prepatch "$d/p$m" >"$d/out" 2>&1 ||
			{ no "prepatch of a $m file"; cat "$d/out"; }
		got=$(stat -c '%u:%g %a' "$d/p$m")
		[ "$got" = "$(id -u nobody):$ng $m" ] ||
			no "a $m file of nobody became $got"
		patched "$d/p$m" "a $m file of nobody"
		# -o OUT: root can give OUT the original's owner: it does
		cp -p "$prog" "$d/s$m" && chown "nobody:$ng" "$d/s$m" &&
			chmod "$m" "$d/s$m" || exit 1
		"$tool" prepatch "$d/s$m" -o "$d/o$m" >"$d/out" 2>&1 ||
			{ no "prepatch -o of a $m file"; cat "$d/out"; }
		got=$(stat -c '%u:%g %a' "$d/o$m")
		[ "$got" = "$(id -u nobody):$ng $m" ] ||
			no "-o OUT of a $m file of nobody: OUT is $got"
	done
	leftover "$d"
	# as nobody, in a directory of nobody's
	mkdir "$d/nb" && chown nobody "$d/nb" || exit 1
	cp "$prog" "$d/nb/rootfile" && chmod 4755 "$d/nb/rootfile" || exit 1
	cp -p "$d/nb/rootfile" "$d/before"
	asnb() { setpriv --reuid=nobody --regid="$ng" --clear-groups "$@"; }
	if ! asnb "$tool" list "$d/nb/rootfile" >/dev/null 2>&1; then
		echo "note: the tool cannot run as nobody from here: the" \
		     "non-root half is not checked"
	else
		asnb "$tool" prepatch "$d/nb/rootfile" >"$d/out" 2>&1
		[ $? = 1 ] || no "nobody replaced root's file: exit status"
		grep -q "cannot keep its owner and group (uid 0, gid 0).*nothing written" \
			"$d/out" || { no "refusal message"; cat "$d/out"; }
		cmp -s "$d/nb/rootfile" "$d/before" ||
			no "nobody's refused prepatch changed root's file"
		[ "$(stat -c '%u %a' "$d/nb/rootfile")" = "0 4755" ] ||
			no "root's file changed owner or mode"
		asnb "$tool" prepatch "$d/nb/rootfile" -o "$d/nb/mine" \
			>"$d/out" 2>&1 || { no "nobody's -o"; cat "$d/out"; }
		[ "$(stat -c '%u %a' "$d/nb/mine")" = "$(id -u nobody) 755" ] ||
			no "nobody's copy of a set-user-ID root file:" \
			   "$(stat -c '%u %a' "$d/nb/mine")"
		grep -q "without its set-user-ID bit" "$d/out" ||
			no "the dropped set-user-ID bit is not said"
		patched "$d/nb/mine" "nobody's -o copy"
		leftover "$d/nb"
	fi
	;;
xattr)
	d=$tmp/xattr
	mkdir "$d" "$d/dacl" && cp "$prog" "$d/p" && cp "$prog" "$d/dacl/p" ||
		exit 1
	# set what the file system and our privileges allow; check those
	python3 - "$d/p" "$(id -u nobody 2>/dev/null || echo 65534)" \
		>"$d/set" <<'PY' || no "setting attributes"
import os, struct, sys
p, nb = sys.argv[1], int(sys.argv[2])
U = 0xffffffff
acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in
      [(1, 7, U), (2, 4, nb), (4, 5, U), (0x10, 5, U), (0x20, 5, U)])
# file capabilities v2: cap_net_raw (13) permitted and effective
cap = struct.pack('<IIIII', 0x02000001, 1 << 13, 0, 0, 0)
for name, val in [('user.sy_test', b'kept'), ('security.capability', cap),
                  ('system.posix_acl_access', acl)]:
    try:
        os.setxattr(p, name, val)
        print(name)
    except OSError as e:
        print('note: %s not settable here: %s' % (name, e), file=sys.stderr)
PY
	[ -s "$d/set" ] || skip "no extended attribute can be set here"
	python3 -c 'import os,sys; [print("%s %s" % (n, os.getxattr(sys.argv[1], n).hex())) for n in sorted(os.listxattr(sys.argv[1]))]' \
		"$d/p" >"$d/before"
	"$tool" prepatch "$d/p" >"$d/out" 2>&1 || { no "prepatch"; cat "$d/out"; }
	patched "$d/p" "the file with attributes"
	python3 -c 'import os,sys; [print("%s %s" % (n, os.getxattr(sys.argv[1], n).hex())) for n in sorted(os.listxattr(sys.argv[1]))]' \
		"$d/p" >"$d/after"
	while read -r name; do
		grep -q "^$name " "$d/after" || no "$name was lost"
	done <"$d/set"
	cmp -s "$d/before" "$d/after" ||
		{ no "the attributes changed"; diff "$d/before" "$d/after"; }
	[ "$(stat -c %a "$d/p")" = "$(stat -c %a "$prog")" ] || no "mode"
	# a default ACL on the directory: the new file would inherit an ACL
	if python3 - "$d/dacl" <<'PY'
import os, struct, sys
U = 0xffffffff
acl = struct.pack('<I', 2) + b''.join(struct.pack('<HHI', *e) for e in
      [(1, 7, U), (2, 7, 65534), (4, 5, U), (0x10, 7, U), (0x20, 5, U)])
os.setxattr(sys.argv[1], 'system.posix_acl_default', acl)
PY
	then
		"$tool" prepatch "$d/dacl/p" >"$d/out" 2>&1 ||
			{ no "prepatch in a default-ACL directory"; cat "$d/out"; }
		patched "$d/dacl/p" "the file in a default-ACL directory"
		python3 -c 'import os,sys; sys.exit("system.posix_acl_access" in os.listxattr(sys.argv[1]))' \
			"$d/dacl/p" || no "the file gained an ACL from its directory"
	else
		echo "note: no default ACL here: that half is not checked"
	fi
	leftover "$d" "$d/dacl"
	;;
symlink)
	d=$tmp/link
	mkdir "$d" "$d/other" || exit 1
	cp "$prog" "$d/p.1.0" && ln -s p.1.0 "$d/p.1" && ln -s "$d/p.1" "$d/p" ||
		exit 1
	"$tool" prepatch "$d/p" >"$d/out" 2>&1 || { no "prepatch LINK"; cat "$d/out"; }
	[ -L "$d/p" ] && [ -L "$d/p.1" ] || no "a link was replaced by a file"
	[ "$(readlink "$d/p.1")" = p.1.0 ] || no "the link's target changed"
	patched "$d/p.1.0" "the link's final target"
	grep -qF -- "$d/p -> $(realpath "$d/p.1.0"): " "$d/out" ||
		{ no "the report does not name the file written"; cat "$d/out"; }
	# the target in another directory: the temporary goes beside it
	cp "$prog" "$d/other/q" && ln -s other/q "$d/q" || exit 1
	"$tool" prepatch "$d/q" >/dev/null || no "prepatch LINK (other directory)"
	[ -L "$d/q" ] || no "the link to another directory was replaced"
	patched "$d/other/q" "the target in another directory"
	# -o through a link: the file it names is written, the link stays
	: >"$d/o.file" && ln -s o.file "$d/o.link" || exit 1
	"$tool" prepatch "$prog" -o "$d/o.link" >/dev/null || no "prepatch -o LINK"
	[ -L "$d/o.link" ] || no "-o replaced the link"
	patched "$d/o.file" "-o LINK's target"
	# -o to a link to nothing: refused (as cp does), the link left
	ln -s nothing "$d/dangling"
	"$tool" prepatch "$prog" -o "$d/dangling" >"$d/out" 2>&1
	[ $? = 1 ] || no "-o to a dangling link: exit status"
	[ -L "$d/dangling" ] && [ ! -e "$d/nothing" ] ||
		no "-o to a dangling link wrote something"
	leftover "$d" "$d/other"
	;;
notfile)
	d=$tmp/notfile
	mkdir "$d" && mkfifo "$d/fifo" && ln -s fifo "$d/to-fifo" || exit 1
	nodes="fifo to-fifo"
	if [ "$(id -u)" = 0 ] && mknod "$d/null" c 1 3 2>/dev/null; then
		nodes="$nodes null"
	fi
	for n in $nodes; do
		before=$(stat -L -c '%F %t:%T' "$d/$n")
		"$tool" prepatch "$prog" -o "$d/$n" >"$d/out" 2>&1
		[ $? = 1 ] || no "-o $n: exit status"
		grep -q "not a regular file" "$d/out" ||
			{ no "-o $n: no 'not a regular file'"; cat "$d/out"; }
		[ "$(stat -L -c '%F %t:%T' "$d/$n")" = "$before" ] ||
			no "-o $n: the node was replaced"
	done
	[ -L "$d/to-fifo" ] || no "-o to-fifo: the link was replaced"
	leftover "$d"
	;;
namemax)
	d=$tmp/namemax
	mkdir "$d" || exit 1
	name=$(printf '%0255d' 0 | tr 0 p)
	[ ${#name} = 255 ] || exit 1
	cp "$prog" "$d/$name" || skip "no 255-byte file name here"
	"$tool" prepatch "$d/$name" >"$d/out" 2>&1 ||
		{ no "prepatch of a 255-byte name"; cat "$d/out"; }
	patched "$d/$name" "the file with a 255-byte name"
	"$tool" prepatch "$prog" -o "$d/q${name#p}" >"$d/out" 2>&1 ||
		{ no "prepatch -o to a 255-byte name"; cat "$d/out"; }
	patched "$d/q${name#p}" "-o OUT with a 255-byte name"
	leftover "$d"
	;;
copyreloc)
	run "$crprog" >"$tmp/run.out" 2>&1 ||
		{ no "premise: cr_on is not on at run time"; cat "$tmp/run.out"; }
	if command -v readelf >/dev/null; then
		readelf -rW "$crprog" | grep -Eq 'R_(X86_64|AARCH64)_COPY.* cr_on' ||
			skip "the linker made no copy relocation of cr_on"
	fi
	"$tool" list "$crprog" >"$tmp/list.txt" 2>&1 || no "list"
	grep -q "^key cr_on (defined in .*libcr\.so, copied into this file by a copy relocation)  initial unknown, 1 site$" \
		"$tmp/list.txt" || { no "list FILE text"; grep '^key' "$tmp/list.txt"; }
	"$tool" list "$crprog" --json >"$tmp/list.json" || no "list --json"
	python3 - "$tmp/list.json" <<'PY' || no "list FILE --json"
import json, sys
d = json.load(open(sys.argv[1]))
k = [k for k in d['keys'] if k['name'] == 'cr_on']
assert len(k) == 1, d['keys']
k = k[0]
assert k['copy_relocation'] is True and k['defined'] is False, k
assert k['initial'] == 'unknown', k
assert (k['defined_in'] or '').endswith('/libcr.so'), k
PY
	"$tool" prepatch "$crprog" -o "$tmp/cr.pp" --json >"$tmp/pp.json" ||
		no "prepatch"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["elsewhere"] == 1 and d["already"] == 0 and d["written"] == 0, d' \
		"$tmp/pp.json" || { no "prepatch counted the copied key's site"; cat "$tmp/pp.json"; }
	cmp -s "$crprog" "$tmp/cr.pp" || no "prepatch changed the copied key's site"
	run "$tmp/cr.pp" >/dev/null 2>&1 || no "the prepatched copy does not run"
	;;
*)
	echo "unknown case $case"; exit 2 ;;
esac
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
