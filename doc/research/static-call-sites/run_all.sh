#!/bin/sh
# Runs tests (a)-(d) over compilers x opt levels x techniques. Output: results.txt
cd "$(dirname "$0")"; mkdir -p bin
for O in -O0 -O2 -O3; do
 for V in NAIVE KC DCR FP FAKE TRAMP; do
  if [ $V = TRAMP ]; then F=-DSY_SC_TRAMP=1; else F=-DSY_SC_VARIANT=$V; fi
  for C in gcc clang; do
   CXX=g++; [ $C = clang ] && CXX=clang++
   a=$($C $O -g $F t_redzone.c callee_clobber.S -o bin/rz 2>&1 && { ./bin/rz >bin/rz.out 2>&1; rc=$?; [ $rc = 0 ] && echo PASS || { [ $rc -gt 128 ] && echo "FAIL(sig$((rc-128)))" || echo "FAIL($(grep -c FAIL bin/rz.out) checks)"; }; })
   if [ $V = NAIVE ] || [ $V = KC ]; then echo "$C $O $V | a:$a"; continue; fi
   ./run_eh.sh $CXX $O $F >bin/eh.out 2>&1
   b1=$(sed -n '/one TU/,/split TU/p' bin/eh.out | grep -c '  ok'); b2=$(sed -n '/split TU/,$p' bin/eh.out | grep -c '  ok')
   $C $O -g -rdynamic $F t_bt.c -o bin/bt; c=$(./bin/bt | tail -1 | cut -d' ' -f2-)
   d=$(./run_gdb.sh bin/bt)
   echo "$C $O $V | a:$a | b(eh ok of 3: plain,raii,try) oneTU:$b1 splitTU:$b2 | c:$c | d:$d"
  done
 done
done
