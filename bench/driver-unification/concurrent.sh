#!/bin/bash
# The machine's load swung tpmC by a factor of 25 between sequential runs (runs/pooled.md), so
# this runs the two builds at the same time, each on its own copy of one load with the same
# settings: whatever else runs on the machine falls on both alike. Usage:
# bench/driver-unification/concurrent.sh BEFORE_BIN AFTER_BIN OUT [ROUNDS]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
before=$(realpath "$1") after=$(realpath "$2") out=$3 rounds=${4:-3}
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d /var/tmp/oltplab-driver-concurrent.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
nice -n 19 "$before" -q load tpcc -w 2 --data-dir loaded > "$out/load.log" 2>&1
run() { # run BUILD BIN ROUND
  nice -n 19 "$2" -q run tpcc -w 2 -t 4 --duration 30s --warmup 5s --data-dir "db-$1-r$3" \
    --json "$out/run-$1-r$3.json" --out "r-$1-r$3" > "$out/run-$1-r$3.log" 2>&1
}
for r in $(seq "$rounds"); do
  rm -rf db-* r-*
  cp -a loaded "db-before-r$r"
  cp -a loaded "db-after-r$r"
  run before "$before" "$r" &
  run after "$after" "$r" &
  wait
done
python3 "$here/summarize.py" "$out" > "$out/summary.md"
cat "$out/summary.md"
