#!/bin/sh
# Test (d): gdb batch checks on bin/bt built from t_bt.c.  usage: run_gdb.sh BINARY
B=$1
SITE=$(grep -n 'SITE_LINE' t_bt.c | head -1 | cut -d: -f1)
fail=0
out1=$(gdb -nx -batch -ex 'break bt_callee' -ex run -ex bt "$B" 2>&1)
bt=$(echo "$out1" | grep '^#')
if echo "$bt" | grep -q 'bt_caller' && echo "$bt" | grep -q ' main ' && ! echo "$out1" | grep -qi 'corrupt\|Backtrace stopped'; then
  ncaller=$(echo "$bt" | grep -c bt_caller)
  r1="bt ok (caller frames: $ncaller)"; [ "$ncaller" = 1 ] || { r1="bt DUPLICATE caller frames: $ncaller"; fail=1; }
else r1="bt FAIL"; fail=1; echo "$bt" | sed 's/^/      /'; fi
out2=$(gdb -nx -batch -ex "break t_bt.c:$SITE" -ex run -ex 'delete' -ex 'next' -ex 'bt 1' "$B" 2>&1)
f0=$(echo "$out2" | grep '^#0' | head -1)
if echo "$out2" | grep -qi 'Cannot find bounds\|corrupt'; then r2="next FAIL (error)"; fail=1
elif echo "$f0" | grep -q 'bt_callee'; then r2="next FAIL (stopped in callee)"; fail=1
elif echo "$f0" | grep -q "bt_caller.*t_bt.c:$SITE\$"; then r2="next FAIL (still on site line)"; fail=1
elif echo "$f0" | grep -q 'bt_caller\| main '; then r2="next ok ($(echo "$f0" | sed 's/.* in //;s/ (.*) at / @ /;s/^#0 *//'))"
else r2="next FAIL: $f0"; fail=1; fi
echo "$r1; $r2"
exit $fail
