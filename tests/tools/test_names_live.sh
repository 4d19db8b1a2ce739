#!/bin/sh
# test_names_live.sh - names of keys and calls as `list FILE`, `list PID`,
# `set`, `call` and SWITCHYARD_KEYS see them, one case per mode:
#   utf8      descriptions: valid UTF-8 as it is in list PID (JSON and
#             text) as in list FILE; a byte that is not UTF-8 and a tab
#             escaped, the same way by both
#   cxx       a C++ program without the C++ runtime loaded: list FILE and
#             list PID give the same names ("(anonymous namespace)::hidden",
#             "local_key(int, char)::lk", the call's target "S::f(int)"),
#             and a listed name, spaces included, works in set and in
#             SWITCHYARD_KEYS
#   stripped  a stripped copy of the program: its keys and its call keep
#             their names in list FILE, list PID, SWITCHYARD_KEYS, set, call
#   replaced  the library and the program replaced on disk while the
#             process runs (an upgrade renames new files over them): names
#             still come from what the process mapped, or are refused
#             (without the capability /proc/PID/map_files needs), never
#             read from the new files: set nm_alpha never flips nm_beta
#   longexe   a program started from a path past 4,096 bytes keeps its names
#   scoped    a static call and keys in C++ namespaces (nested, anonymous),
#             a class's static member key, an array of keys: list FILE
#             and list PID give the same readable names ("net::io::encoder",
#             not its symbol; "feat[0]", not "feat"), and each works as
#             listed in set, call and SWITCHYARD_KEYS ("feat[3]" is that
#             key, not a glob that matches nothing), also in a stripped copy
#   dups      two file-local keys named k (names_dup_a.c, names_dup_b.c):
#             listed as "names_dup_a.c:k" and "names_dup_b.c:k" by both
#             lists; each sets its own key by that name; a bare "k" is
#             refused naming both; in a stripped copy (nothing tells them
#             apart) "k" sets both and says so; with a library that has
#             its own file-local k preloaded, the three are listed by
#             object ("names_dup:names_dup_a.c:k", "libnames_dup_plug.so:k":
#             the library's was a bare "k", which set took for the only k)
#             and a bare "k" is refused
#   plugin    a program and its dlopen()ed plugin each with a file-local
#             key "trace" and a call "hook" (names_plug_main.c,
#             names_plug.c): the listed names change when the plugin
#             loads ("trace", then "names_plug:trace" and
#             "libnames_plug.so:trace"), and every qualified name
#             (OBJECT:name, file.c:name, OBJECT:file.c:name) selects its
#             key before and after, in set, call and SWITCHYARD_KEYS, with
#             the plugin loaded first (LD_PRELOAD) or later; an unqualified
#             "trace" in SWITCHYARD_KEYS sets each object's key
# usage: test_names_live.sh MODE <switchyard> <names_target>
#        <names_target_cxx> <libnames_lib.so> <libnames_lib_v2.so> <tmp dir>
#        <names_scoped_cxx> <names_dup> <names_plug> <libnames_plug.so>
set -u
mode=$1 cli=$2 target=$3 target_cxx=$4 lib=$5 lib2=$6 tmp=$7
scoped=${8:-} dup=${9:-} plug=${10:-} pso=${11:-} dso=${12:-}
fail=0
no() { echo "FAIL: $*"; fail=1; }
rm -rf "$tmp"
mkdir -p "$tmp"
# a short runtime directory: the checkout's path may be long (sun_path)
run=$(mktemp -d /tmp/sy-names.XXXXXX) || exit 1
trap 'exec 3>&- 2>/dev/null; rm -rf "$run"' EXIT
export XDG_RUNTIME_DIR="$run"
unset SWITCHYARD_KEYS

# strip_copy FILE NAME: a stripped copy of FILE at $tmp/NAME (binutils'
# strip: deps.sh installs it; missing, the test fails rather than leave
# the stripped cases out)
strip_copy() {
	command -v strip >/dev/null || { no "strip not installed"; exit 1; }
	cp "$1" "$tmp/$2" && strip "$tmp/$2" || exit 1
}

# preload FILE: a path to FILE (same name) that LD_PRELOAD can carry: ld.so
# splits LD_PRELOAD at spaces and colons, which a checkout's path may hold
preload() {
	mkdir -p "$run/pre" && ln -sf "$1" "$run/pre/${1##*/}" &&
		echo "$run/pre/${1##*/}"
}

# start CMD...: run a target serving its socket, stdin from a FIFO (fd 3);
# pid: its pid once its socket answers
start() {
	rm -f "$tmp/in" "$tmp/out" "$tmp/err" && mkfifo "$tmp/in"
	SWITCHYARD_CONTROL=1 "$@" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	exec 3>"$tmp/in"
	pid=
	for i in $(seq 300); do
		pid=$(sed -n 's/^ready //p' "$tmp/out")
		[ -n "$pid" ] && "$cli" list "$pid" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	no "$mode: target not ready: $(cat "$tmp/err")"
	exit 1
}
# the target's key states, read now (after it read the line $1)
states() {
	n=$(wc -l <"$tmp/out")
	echo "${1:-}" >&3
	for i in $(seq 300); do
		[ "$(wc -l <"$tmp/out")" -gt "$n" ] && break
		sleep 0.1
	done
	tail -n 1 "$tmp/out"
}
stop() {
	exec 3>&-
	wait
}

case $mode in
utf8)
	start "$target"
	"$cli" list "$pid" >"$tmp/pid.txt" || no "list PID"
	"$cli" list "$target" >"$tmp/file.txt" || no "list FILE"
	for f in pid file; do
		grep -qF -- "-- trace every packet — café" "$tmp/$f.txt" ||
			no "list ${f}: the UTF-8 description: $(grep -a net_trace -A1 "$tmp/$f.txt")"
		grep -qF -- '-- bad \xff byte\x09tab' "$tmp/$f.txt" ||
			no "list ${f}: the odd description: $(grep -a -A1 odd_text "$tmp/$f.txt")"
	done
	"$cli" list "$pid" --json >"$tmp/pid.json" || no "list PID --json"
	"$cli" list "$target" --json >"$tmp/file.json" || no "list FILE --json"
	grep -qF '"trace every packet — café"' "$tmp/pid.json" ||
		no "list PID --json: UTF-8 not passed through: $(grep -ao '"description": "trace[^"]*"' "$tmp/pid.json")"
	for f in pid file; do
		python3 - "$tmp/$f.json" <<'PY' || no "list $f --json"
import json, sys
d = {k["name"]: k.get("description") for k in json.load(open(sys.argv[1], encoding="utf-8"))["keys"]}
assert d["net_trace"] == "trace every packet \u2014 caf\u00e9", d
assert d["odd_text"] == "bad \u00ff byte\ttab", d
PY
	done
	stop
	;;
cxx)
	"$cli" list "$target_cxx" --json >"$tmp/file.json" || no "list FILE"
	start "$target_cxx"
	grep -q libstdc "/proc/$pid/maps" &&
		echo "note: the C++ runtime is loaded: the case without it is not tested"
	"$cli" list "$pid" --json >"$tmp/pid.json" || no "list PID"
	python3 - "$tmp/file.json" "$tmp/pid.json" <<'PY' || no "list FILE and list PID disagree"
import json, sys
f = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
fk = sorted(k["name"] for k in f["keys"])
pk = sorted(k["name"] for k in p["keys"])
print("list FILE:", fk, [(c["name"], c["initial_target"]) for c in f["static_calls"]])
print("list PID: ", pk, [(c["name"], c["target"]) for c in p["calls"]])
want = ["(anonymous namespace)::hidden", "inline_key()::ik", "local_key(int, char)::lk", "ns::visible", "template_key<2>()::tk"]
assert fk == pk == want, (fk, pk)
# one entry per site: how many sites depends on the compiler's inlining
# (clang -O3 puts states() into main() twice)
assert sorted({(c["name"], c["initial_target"]) for c in f["static_calls"]}) == [("cxxcall", "S::f(int)")]
assert [(c["name"], c["target"]) for c in p["calls"]] == [("cxxcall", "S::f(int)")]
PY
	"$cli" set "$pid" "(anonymous namespace)::hidden" on >"$tmp/set" ||
		no "set of a name with a space: $(cat "$tmp/set")"
	"$cli" set "$pid" "local_key(int, char)::lk" on >>"$tmp/set" ||
		no "set of a local key: $(cat "$tmp/set")"
	"$cli" set "$pid" "(anonymous namespace)::hid*" off >>"$tmp/set" ||
		no "set of a pattern with a space: $(cat "$tmp/set")"
	s=$(states)
	[ "$s" = "hidden=0 visible=0 local=1 call=7 inline=0" ] || no "states after set: $s"
	"$cli" set "$pid" "inline_key()::ik" on >/dev/null || no "set of an inline function's key"
	s=$(states)
	[ "${s##* }" = "inline=1" ] || no "states after set: $s"
	stop
	# stripped: the name records of the inline function's key (COMDAT
	# statics) survive, one key with its description
	strip_copy "$target_cxx" cxx-stripped
	"$cli" list "$tmp/cxx-stripped" --json >"$tmp/stripped.json" || no "list FILE (stripped)"
	python3 - "$tmp/stripped.json" <<'PY' || no "list FILE of the stripped C++ program"
import json, sys
k = [(k["name"], k.get("description")) for k in json.load(open(sys.argv[1]))["keys"]]
print("stripped:", sorted(k))
assert sorted(n for n, _ in k) == ["hidden", "ik", "lk", "tk", "visible"], k
assert ("ik", "inline key") in k, k
PY
	SWITCHYARD_KEYS='(anonymous namespace)::hidden=on,ns::visible=on' \
		"$target_cxx" </dev/null >"$tmp/env" 2>&1
	grep -q "^hidden=1 visible=1 " "$tmp/env" || no "SWITCHYARD_KEYS: $(cat "$tmp/env")"
	;;
stripped)
	strip_copy "$target" stripped
	readelf -S "$tmp/stripped" 2>/dev/null | grep -q '\.symtab' &&
		no "strip left .symtab"
	"$cli" list "$tmp/stripped" >"$tmp/file.txt" || no "list FILE"
	grep -q "^key net_trace " "$tmp/file.txt" || no "list FILE: $(grep ^key "$tmp/file.txt")"
	grep -q "^  codec " "$tmp/file.txt" || no "list FILE: the call: $(grep -A2 'static call' "$tmp/file.txt")"
	SWITCHYARD_KEYS=net_trace=on start "$tmp/stripped"
	grep -q "^net_trace=1 odd_text=0 codec=1 " "$tmp/out" ||
		no "SWITCHYARD_KEYS: $(cat "$tmp/out" "$tmp/err")"
	"$cli" list "$pid" >"$tmp/pid.txt" || no "list PID"
	grep -q "^odd_text  enabled=false" "$tmp/pid.txt" || no "list PID: $(grep -v '^ ' "$tmp/pid.txt")"
	grep -q "^codec  target=plain" "$tmp/pid.txt" || no "list PID: the call: $(grep -v '^ ' "$tmp/pid.txt")"
	"$cli" set "$pid" odd_text on >/dev/null || no "set odd_text"
	"$cli" call "$pid" codec fast >/dev/null || no "call codec fast"
	s=$(states)
	[ "${s%% nm_*}" = "net_trace=1 odd_text=1 codec=2" ] || no "states: $s"
	stop
	;;
replaced)
	# can this process open /proc/self/map_files/ (CAP_CHECKPOINT_RESTORE
	# or CAP_SYS_ADMIN)? Then names come from there, else they are refused
	mf=$(python3 -c '
import os
d = "/proc/self/map_files"
try:
    os.close(os.open(d + "/" + sorted(os.listdir(d))[0], os.O_RDONLY)); print(1)
except OSError:
    print(0)')
	rounds=$mf
	# and once without that capability, when root can drop it
	if [ "$mf" = 1 ] && [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	   setpriv --bounding-set=-sys_admin,-checkpoint_restore true 2>/dev/null; then
		rounds="1 0"
	fi
	for named in $rounds; do
		drop=
		[ "$named" = 0 ] && [ "$mf" = 1 ] &&
			drop="setpriv --bounding-set=-sys_admin,-checkpoint_restore"
		rm -rf "$tmp/lib" && mkdir "$tmp/lib"
		cp "$lib" "$tmp/lib/libnames_lib.so" && cp "$target" "$tmp/app" || exit 1
		LD_LIBRARY_PATH="$tmp/lib" start $drop "$tmp/app"
		"$cli" list "$pid" >"$tmp/before" || no "list PID"
		grep -q "^nm_alpha " "$tmp/before" || no "before the upgrade: $(grep -v '^ ' "$tmp/before")"
		# the upgrade: new files renamed over the ones the process maps
		cp "$lib2" "$tmp/lib/new.so" && mv "$tmp/lib/new.so" "$tmp/lib/libnames_lib.so"
		cp "$target_cxx" "$tmp/app.new" && mv "$tmp/app.new" "$tmp/app"
		"$cli" list "$pid" >"$tmp/after"
		"$cli" set "$pid" net_trace on >/dev/null ||
			no "named=$named: the replaced program's key: $(grep -v '^ ' "$tmp/after")"
		"$cli" set "$pid" nm_alpha on >"$tmp/set" 2>&1
		rc=$?
		s=$(states)
		case "$named:$rc:$s" in
		*nm_beta=1*) no "named=$named: set nm_alpha flipped nm_beta: $s";;
		1:0:*"nm_alpha=1 nm_beta=0") ;;
		1:*) no "named=$named: set nm_alpha: rc $rc, $s: $(cat "$tmp/set")";;
		0:0:*) no "named=$named: set nm_alpha succeeded without the mapped file: $s";;
		0:*)	grep -q "libnames_lib.so: the file at this path is not known to be the one the process mapped" "$tmp/err" ||
				no "named=$named: no warning: $(cat "$tmp/err")"
			grep -q "^key@0x" "$tmp/after" || no "named=$named: the library's keys: $(grep -v '^ ' "$tmp/after")"
			grep -q "no key matches nm_alpha (2 keys have no name: see the process's log)" "$tmp/set" ||
				no "named=$named: the refusal: $(cat "$tmp/set")";;
		esac
		# a FIFO at the library's path: the process answers (its open
		# of the file there blocked its control thread for good)
		rm -f "$tmp/lib/libnames_lib.so" && mkfifo "$tmp/lib/libnames_lib.so" || exit 1
		timeout 60 "$cli" list "$pid" >"$tmp/fifo.txt" 2>&1 ||
			no "named=$named: list PID with a FIFO at the library's path: $(tail -3 "$tmp/fifo.txt")"
		stop
	done
	;;
longexe)
	# a directory path of about 4,400 bytes, made and entered one
	# component at a time (chdir to a relative name: no system call sees
	# the whole path; a shell's cd may), the program run by a relative name
	rm -f "$tmp/in" "$tmp/out" "$tmp/err" && mkfifo "$tmp/in"
	python3 -c '
import os, shutil, sys
src = os.path.abspath(sys.argv[2])
os.chdir(sys.argv[1])
for i in range(20):
    os.mkdir("d" * 220)
    os.chdir("d" * 220)
shutil.copy(src, "names_target")
os.environ["SWITCHYARD_CONTROL"] = "1"
os.execv("./names_target", ["./names_target"])' "$tmp" "$target" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	exec 3>"$tmp/in"
	pid=
	for i in $(seq 300); do
		pid=$(sed -n 's/^ready //p' "$tmp/out")
		[ -n "$pid" ] && "$cli" list "$pid" >/dev/null 2>&1 && break
		sleep 0.1
	done
	[ -n "$pid" ] || { no "not ready: $(cat "$tmp/err")"; exit 1; }
	# the kernel does not give such a path (ENAMETOOLONG): the case tested
	readlink "/proc/$pid/exe" >/dev/null 2>&1 &&
		echo "note: this kernel gives the long path: the case is not tested"
	"$cli" list "$pid" >"$tmp/pid.txt" || no "list PID"
	grep -q "^net_trace  enabled=false" "$tmp/pid.txt" ||
		no "the keys of a program at a long path: $(grep -v '^ ' "$tmp/pid.txt")"
	"$cli" set "$pid" net_trace on >/dev/null || no "set net_trace"
	s=$(states)
	[ "${s%% *}" = "net_trace=1" ] || no "states: $s"
	stop
	;;
scoped)
	for f in "$scoped" stripped; do
		if [ "$f" = stripped ]; then
			strip_copy "$scoped" scoped-stripped
			f=$tmp/scoped-stripped
			# the preprocessor cannot see a namespace: a stripped
			# file's names are the definitions' spellings
			want='["feat[0]", "feat[3]", "hidden", "opts::member", "verbose"] ["encoder", "hidden_call"]'
		else
			want='["(anonymous namespace)::hidden", "feat[0]", "feat[3]", "net::io::verbose", "opts::member"] ["net::io::encoder", "other::hidden_call"]'
		fi
		"$cli" list "$f" --json >"$tmp/file.json" || no "list FILE $f"
		start "$f"
		"$cli" list "$pid" --json >"$tmp/pid.json" || no "list PID"
		python3 - "$tmp/file.json" "$tmp/pid.json" "$want" <<'PY' || no "$f: list FILE and list PID"
import json, sys
f = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
fk = sorted(k["name"] for k in f["keys"])
pk = sorted(k["name"] for k in p["keys"])
fc = sorted(c["name"] for c in f["static_calls"])
pc = sorted(c["name"] for c in p["calls"])
print("list FILE:", fk, fc)
print("list PID: ", pk, pc)
got = json.dumps(fk) + " " + json.dumps(fc)
assert fk == pk and fc == pc, "the lists disagree"
assert got == sys.argv[3], (got, sys.argv[3])
PY
		# every name as listed, copied into set and call
		hid="(anonymous namespace)::"
		[ "$f" = "$scoped" ] || hid=
		for k in "feat[3]" "feat[0]" "${hid}hidden" "opts::member"; do
			"$cli" set "$pid" "$k" on >"$tmp/set" 2>&1 ||
				no "$f: set $k: $(cat "$tmp/set")"
		done
		ns=net::io::
		[ "$f" = "$scoped" ] || ns=
		oth=other::
		[ "$f" = "$scoped" ] || oth=
		for c in "${ns}encoder" "${oth}hidden_call"; do
			"$cli" call "$pid" "$c" twice >"$tmp/call" 2>&1 ||
				no "$f: call $c twice: $(cat "$tmp/call")"
		done
		s=$(states)
		[ "$s" = "verbose=0 hidden=1 member=1 feat0=1 feat3=1 encoder=6 hidden_call=6" ] ||
			no "$f: states after set and call: $s"
		# escaped, the name is the glob it always was
		"$cli" set "$pid" 'feat\[3\]' off >"$tmp/set" 2>&1 ||
			no "$f: set feat\\[3\\]: $(cat "$tmp/set")"
		s=$(states)
		case $s in *" feat0=1 feat3=0 "*) ;; *) no "$f: after set feat\\[3\\] off: $s";; esac
		stop
		SWITCHYARD_KEYS="feat[3]=on,feat[0]=on,${ns}verbose=on" \
			"$f" </dev/null >"$tmp/env" 2>&1
		grep -q "^verbose=1 hidden=0 member=0 feat0=1 feat3=1 " "$tmp/env" ||
			no "$f: SWITCHYARD_KEYS: $(cat "$tmp/env")"
	done
	;;
dups)
	for f in "$dup" stripped; do
		if [ "$f" = stripped ]; then
			strip_copy "$dup" dup-stripped
			f=$tmp/dup-stripped
			a=k b=k
		else
			a=names_dup_a.c:k b=names_dup_b.c:k
		fi
		"$cli" list "$f" >"$tmp/file.txt" || no "list FILE"
		[ "$(grep '^key ' "$tmp/file.txt" | cut -d' ' -f2 | sort | tr '\n' ' ')" = "$a $b " ] ||
			no "$f: list FILE: $(grep '^key ' "$tmp/file.txt")"
		start "$f"
		"$cli" list "$pid" >"$tmp/pid.txt" || no "list PID"
		[ "$(grep -v '^ ' "$tmp/pid.txt" | cut -d' ' -f1 | sort | tr '\n' ' ')" = "$a $b " ] ||
			no "$f: list PID: $(grep -v '^ ' "$tmp/pid.txt")"
		if [ "$a" != "$b" ]; then
			"$cli" set "$pid" "$b" on >"$tmp/set" 2>&1 ||
				no "set $b: $(cat "$tmp/set")"
			s=$(states)
			[ "$s" = "a=0 b=1" ] || no "after set $b on: $s"
			"$cli" set "$pid" k on >"$tmp/set" 2>&1 && no "set k: not refused"
			grep -q "no key matches k; 2 keys are named so within a qualified name, which selects one: names_dup_a.c:k, names_dup_b.c:k" "$tmp/set" ||
				no "set k: the refusal: $(cat "$tmp/set")"
			s=$(states)
			[ "$s" = "a=0 b=1" ] || no "after the refused set k: $s"
			env="$a=on"
			want="a=1 b=0"
		else
			"$cli" set "$pid" k on >"$tmp/set" 2>&1 ||
				no "$f: set k: $(cat "$tmp/set")"
			grep -q "note: 2 keys are named k (nothing tells them apart): all of them were changed" "$tmp/set" ||
				no "$f: set k: no note: $(cat "$tmp/set")"
			s=$(states)
			[ "$s" = "a=1 b=1" ] || no "$f: after set k on: $s"
			env="k=on"
			want="a=1 b=1"
		fi
		stop
		SWITCHYARD_KEYS=$env "$f" </dev/null >"$tmp/env" 2>&1
		grep -q "^$want\$" "$tmp/env" || no "$f: SWITCHYARD_KEYS=$env: $(cat "$tmp/env")"
	done
	# a third k, in another object: every one is named by its object
	start env ASAN_OPTIONS=verify_asan_link_order=0 \
		LD_PRELOAD="$(preload "$dso")" "$dup"
	grep -q "cannot be preloaded" "$tmp/err" && no "LD_PRELOAD: $(cat "$tmp/err")"
	"$cli" list "$pid" >"$tmp/pid.txt" || no "list PID"
	e=${dup##*/} l=${dso##*/}
	[ "$(grep -v '^ ' "$tmp/pid.txt" | cut -d' ' -f1 | sort | tr '\n' ' ')" = "$l:k $e:names_dup_a.c:k $e:names_dup_b.c:k " ] ||
		no "with $l: list PID: $(grep -v '^ ' "$tmp/pid.txt")"
	"$cli" set "$pid" k on >"$tmp/set" 2>&1 && no "with $l: set k: not refused: $(cat "$tmp/set")"
	s=$(states)
	[ "$s" = "a=0 b=0" ] || no "with $l: after the refused set k: $s"
	"$cli" set "$pid" "$e:names_dup_b.c:k" on >"$tmp/set" 2>&1 || no "with $l: set $e:names_dup_b.c:k: $(cat "$tmp/set")"
	s=$(states)
	[ "$s" = "a=0 b=1" ] || no "with $l: after set $e:names_dup_b.c:k on: $s"
	stop
	;;
plugin)
	exe=${plug##*/} so=${pso##*/}
	# the keys' and the calls' names in list PID, sorted
	names() {
		"$cli" list "$pid" --json >"$tmp/pid.json" || no "list PID"
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(k["name"] for k in d["keys"])), "|",
      " ".join(sorted(c["name"] for c in d["calls"])))' "$tmp/pid.json"
	}
	# set/call ARGS...: must succeed
	ok() {
		"$cli" "$@" >"$tmp/cmd" 2>&1 || no "$*: $(cat "$tmp/cmd")"
	}
	# expect WHAT STATES: the target's states now
	expect() {
		s=$(states)
		[ "$s" = "$2" ] || no "$1: $s, not $2"
	}
	start "$plug" "$pso"
	n=$(names)
	[ "$n" = "trace | hook" ] || no "list PID before the plugin: $n"
	for k in "$exe:trace" names_plug_main.c:trace \
		 "$exe:names_plug_main.c:trace"; do
		ok set "$pid" "$k" on
		expect "before the plugin, set $k on" "exe=1 plug=- hook=1 plug_hook=-"
		ok set "$pid" trace off
	done
	ok call "$pid" "$exe:hook" two
	expect "before the plugin, call $exe:hook two" "exe=0 plug=- hook=2 plug_hook=-"
	ok call "$pid" hook one
	s=$(states load)
	[ "$s" = "exe=0 plug=0 hook=1 plug_hook=1" ] || no "load: $s"
	n=$(names)
	[ "$n" = "$so:trace $exe:trace | hook hook" ] ||
		no "list PID with the plugin: $n"
	ok set "$pid" "$exe:trace" on
	expect "set $exe:trace on" "exe=1 plug=0 hook=1 plug_hook=1"
	ok set "$pid" "$so:trace" on
	expect "set $so:trace on" "exe=1 plug=1 hook=1 plug_hook=1"
	"$cli" set "$pid" trace off >"$tmp/cmd" 2>&1 && no "set trace: not refused"
	grep -q "no key matches trace; 2 keys are named so within a qualified name, which selects one: $exe:trace, $so:trace" "$tmp/cmd" ||
		no "set trace: the refusal: $(cat "$tmp/cmd")"
	expect "after the refused set trace" "exe=1 plug=1 hook=1 plug_hook=1"
	ok set "$pid" names_plug.c:trace off
	expect "set names_plug.c:trace off" "exe=1 plug=0 hook=1 plug_hook=1"
	ok set "$pid" names_plug_main.c:trace off
	expect "set names_plug_main.c:trace off" "exe=0 plug=0 hook=1 plug_hook=1"
	ok set "$pid" "$so:names_plug.c:trace" on
	expect "set $so:names_plug.c:trace on" "exe=0 plug=1 hook=1 plug_hook=1"
	ok call "$pid" "$so:hook" two
	expect "call $so:hook two" "exe=0 plug=1 hook=1 plug_hook=2"
	ok call "$pid" "$exe:hook" two
	expect "call $exe:hook two" "exe=0 plug=1 hook=2 plug_hook=2"
	"$cli" set "$pid" "$so:nothing" on >"$tmp/cmd" 2>&1 &&
		no "set $so:nothing: not refused"
	stop
	# SWITCHYARD_KEYS, the plugin loaded by the program (after its keys
	# registered) or before it (LD_PRELOAD: the plugin's key is "trace"
	# when it registers, the program's "names_plug:trace"); ASan's check
	# that it comes first in the list of libraries does not apply
	for pre in "" "$(preload "$pso")"; do
		for c in "$exe:trace=on/1 0" "$so:trace=on/0 1" "trace=on/1 1" \
			 "names_plug_main.c:trace=on/1 0" \
			 "names_plug.c:trace=on/0 1" "tr*=on/1 1" \
			 "$exe:names_plug_main.c:trace=on/1 0" \
			 "trace=on,$so:trace=off/1 0"; do
			env=${c%/*} v=${c#*/}
			want="exe=${v% *} plug=${v#* } hook=1 plug_hook=1"
			echo load | ASAN_OPTIONS=verify_asan_link_order=0 \
				LD_PRELOAD=$pre SWITCHYARD_KEYS=$env \
				"$plug" "$pso" >"$tmp/env" 2>&1
			! grep -q "cannot be preloaded" "$tmp/env" &&
				[ "$(tail -n 1 "$tmp/env")" = "$want" ] ||
				no "SWITCHYARD_KEYS=$env${pre:+ (LD_PRELOAD)}: $(cat "$tmp/env"), not $want"
		done
	done
	;;
*)
	echo "unknown mode $mode"; exit 2;;
esac
[ $fail = 0 ] && echo "PASS: names $mode"
exit $fail
