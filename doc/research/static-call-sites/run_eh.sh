#!/bin/sh
# usage: run_eh.sh CXX OPT VARIANTFLAGS...   -> runs single-TU and split-TU builds
CXX=$1; O=$2; shift 2
set -e
$CXX $O -g "$@" t_eh.cc -o bin/eh1
$CXX $O -g "$@" -DEH_PART_MIDS -c t_eh.cc -o bin/eh_mids.o
$CXX $O -g "$@" -DEH_PART_MAIN -c t_eh.cc -o bin/eh_main.o
$CXX bin/eh_mids.o bin/eh_main.o -o bin/eh2
set +e
echo "  [one TU]";   ./bin/eh1 2>/dev/null | sed 's/^/  /'
echo "  [split TU]"; ./bin/eh2 2>/dev/null | sed 's/^/  /'
