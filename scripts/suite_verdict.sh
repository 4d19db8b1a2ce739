# SPDX-License-Identifier: MIT
# suite_verdict.sh - sourced by scripts/test.sh and scripts/cross-aarch64.sh:
# what one ctest run of the default suite says, in one line.
#
# sy_suite_verdict OUT LOG RC ALLOW WHERE LIST
#   OUT    ctest's output (its summary, the tests that failed or did not
#          run, after its last "% tests passed" line: a test's own output
#          may hold a ctest run of its own)
#   LOG    that run's Testing/Temporary/LastTest.log (each test's output,
#          with the "SKIP: <why>" line a skipped test printed)
#   RC     ctest's exit status
#   ALLOW  1: a skip not listed in tests/expected_skips.txt is allowed
#   WHERE  the places of LIST this run is in (x86_64; aarch64; aarch64
#          aarch64-qemu)
#   LIST   tests/expected_skips.txt (its path)
# Prints each skipped test with its reason, then sets sy_verdict to
# "PASS: <counts>" or "FAIL: <what failed>"; returns 0 for PASS.
# The counts: passed, skipped (did not run: not a pass), failed, of the
# total; a test failed or skipped is named with where its output is.

sy_suite_verdict() {
	_out=$1 _log=$2 _rc=$3 _allow=$4 _where=$5 _list=$6
	_last=$(grep -n '% tests passed' "$_out" | tail -n 1 | cut -d: -f1)
	_summary=$(sed -n "${_last:-0}p" "$_out" 2>/dev/null)
	# "100% tests passed, 0 tests failed out of 106"
	_total=$(echo "$_summary" | sed -n 's/.* out of \([0-9][0-9]*\).*/\1/p')
	_nfail=$(echo "$_summary" | sed -n 's/.*passed, \([0-9][0-9]*\) tests* failed.*/\1/p')
	_failed=$(awk -v last="${_last:-0}" 'NR <= last { next }
		/^The following tests FAILED:/ { on = 1; next }
		on && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, "");
			sub(/ \(.*/, ""); printf "%s%s", sep, $0; sep = " " }
		' "$_out")
	#	The following tests did not run:
	#		 12 - test_under_gdb (Skipped)
	_notrun=$(awk -v last="${_last:-0}" 'NR <= last { next }
		/^The following tests did not run:/ { on = 1; next }
		on && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, ""); print; next }
		{ on = 0 }' "$_out")
	_nskip=0 _nexp=0 _unexp=""
	if [ -n "$_notrun" ]; then
		echo
		while IFS= read -r _line; do
			_name=${_line% (*}
			_why=$(awk -v name="$_name" '
				/^[0-9]+\/[0-9]+ Testing: / {
					t = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", t)
					on = (t == name); next
				}
				on && /^<end of output>$/ { on = 0 }
				on && /SKIP: / && !/^Command: / {
					sub(/.*SKIP: /, ""); print; exit
				}
			' "$_log")
			_known=$(awk -v name="$_name" -v where=" $_where " '
				/^#/ || NF < 3 { next }
				$2 == name && index(where, " " $1 " ") {
					sub(/^[^ \t]+[ \t]+[^ \t]+[ \t]+/, ""); print; exit
				}' "$_list" 2>/dev/null)
			if [ -n "$_known" ]; then
				echo "SKIPPED (expected here: $_known): $_line: ${_why:-(no SKIP line in its output)}"
			else
				echo "SKIPPED: $_line: ${_why:-(no SKIP line in its output)}"
				_unexp="$_unexp $_name"
			fi
		done <<-EOT
		$_notrun
		EOT
		_nskip=$(($(echo "$_notrun" | wc -l)))
	fi
	_nunexp=$(($(echo $_unexp | wc -w)))
	_counts="$(( ${_total:-0} - ${_nfail:-0} - _nskip )) passed, $_nskip skipped"
	[ "$_nskip" -gt "$_nunexp" ] &&
		_counts="$_counts ($((_nskip - _nunexp)) as tests/expected_skips.txt expects here)"
	_counts="$_counts, ${_nfail:-?} failed, of ${_total:-?}"
	if [ -z "$_summary" ]; then
		sy_verdict="FAIL: no ctest summary (ctest exit status $_rc)"
		return 1
	fi
	if [ "$_rc" != 0 ] && [ -n "$_failed" ]; then
		sy_verdict="FAIL: $_failed ($_counts; their output: above, and $_log)"
		return 1
	fi
	if [ "$_rc" != 0 ]; then
		sy_verdict="FAIL: ctest exit status $_rc ($_counts)"
		return 1
	fi
	if [ "$_nunexp" -gt 0 ] && [ "$_allow" != 1 ]; then
		echo "FAIL: $_nunexp test(s) did not run (see above); install" \
			"what they need (scripts/deps.sh) or rerun with" \
			"--allow-skip to accept it"
		sy_verdict="FAIL: skipped:$_unexp ($_counts)"
		return 1
	fi
	[ "$_nunexp" -gt 0 ] &&
		echo "$_nunexp test(s) did not run; allowed (--allow-skip / SWITCHYARD_ALLOW_SKIP=1)"
	sy_verdict="PASS: $_counts"
	return 0
}
