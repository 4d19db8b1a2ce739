# SPDX-License-Identifier: MIT
# ctl_start.sh - sourced by the control tests: ctl_start TMP COMMAND...
# starts COMMAND with its standard input on the FIFO TMP/in (kept open on
# descriptor 3 until the caller closes it: the target runs until then),
# its output in TMP/out and TMP/err, and waits until it prints
# "ready PID" (60 s bound: under load, not a bet on a time). Sets $pid;
# on failure prints the target's errors and exits 1.
ctl_start() {
	_t=$1; shift
	rm -f "$_t/in" && mkfifo "$_t/in" || exit 1
	"$@" <"$_t/in" >"$_t/out" 2>"$_t/err" &
	pid=$!
	exec 3>"$_t/in"
	for _i in $(seq 600); do
		grep -q ready "$_t/out" && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -q "ready $pid" "$_t/out"; then
		echo "FAIL: target not ready: $(cat "$_t/err")"
		exec 3>&-
		wait $pid
		exit 1
	fi
}
