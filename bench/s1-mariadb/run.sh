#!/bin/bash
# S1's reproduction on an InnoDB-class engine, in S1's proportions: `oltplab study --scale s1
# --engine mariadb` (10 warehouses, one terminal per warehouse, a buffer pool of 2.5 % of the data,
# O_DIRECT, 30 s warm-up + 90 s per device), unpaced and with TPC-C's keying and think times.
# Usage: bench/s1-mariadb/run.sh [OUT]   (from the repository's root, after cargo build --release)
set -euo pipefail
out=${1:-bench/s1-mariadb/runs/$(date -u +%Y-%m-%d)-vm}
bin=${OLTPLAB:-target/release/oltplab}
data=$(mktemp -d /var/tmp/oltplab-s1.XXXXXX)
# A managed MariaDB runs as its own account, which must be able to enter the data directory.
chmod 711 "$data"
trap 'rm -rf "$data"' EXIT
mkdir -p "$out"
# PACINGS="spec": only those pacings.
for pacing in ${PACINGS:-none spec}; do
  /usr/bin/time -v "$bin" study --engine mariadb --scale s1 --pacing "$pacing" \
    --data-dir "$data/$pacing" --out "$data/study-$pacing" \
    > "$out/study-$pacing.log" 2> "$out/study-$pacing.time" || true
  cp "$data/study-$pacing/results.json" "$out/results-$pacing.json"
  cp "$data/study-$pacing/report.html" "$out/report-$pacing.html"
done
python3 "$(dirname "$0")/summarize.py" "$out"
