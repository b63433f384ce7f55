#!/bin/bash
# The savepoint guard's cost on a 3-node managed Galera cluster: TPC-C NOPM with the guard
# (this commit's oltplab) and without it (the same source with the guard switched off), runs
# alternating on one loaded cluster. Usage: bench/galera-guard/run.sh GUARD_BIN NOGUARD_BIN OUTDIR
set -euo pipefail
guard=$1; noguard=$2; out=$3
data=/tmp/oltplab-bench-galera-guard
mkdir -p "$out"
"$guard" load tpcc --engine galera --nodes 3 --warehouses 4 --data-dir "$data" --force \
  --buffer-pool 128m > "$out/load.txt" 2>&1
for round in 1 2 3; do
  for variant in guard noguard; do
    bin=$guard; [ "$variant" = noguard ] && bin=$noguard
    "$bin" run tpcc --engine galera --data-dir "$data" --buffer-pool 128m --terminals 8 \
      --warmup 10s --duration 30s --out "$out/$variant-$round" > "$out/$variant-$round.txt" 2>&1
  done
done
"$guard" check tpcc --engine galera --data-dir "$data" > "$out/check.txt" 2>&1
rm -rf "$data"
