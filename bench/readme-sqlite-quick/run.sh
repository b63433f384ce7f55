#!/bin/bash
# The README's SQLite table: `oltplab study --scale quick --repeat 3` (1 warehouse, 4 terminals,
# 3 s + 10 s per device, three runs each on fresh copies), its results, report and console output.
# Usage: bench/readme-sqlite-quick/run.sh [OUT]   (from the repository's root, after
# cargo build --release)
set -euo pipefail
out=${1:-bench/readme-sqlite-quick/runs/$(date -u +%Y-%m-%d)-vm}
bin=${OLTPLAB:-target/release/oltplab}
tmp=$(mktemp -d /var/tmp/oltplab-readme.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
{ echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"; date -u; uname -r;
  nproc; cat /proc/loadavg; } > "$out/env.txt"
( time "$bin" study --scale quick --repeat 3 --out "$tmp/study" --data-dir "$tmp/data" ) \
  > "$out/study.log" 2>&1
cp "$tmp/study/results.json" "$tmp/study/report.html" "$out/"
