#!/usr/bin/env bash
# Layouts: a TPC-C run on each engine with the log and the stock table on their own emulated
# devices (and `trace stat`'s I/O per table from its trace), the emulator's CPU per I/O with and
# without a layout, and the S2/S3/S4 studies at the quick scale.
#   bench/layouts/run.sh [OUT_DIR]     (release build at ./target/release/oltplab)
set -euo pipefail
out=${1:-bench/layouts/results/$(date -u +%F)}
mkdir -p "$out"
O=./target/release/oltplab
# Under /var/tmp and enterable: a server run as its own account (root's CI) must reach it.
work=$(mktemp -d /var/tmp/oltplab-bench-layouts-XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
cargo run --release -q -p oltplab-devmodel --example submit_cost > "$out/submit-cost.txt"
for engine in sqlite postgres mariadb; do
  $O load tpcc --engine $engine --warehouses 1 --data-dir "$work/$engine" --no-check
  $O run tpcc --engine $engine --data-dir "$work/$engine" --terminals 2 --duration 5s --warmup 1s \
    --layout 'data=hdd-15k,log=pcie-flash-2012,temp=pcie-flash-2012,table:stock=sas-ssd-2012' \
    --trace "$work/$engine.trace" --json "$out/$engine-layout-run.json" --out "$work/$engine-res" \
    2> "$out/$engine-layout-run.txt"
  $O trace stat "$work/$engine.trace" > "$out/$engine-trace-stat.txt"
done
# A users ramp of the brokerage workload (S3's) on an HDD RAID10 with the log on flash.
$O load brokerage --data-dir "$work/ramp" -q
$O run brokerage --data-dir "$work/ramp" --terminals 1,4,8 --warmup 3s --duration 10s \
  --layout 'data=raid10(16,hdd-15k),log=pcie-flash-2012' --out "$work/ramp-res" \
  --json "$out/brokerage-ramp.json" > "$out/brokerage-ramp.txt" 2>&1
# S2, S3 and S4 at the quick scale: wall time and the per-configuration table.
for scenario in "cache-tiers --engine sqlite" "cache-tiers --engine sqlite --workload brokerage" \
                "placement --engine postgres" "placement --engine sqlite" "profiles --engine sqlite"; do
  name=$(echo "$scenario" | sed 's/ --engine /-/; s/ --workload /-/')
  /usr/bin/time -f "%e s wall" $O study --scenario $scenario --scale quick \
    --data-dir "$work/study-$name" --out "$work/study-$name-out" > "$out/study-$name.txt" 2>&1
  cp "$work/study-$name-out/results.json" "$out/study-$name.json"
done
