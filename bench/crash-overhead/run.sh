#!/usr/bin/env bash
# What power-cut support costs (issue 36): tpmC of TPC-C on SQLite with the VFS's crash capture
# (undo kept for every write a cut could lose) and without it, on the same emulated device, in
# alternating rounds on fresh copies of one load (the crash_overhead example); then the time of
# one cut-recover-check cycle at 1 warehouse (`oltplab crash tpcc`). Writes every raw output and
# commands.txt into runs/<date>-<host>/ (or $1). Run from anywhere: bench/crash-overhead/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
rounds="${ROUNDS:-4}"
seconds="${SECONDS_PER_RUN:-20}"
terminals="${TERMINALS:-4}"
# (Not in ${SPECS:-…}: the spec's closing brace would end the expansion.)
default_specs='pcie-flash-2012 pcie-flash-2012{cache=volatile} pcie-flash-2012{cache=lying}'
specs="${SPECS:-$default_specs}"
only="${ONLY_CYCLE:-}"  # set: skip the overhead rounds
mkdir -p "$out"
(cd "$repo" && cargo build --release --locked -q -p oltplab --bin oltplab --example crash_overhead)
oltplab="$repo/target/release/oltplab"
overhead="$repo/target/release/examples/crash_overhead"
work="$(mktemp -d /tmp/oltplab-bench-crash.XXXXXX)"
trap 'rm -rf "$work"' EXIT
{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$out/commands.txt"

run() { # name, command…
  local name="$1"; shift
  echo "$*" >> "$out/commands.txt"
  "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
}

run load "$oltplab" load tpcc --engine sqlite --data-dir "$work/data" -w 1 --no-check
for spec in $specs; do
  [[ -n $only ]] && break
  name="overhead-$(echo "$spec" | tr -c 'a-z0-9.\n-' '_')"
  run "$name" "$overhead" "$work/data/tpcc.sqlite" "$spec" "$seconds" "$rounds" "$terminals"
  tail -1 "$out/$name.stdout"
done
run cycle "$oltplab" crash tpcc --emulate 'pcie-flash-2012{cache=volatile}' \
  --emulate 'pcie-flash-2012{cache=lying}' --cuts "${CUTS:-3}" --seed 1 --out "$work/crash" --json "$out/cycle.json"
cat "$out/cycle.stdout"
