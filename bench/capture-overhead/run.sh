#!/usr/bin/env bash
# What capturing the database's I/O costs: tpmC of `oltplab run tpcc` without and with --trace, on
# embedded SQLite (the VFS) and on a managed PostgreSQL and MariaDB (the LD_PRELOAD shim, --emulate
# host: nothing is delayed, only traced). Issue 5's target: capture costs at most 5 % of tpmC.
# Rounds alternate the order (plain, traced / traced, plain) so that drift of the database (it grows
# as TPC-C runs) and of the machine falls on both sides equally. Writes every raw output and a
# summary.md into runs/<date>-<host>/ (or $1). Run from anywhere: bench/capture-overhead/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
rounds="${ROUNDS:-3}"
duration="${DURATION:-30s}"
warmup="${WARMUP:-5s}"
terminals="${TERMINALS:-4}"
engines="${ENGINES:-sqlite postgres mariadb}"
mkdir -p "$out"
(cd "$repo" && cargo build --release --locked -q -p oltplab -p oltplab-shim)
oltplab="$repo/target/release/oltplab"
work="$repo/oltplab-data/bench-capture"
rm -rf "$work"
mkdir -p "$work"
{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
} > "$out/commands.txt"

run() { # name, command…
  local name="$1"; shift
  echo "$*" >> "$out/commands.txt"
  "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
}

for engine in $engines; do
  data="$work/$engine"
  run "$engine-load" "$oltplab" load tpcc --engine "$engine" --data-dir "$data" -w 1 --no-check
  for round in $(seq 1 "$rounds"); do
    if (( round % 2 )); then order="plain traced"; else order="traced plain"; fi
    for mode in $order; do
      name="$engine-$mode-$round"
      extra=()
      [[ $mode == traced ]] && extra=(--trace "$work/$name.trace")
      run "$name" "$oltplab" run tpcc --engine "$engine" --data-dir "$data" -t "$terminals" \
        --warmup "$warmup" --duration "$duration" --out "$out/$name" "${extra[@]}"
      rm -f "$work/$name.trace"
    done
  done
done

python3 "$here/summarise.py" "$out" $engines > "$out/summary.md"
cat "$out/summary.md"
rm -rf "$work"
