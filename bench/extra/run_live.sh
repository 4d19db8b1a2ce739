#!/bin/sh
# run_live.sh PEERS_FLIP OUTDIR SITE_FORM - the figures of issue [2/8]:
# enable+disable latency of a key with 1..10,000 sites, with 0 and 2
# threads running the sites, and the Rust crate static-keys 0.8.2 at the
# same site counts (single-threaded: it is not safe otherwise); then the
# disabled form at rest (SITE_FORM: bench_site_form). Raw samples are kept
# as JSON in OUTDIR.
set -eu
flip=$1; out=$2; form=$3
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
mkdir -p "$out"
echo "== machine: $(uname -sr), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "== switchyard (bench/peers_flip.c)"
"$flip" "$out/switchyard-flip.json"
echo
echo "== peer: Rust static-keys 0.8.2 (bench/peers/rust-static-keys)"
rc=0
"$here/run_rust_static_keys.sh" "$out/rust-target" > "$out/rust-static-keys.jsonl" || rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIP: cargo not installed; switchyard figures only"
	"$here/report.py" "$out/switchyard-flip.json"
	exit 0
fi
[ $rc -eq 0 ] || exit $rc
echo
"$here/report.py" "$out/switchyard-flip.json" "$out/rust-static-keys.jsonl"
echo
echo "== the disabled form at rest: TEST vs NOP (bench/extra/bench_site_form.c)"
"$form"
