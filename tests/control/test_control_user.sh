#!/bin/sh
# SPDX-License-Identifier: MIT
# test_control_user.sh MODE TOOL CONTROL_TARGET FORK_TARGET TMP - the
# control socket as a user meets it (issue [10/15]); one ctest test per
# MODE:
#   trust     the tool trusts only a socket directory of its user (or
#             root), writable by no one else, not a symlink, and a server
#             that is the process asked for (SO_PEERCRED pid, uid)
#   exit      set exits 1 when the process refuses a change, in whole or
#             in part, and says why
#   fork      a daemon (daemon(3) + a second fork) started with
#             SWITCHYARD_CONTROL=1 serves its own socket, its parents'
#             are gone; children of a living parent leave no socket; a
#             program that closes every descriptor keeps its files
#   longpath  an XDG_RUNTIME_DIR of 200+ and 300+ bytes: served, listed,
#             controlled
#   pid       PID arguments: anything but 1..pid_max-1 in digits is a
#             usage error (exit 2), named
#   toolenv   SWITCHYARD_CONTROL and SWITCHYARD_KEYS do not act on the tool
#   closefds  a program that closes every descriptor after start (a
#             daemon) keeps control: the library notices, says so and
#             serves a new socket, without taking the connections of a
#             listening socket of the program's put on the freed numbers
#   stale     ps removes a socket file left by a process that is gone,
#             and nothing else named N.sock (a regular file, a symlink)
#   stopped   a process that does not answer (stopped): set and call give
#             up after 5 s, exit 1, and say that the change may still be
#             made, which it then is (SIGCONT)
#   psname    ps names a program whose name is past 15 bytes in full (not
#             /proc/PID/comm's 15 bytes), in text and JSON; a program that
#             rewrote its argv[0] by its comm; control bytes escaped
set -u
mode=$1 cli=$2 target=$3 fork=$4 tmp=$5
fail=0
no() { echo "FAIL: $mode: $*"; fail=1; }
rm -rf "$tmp" && mkdir -p "$tmp/run" && chmod 700 "$tmp/run" || exit 1
XDG_RUNTIME_DIR=$tmp/run
export XDG_RUNTIME_DIR
unset SWITCHYARD_CONTROL SWITCHYARD_KEYS
d=$XDG_RUNTIME_DIR/switchyard

# wait (bounded, generously: the machine may be loaded) until "$@" holds
until_true() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		sleep 0.05
	done
}

# control_target serving its socket (api mode); sets $pid
start_target() {
	rm -f "$tmp/in" "$tmp/out" && mkfifo "$tmp/in"
	"$target" api <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/in"
	# this process's line (an earlier target's out may still be there
	# until the shell's redirection truncates it)
	until_true grep -qs "^ready $pid" "$tmp/out" || no "target not ready: $(cat "$tmp/err")"
}
stop_target() {
	exec 3>&-
	wait $pid || no "target exit status: $(cat "$tmp/err")"
}

case $mode in
trust)
	command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
	# fake DIR NAME UID: a server in DIR answering one request with a
	# success, as a real process would; NAME "self" is its own pid, UID
	# >= 0 the uid it listens as (SO_PEERCRED is taken at listen())
	fake() {
		rm -f "$tmp/fake.out"
		python3 - "$1" "$2" "$3" >"$tmp/fake.out" <<'PY' &
import os, socket, sys
d, name, uid = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.chdir(d)                       # bind a short name: d may be long
name = (str(os.getpid()) if name == "self" else name) + ".sock"
s = socket.socket(socket.AF_UNIX)
s.bind(name)
os.chmod(name, 0o777)
if uid >= 0:
    os.setgid(uid); os.setuid(uid)
s.listen(4)
print("ready", os.getpid(), flush=True)
s.settimeout(60)
while True:                       # until killed (or 60 s without a client)
    try:
        c, _ = s.accept()
    except OSError:
        break
    try:
        c.settimeout(5)
        if c.recv(4096):
            c.sendall(b'{"changed": [{"name": "net_rx", "result": 0, '
                      b'"enabled": true, "count": 1}]}\n')
    except OSError:
        pass
    c.close()
PY
		fp=$!
		until_true grep -qs ready "$tmp/fake.out" || no "fake server not ready"
		fpid=$(sed -n 's/^ready //p' "$tmp/fake.out")
	}
	unfake() { kill $fp 2>/dev/null; wait $fp 2>/dev/null; }
	# refused CASE PID: set and ps refuse, say why, change nothing
	refused() {
		"$cli" set "$2" net_rx on >"$tmp/o" 2>"$tmp/e"; st=$?
		[ $st = 1 ] || no "$1: set exit $st, want 1: $(cat "$tmp/o" "$tmp/e")"
		grep -q "result=0" "$tmp/o" && no "$1: set reported a change: $(cat "$tmp/o")"
		grep -q "not trusting" "$tmp/e" || no "$1: set: no reason given: $(cat "$tmp/e")"
		"$cli" ps >"$tmp/o" 2>"$tmp/e"; st=$?
		[ $st = 1 ] || no "$1: ps exit $st, want 1"
		grep -q "not trusting" "$tmp/e" || no "$1: ps: no reason given: $(cat "$tmp/e")"
		grep -q "^$2	" "$tmp/o" && no "$1: ps listed it: $(cat "$tmp/o")"
	}

	# a directory others may write to (as someone else's mkdir -m 777
	# in /tmp would be; here our own, so that no root is needed)
	mkdir -m 777 "$d" && chmod 777 "$d"
	fake "$d" self -1
	refused "a directory of mode 0777" "$fpid"
	unfake
	rm -rf "$d"

	# a symbolic link to a good directory
	mkdir -m 700 "$tmp/elsewhere"
	ln -s "$tmp/elsewhere" "$d"
	fake "$tmp/elsewhere" self -1
	refused "a symlink" "$fpid"
	unfake
	rm -rf "$d" "$tmp/elsewhere"

	# a good directory, but the socket named for pid $$ is served by
	# another process
	mkdir -m 700 "$d"
	fake "$d" $$ -1
	refused "a socket served by another pid" $$
	unfake
	rm -rf "$d"

	# the control case: the same fake, trusted, is believed
	mkdir -m 700 "$d"
	fake "$d" self -1
	"$cli" set "$fpid" net_rx on >"$tmp/o" 2>"$tmp/e" ||
		no "a good directory and server: $(cat "$tmp/o" "$tmp/e")"
	unfake
	rm -rf "$d"

	if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
		nb=$(id -u nobody)
		# the tool run as nobody (the reproducer's victim)
		cat >"$tmp/asnobody" <<EOF
#!/bin/sh
HOME=/nonexistent exec python3 -c 'import os, sys; os.setgroups([]); os.setgid($nb); os.setuid($nb); os.execv(sys.argv[1], sys.argv[1:])' "$cli" "\$@"
EOF
		chmod 755 "$tmp/asnobody" "$tmp" "$tmp/run"
		realcli=$cli
		# nobody's directory made first by another user (uid 12345),
		# open to all but writable by its owner only: the owner alone
		# must make the tool refuse it
		if "$tmp/asnobody" --help >/dev/null 2>&1; then
			mkdir -m 755 "$d" && chown 12345 "$d"
			fake "$d" self 12345
			cli=$tmp/asnobody
			refused "a directory another user made" "$fpid"
			cli=$realcli
			unfake
			rm -rf "$d"
		else
			echo "note: nobody cannot run $cli (a directory above it is closed): its case is left out"
		fi
		# root's own directory, a server running as another user
		mkdir -m 700 "$d"
		fake "$d" self "$nb"
		refused "a server of uid $nb" "$fpid"
		unfake
		rm -rf "$d"
		# root may reach a process of nobody in nobody's directory
		mkdir -m 700 "$d" && chown "$nb" "$d"
		fake "$d" self "$nb"
		"$cli" set "$fpid" net_rx on >"$tmp/o" 2>"$tmp/e" ||
			no "root and a process of nobody in its directory: $(cat "$tmp/o" "$tmp/e")"
		unfake
		rm -rf "$d"
		# but not in a third user's directory: the directory must be
		# the process's user's (or root's)
		mkdir -m 755 "$d" && chown 12345 "$d"
		fake "$d" self "$nb"
		refused "root, a process of nobody in uid 12345's directory" "$fpid"
		"$cli" set "$fpid" net_rx on >"$tmp/o" 2>"$tmp/e"
		grep -q "owned by uid 12345 .*it must be owned by uid $nb (the process's) or root" "$tmp/e" ||
			no "root, a process of nobody in uid 12345's directory: $(cat "$tmp/e")"
		unfake
		rm -rf "$d"
		# ... also without XDG_RUNTIME_DIR (root's is /tmp/switchyard-0,
		# nobody's /tmp/switchyard-$nb): a real process of nobody
		ng=$(id -g nobody)
		if setpriv --reuid="$nb" --regid="$ng" --clear-groups test -x "$target" 2>/dev/null; then
			rm -f "$tmp/in" "$tmp/out" && mkfifo "$tmp/in"
			env -u XDG_RUNTIME_DIR SWITCHYARD_CONTROL=1 setpriv \
				--reuid="$nb" --regid="$ng" --clear-groups \
				"$target" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
			pid=$!
			exec 3>"$tmp/in"
			until_true grep -qs "^ready $pid" "$tmp/out" || no "nobody's target not ready: $(cat "$tmp/err")"
			until_true test -S "/tmp/switchyard-$nb/$pid.sock" || no "nobody's target: no socket in /tmp/switchyard-$nb: $(cat "$tmp/err")"
			env -u XDG_RUNTIME_DIR "$cli" list $pid >"$tmp/o" 2>"$tmp/e" ||
				no "root, no XDG_RUNTIME_DIR, list of nobody's process: $(cat "$tmp/e")"
			grep -q "^net_rx  enabled=false" "$tmp/o" || no "root: list of nobody's process: $(cat "$tmp/o")"
			env -u XDG_RUNTIME_DIR "$cli" set $pid net_rx on >"$tmp/o" 2>"$tmp/e" ||
				no "root, no XDG_RUNTIME_DIR, set of nobody's process: $(cat "$tmp/e")"
			stop_target
			grep -q "net_rx 1" "$tmp/out" || no "root: nobody's key was not set: $(cat "$tmp/out")"
		else
			echo "note: nobody cannot run $target: root reaching nobody's /tmp/switchyard-$nb is left out"
		fi
	else
		echo "note: not root: the checks of another user's directory and server are left out"
	fi
	;;
exit)
	start_target
	"$cli" set $pid disk_io inc >/dev/null || no "inc"
	"$cli" set $pid disk_io off >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "off refused (count 2): exit $st: $(cat "$tmp/o" "$tmp/e")"
	grep -q "disk_io: off refused (.*count 2)" "$tmp/e" || no "off: no reason: $(cat "$tmp/e")"
	"$cli" set $pid disk_io off --json >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "off --json: exit $st"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["changed"][0]["result"] == -16, d' "$tmp/o" ||
		no "off --json: $(cat "$tmp/o")"
	"$cli" set $pid net_tx dec >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "dec below 0: exit $st"
	grep -q "net_tx: dec refused" "$tmp/e" || no "dec: no reason: $(cat "$tmp/e")"
	# in part: net_rx goes 1 -> 0, net_tx (0) cannot
	"$cli" set $pid net_rx on >/dev/null || no "net_rx on"
	"$cli" set $pid 'net_*' dec >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "a partial change: exit $st: $(cat "$tmp/o")"
	grep -q "^net_rx  enabled=false  count=0  result=0" "$tmp/o" || no "partial: $(cat "$tmp/o")"
	# every key changed: 0
	"$cli" set $pid 'net_*' on >/dev/null 2>"$tmp/e" || no "net_* on: $(cat "$tmp/e")"
	stop_target
	;;
fork)
	# daemon(3), and a first process slower to leave than its child (the
	# daemon removes its socket once it is gone: seen left under load)
	for how in daemon slowdaemon; do
		rm -f "$tmp/in" "$tmp/pids" && mkfifo "$tmp/in"
		SWITCHYARD_CONTROL=1 "$fork" $how "$tmp/pids" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
		p=$!
		exec 3>"$tmp/in"
		wait $p || no "$how failed: $(cat "$tmp/err")"
		until_true test -s "$tmp/pids" || no "no pid file: $(cat "$tmp/err")"
		read first second <"$tmp/pids"
		until_true test -S "$d/$second.sock" || no "the daemon serves no socket: $(ls "$d") $(cat "$tmp/err")"
		"$cli" set "$second" fork_key on >"$tmp/o" 2>"$tmp/e" || no "set: $(cat "$tmp/o" "$tmp/e")"
		for gone in $p $first; do
			[ -e "$d/$gone.sock" ] && no "$how: a parent's socket is left: $gone.sock"
		done
		"$cli" ps >"$tmp/o" || no "ps"
		[ "$(cut -f1 "$tmp/o")" = "$second" ] || no "ps: $(cat "$tmp/o")"
		exec 3>&-
		# gone, or a zombie (its reaper, init or a subreaper, may be slow)
		until_true sh -c "! kill -0 $second 2>/dev/null || grep -q '^[0-9]* (.*) Z' /proc/$second/stat 2>/dev/null" ||
			no "the daemon does not exit"
		grep -q "^fork_key 1" "$tmp/out" || no "the daemon's key: $(cat "$tmp/out" "$tmp/err")"
		[ -e "$d/$second.sock" ] && no "the daemon left its socket"
	done
	# children of a parent that lives on
	SWITCHYARD_CONTROL=1 "$fork" workers >"$tmp/o" 2>"$tmp/e" || no "workers: $(cat "$tmp/o" "$tmp/e")"
	[ -z "$(ls "$d")" ] || no "workers: sockets left: $(ls "$d")"
	# a program that closes every descriptor and reuses the numbers: the
	# library neither writes into nor closes its files, and its socket
	# is still removed at exit
	SWITCHYARD_CONTROL=1 "$fork" closer "$tmp/file" >"$tmp/o" 2>"$tmp/e" || no "closer: $(cat "$tmp/o" "$tmp/e")"
	[ -f "$tmp/file" ] && [ ! -s "$tmp/file" ] || no "closer: the library wrote into the program's file: $(od -c "$tmp/file" | head -3)"
	[ -z "$(ls "$d")" ] || no "closer: socket left: $(ls "$d")"
	;;
longpath)
	for n in 210 320; do
		rt=$tmp/$n
		while [ ${#rt} -lt $n ]; do
			rt=$rt/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
		done
		mkdir -p "$rt" && chmod 700 "$rt"
		XDG_RUNTIME_DIR=$rt
		start_target
		[ -S "$rt/switchyard/$pid.sock" ] || no "$n: no socket: $(cat "$tmp/err")"
		"$cli" ps >"$tmp/o" 2>"$tmp/e" || no "$n: ps: $(cat "$tmp/e")"
		grep -q "^$pid	control_target" "$tmp/o" || no "$n: ps: $(cat "$tmp/o" "$tmp/e")"
		"$cli" list $pid >"$tmp/o" 2>"$tmp/e" || no "$n: list: $(cat "$tmp/e")"
		grep -q "^net_rx  enabled=false" "$tmp/o" || no "$n: list: $(cat "$tmp/o")"
		"$cli" set $pid net_rx on >"$tmp/o" 2>"$tmp/e" || no "$n: set: $(cat "$tmp/e")"
		stop_target
		grep -q "net_rx 1" "$tmp/out" || no "$n: the key was not set: $(cat "$tmp/out")"
		[ -e "$rt/switchyard/$pid.sock" ] && no "$n: socket left behind"
	done
	;;
pid)
	for a in 4294967297 0 99999999999 -5 +5 1e3 12x "" " 12" 2147483648; do
		for cmd in "list" "set" "call"; do
			case $cmd in
			list) "$cli" list "$a" >"$tmp/o" 2>"$tmp/e"; st=$? ;;
			set) "$cli" set "$a" net_rx on >"$tmp/o" 2>"$tmp/e"; st=$? ;;
			call) "$cli" call "$a" codec codec_fast >"$tmp/o" 2>"$tmp/e"; st=$? ;;
			esac
			# list takes a FILE too: a word with a non-digit is one
			# (no such file: 1); digits out of range are a usage error
			case "$cmd:$a" in
			list:-5) want=2 ;;	# an unknown option
			list:+5|list:1e3|list:12x|list:|list:\ 12) want=1 ;;
			*) want=2 ;;
			esac
			[ $st = $want ] || no "$cmd '$a': exit $st, want $want: $(cat "$tmp/e")"
			if [ $want = 2 ] && [ "$a" != -5 ]; then
				grep -q "'$a' is not a process ID" "$tmp/e" || no "$cmd '$a': $(cat "$tmp/e")"
			fi
		done
	done
	# a PID in range with no socket: the process's problem (1), not usage
	"$cli" list $$ >/dev/null 2>"$tmp/e"; st=$?
	[ $st = 1 ] && grep -q "process $$: no control socket" "$tmp/e" || no "list \$\$: exit $st: $(cat "$tmp/e")"
	# --json: that error as a JSON object on stdout too (a script gets
	# an object that says why, not empty input)
	"$cli" set $$ net_rx on --json >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] && grep -q "process $$: no control socket" "$tmp/e" || no "set \$\$ --json: exit $st: $(cat "$tmp/e")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "process %s: no control socket" % sys.argv[2] in d["error"], d' "$tmp/o" $$ ||
		no "set \$\$ --json: stdout: $(cat "$tmp/o")"
	# a PID no process has (a child waited for): said so, not "start
	# it with SWITCHYARD_CONTROL=1"; 1; with --json on stdout too
	sh -c 'exit 0' &
	gone=$!
	wait $gone
	for cmd in list set call; do
		case $cmd in
		list) "$cli" list $gone >"$tmp/o" 2>"$tmp/e"; st=$? ;;
		set) "$cli" set $gone net_rx on >"$tmp/o" 2>"$tmp/e"; st=$? ;;
		call) "$cli" call $gone codec codec_fast >"$tmp/o" 2>"$tmp/e"; st=$? ;;
		esac
		[ $st = 1 ] || no "$cmd $gone (no such process): exit $st"
		[ "$(cat "$tmp/e")" = "switchyard: no process $gone" ] || no "$cmd $gone (no such process): $(cat "$tmp/e")"
		[ -s "$tmp/o" ] && no "$cmd $gone: stdout without --json: $(cat "$tmp/o")"
	done
	"$cli" list $gone --json >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] && grep -q "no process $gone" "$tmp/e" || no "list $gone --json: exit $st: $(cat "$tmp/e")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d == {"error": "no process " + sys.argv[2]}, d' "$tmp/o" $gone ||
		no "list $gone --json: stdout: $(cat "$tmp/o")"
	# ps --json of a directory it does not trust: the error as JSON
	mkdir -m 777 "$d" && chmod 777 "$d"
	"$cli" ps --json >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] && grep -q "not trusting" "$tmp/e" || no "ps --json, an untrusted directory: exit $st: $(cat "$tmp/e")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "not trusting" in d["error"], d' "$tmp/o" ||
		no "ps --json, an untrusted directory: stdout: $(cat "$tmp/o")"
	rm -rf "$d"
	;;
toolenv)
	# a shell that exports them for the programs it runs runs the tool
	# with them too
	SWITCHYARD_CONTROL=1 "$cli" ps >"$tmp/o" 2>"$tmp/e" || no "ps: $(cat "$tmp/e")"
	[ -s "$tmp/o" ] && no "ps lists the tool itself: $(cat "$tmp/o")"
	[ -e "$d" ] && [ -n "$(ls "$d")" ] && no "the tool made a socket: $(ls "$d")"
	SWITCHYARD_KEYS=no_such_key=on "$cli" cpu >/dev/null 2>"$tmp/e" || no "cpu"
	grep -q SWITCHYARD_KEYS "$tmp/e" && no "the tool read SWITCHYARD_KEYS: $(cat "$tmp/e")"
	# and the programs it inspects still do
	rm -f "$tmp/in" && mkfifo "$tmp/in"
	rm -f "$tmp/out"
	SWITCHYARD_CONTROL=1 SWITCHYARD_KEYS=net_tx=on "$target" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/in"
	until_true grep -qs "^ready $pid" "$tmp/out" || no "target not ready: $(cat "$tmp/err")"
	"$cli" ps >"$tmp/o" 2>"$tmp/e"
	[ "$(cut -f1 "$tmp/o")" = "$pid" ] || no "ps: $(cat "$tmp/o" "$tmp/e")"
	stop_target
	grep -q "net_tx 1" "$tmp/out" || no "the target ignored SWITCHYARD_KEYS: $(cat "$tmp/out")"
	;;
closefds)
	rm -f "$tmp/in" "$tmp/out" && mkfifo "$tmp/in"
	SWITCHYARD_CONTROL=1 "$fork" rebind <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	exec 3>"$tmp/in"
	until_true grep -qs "^closed $pid" "$tmp/out" || no "target did not start: $(cat "$tmp/err")"
	# within a second or so the library sees its socket gone and binds
	# a new one: list then works again
	until_true sh -c "'$cli' list $pid >'$tmp/o' 2>'$tmp/e'" ||
		no "control lost when the program closed its descriptors: $(cat "$tmp/e" "$tmp/err")"
	grep -q "^fork_key  enabled=false" "$tmp/o" || no "list: $(cat "$tmp/o")"
	"$cli" set $pid fork_key on >"$tmp/o" 2>"$tmp/e" || no "set: $(cat "$tmp/o" "$tmp/e")"
	grep -q "control: the program closed the control socket's descriptor .*serving a new socket" "$tmp/err" ||
		no "not said in the process's log: $(cat "$tmp/err")"
	exec 3>&-
	wait $pid || no "target exit status $?: $(cat "$tmp/out" "$tmp/err")"
	grep -q "^own ok" "$tmp/out" || no "the library took the program's connection: $(cat "$tmp/out")"
	grep -q "^fork_key 1" "$tmp/out" || no "the key: $(cat "$tmp/out")"
	[ -z "$(ls "$d")" ] || no "socket left: $(ls "$d")"
	# closefrom(0): the new socket, its directory and its clients are
	# not put on 0, 1 and 2, the program's standard descriptors
	rm -f "$tmp/out"
	SWITCHYARD_CONTROL=1 "$fork" closeall </dev/null >"$tmp/out" 2>/dev/null &
	pid=$!
	until_true grep -qs "^closed $pid" "$tmp/out" || no "closeall did not start"
	until_true sh -c "'$cli' list $pid >'$tmp/o' 2>'$tmp/e'" ||
		no "closeall: control lost: $(cat "$tmp/e")"
	for fd in 0 1 2; do
		[ -e "/proc/$pid/fd/$fd" ] &&
			no "closeall: the library's descriptor on $fd: $(readlink "/proc/$pid/fd/$fd")"
	done
	kill $pid; wait $pid 2>/dev/null
	;;
stale)
	command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
	# pids no process has (children waited for)
	sh -c 'exit 0' & g1=$!; wait $g1
	sh -c 'exit 0' & g2=$!; wait $g2
	sh -c 'exit 0' & g3=$!; wait $g3
	mkdir -m 700 "$d"
	# a socket nobody listens on, as a process killed with SIGKILL leaves
	# (bound by its name in the directory: the path may be long)
	python3 -c 'import os, socket, sys; os.chdir(sys.argv[1]); socket.socket(socket.AF_UNIX).bind(sys.argv[2])' "$d" "$g1.sock" ||
		no "cannot make a socket file"
	echo "keep me" >"$d/$g2.sock"
	echo "keep me too" >"$tmp/target-file"
	ln -s "$tmp/target-file" "$d/$g3.sock"
	"$cli" ps >"$tmp/o" 2>"$tmp/e" || no "ps: exit $?: $(cat "$tmp/e")"
	[ -e "$d/$g1.sock" ] && no "ps left the stale socket $g1.sock"
	[ "$(cat "$d/$g2.sock" 2>/dev/null)" = "keep me" ] || no "ps removed the regular file $g2.sock"
	[ -L "$d/$g3.sock" ] || no "ps removed the symlink $g3.sock"
	[ "$(cat "$tmp/target-file")" = "keep me too" ] || no "the symlink's target changed"
	rm -rf "$d"
	;;
stopped)
	start_target
	kill -STOP $pid
	# connect() succeeds (the backlog), the request waits in the socket
	"$cli" set $pid net_rx on >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "set to a stopped process: exit $st: $(cat "$tmp/o" "$tmp/e")"
	grep -q "process $pid: no reply in 5 s; the process may still make the change later" "$tmp/e" ||
		no "set to a stopped process: $(cat "$tmp/e")"
	"$cli" call $pid codec codec_fast --json >"$tmp/o" 2>"$tmp/e"; st=$?
	[ $st = 1 ] || no "call to a stopped process: exit $st: $(cat "$tmp/o" "$tmp/e")"
	grep -q "may still make the change later" "$tmp/e" || no "call to a stopped process: $(cat "$tmp/e")"
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert "may still make the change later" in d["error"], d' "$tmp/o" ||
		no "call --json to a stopped process: stdout: $(cat "$tmp/o")"
	kill -CONT $pid
	# what the message warned of: the process reads the requests and
	# makes both changes once it runs
	until_true sh -c "'$cli' list $pid | grep -q '^net_rx  enabled=true'" ||
		no "after SIGCONT: net_rx was not set: $("$cli" list $pid)"
	until_true sh -c "'$cli' list $pid | grep -q '^codec  target=codec_fast'" ||
		no "after SIGCONT: codec was not retargeted: $("$cli" list $pid)"
	stop_target
	;;
psname)
	command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
	# ps_is WANT [ARGV0]: the target started as $long (with argv[0]
	# ARGV0), ps names it WANT in text and in JSON
	ps_is() {
		rm -f "$tmp/in" "$tmp/out" && mkfifo "$tmp/in"
		python3 -c 'import os, sys
os.execv(sys.argv[1], [sys.argv[2], "api"])' "$long" "${2:-$long}" \
			<"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		exec 3>"$tmp/in"
		until_true grep -qs "^ready $pid" "$tmp/out" ||
			no "target not ready: $(cat "$tmp/err")"
		"$cli" ps >"$tmp/o" 2>"$tmp/e" || no "ps: $(cat "$tmp/e")"
		[ "$(cat "$tmp/o")" = "$pid	$1" ] ||
			no "ps: $(cat "$tmp/o" "$tmp/e"), not $pid	$1"
		"$cli" ps --json >"$tmp/o" 2>"$tmp/e" || no "ps --json: $(cat "$tmp/e")"
		python3 -c 'import json, sys
got = json.load(open(sys.argv[1]))
want = [{"pid": int(sys.argv[2]), "command": sys.argv[3]}]
assert got == want, (got, want)' "$tmp/o" "$pid" "$3" ||
			no "ps --json: $(cat "$tmp/o")"
		stop_target
	}
	long=$tmp/control_target_with_a_long_name
	cp "$target" "$long" || exit 1
	ps_is control_target_with_a_long_name "" \
		control_target_with_a_long_name
	# argv[0] rewritten (setproctitle): its base name is not the program
	ps_is control_target_ "sshd: me@pts/0" control_target_
	# ESC in the name: escaped in text; JSON escapes it its way
	long=$(printf '%s/ctl_\033[7m_target_with_a_long_name' "$tmp")
	cp "$target" "$long" || exit 1
	ps_is 'ctl_\x1b[7m_target_with_a_long_name' "" \
		"$(printf 'ctl_\033[7m_target_with_a_long_name')"
	# six processes: listed by PID (the directory's order was kept: a
	# sorted one by chance is 1 in 720)
	for i in 4 5 6 7 8 9; do
		rm -f "$tmp/in$i" "$tmp/out$i" && mkfifo "$tmp/in$i"
		"$target" api <"$tmp/in$i" >"$tmp/out$i" 2>/dev/null &
		p=$!
		eval "exec $i>\"\$tmp/in$i\""
		until_true grep -qs "^ready $p" "$tmp/out$i" || no "target $i not ready"
	done
	"$cli" ps | cut -f1 >"$tmp/o"
	[ "$(wc -l <"$tmp/o")" = 6 ] || no "ps: six processes: $(cat "$tmp/o")"
	sort -n "$tmp/o" | cmp -s - "$tmp/o" || no "ps: not by PID: $(cat "$tmp/o")"
	for i in 4 5 6 7 8 9; do eval "exec $i>&-"; done
	wait
	;;
*)
	echo "usage: test_control_user.sh trust|exit|fork|longpath|pid|toolenv|closefds|stale|stopped|psname TOOL CONTROL_TARGET FORK_TARGET TMP"
	exit 2
	;;
esac
[ $fail = 0 ] && echo "test_control_user $mode: all checks passed"
exit $fail
