#!/bin/sh
# SPDX-License-Identifier: MIT
# mutate.sh - the default suite's kill rate: plant one bug at a time in a
# copy of the tree, rebuild, run the default tests (ctest -LE torture,
# without the whole-project builds, install, compile-fail, gdb, valgrind
# and callgrind checks and the negative controls: those of the mutant's
# area first, stopping at the first failure, then the rest for a mutant
# that survives them), and say which tests caught it (the first to fail).
#
#   scripts/mutate.sh            every mutant
#   scripts/mutate.sh 2 5 9      those mutants only
#   scripts/mutate.sh --fresh    the second set (ids 101..: written from src/
#                                and DESIGN alone, scripts/mutants_fresh.py)
#   scripts/mutate.sh --list     what each mutant plants (--fresh --list)
#
# Environment: SY_WORK (scratch directory, default /tmp/switchyard-mutate).
# The unmutated copy must pass first (exit 2 otherwise). Exit 2 also when a
# mutant no longer applies (its old text is not found exactly once: the code
# moved on, fix the mutant) or no longer compiles. One to four minutes per
# mutant on 2 cores. The mutants live in scripts/mutate.py and
# scripts/mutants_fresh.py.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
case " $* " in
*" -h "*|*" --help "*) sed -n '3,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
*" --list "*) exec python3 "$here/mutate.py" "$@" ;;
esac
python3 "$here/mutate.py" --check "$@" || exit 2
work=${SY_WORK:-/tmp/switchyard-mutate}
rm -rf "$work/src"
mkdir -p "$work/src"
# the tree as it is now, committed or not (untracked, not ignored, included)
(cd "$repo" && git ls-files -co --exclude-standard | tar -cf - -T -) |
	tar -xmf - -C "$work/src"
# -m: fresh mtimes, so that no object left by an interrupted run (built
# from a mutant) looks newer than the restored source; and a fresh build.
rm -rf "$work/build"
export CMAKE_BUILD_PARALLEL_LEVEL=2	# 2 cores, shared
SY_REPO=$repo SY_WORK=$work exec python3 "$here/mutate.py" "$@"
