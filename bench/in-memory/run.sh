#!/usr/bin/env bash
# S5 (docs/studies.md) on this machine: `oltplab study --scenario in-memory` on SQLite, PostgreSQL and
# MariaDB — disk versus memory tables, update and insert, each over a sweep of connection counts
# with a fixed number of transactions per connection. Writes every study's output (results.json,
# report.html, each run's result) and the console output into runs/<date>-<host>/ (or $1).
#   SCALE=default|quick|paper (default: default: 50/200/500/1000 connections, 100 transactions each)
#   ENGINES="sqlite postgres mariadb"
# The databases live in $DATA (default /var/tmp/oltplab-bench-in-memory): managed servers run as
# postgres/mysql when this runs as root, so the directory must be reachable by those accounts.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
scale="${SCALE:-default}"
engines="${ENGINES:-sqlite postgres mariadb}"
data="${DATA:-/var/tmp/oltplab-bench-in-memory}"
mkdir -p "$out"
(cd "$repo" && cargo build --release -q -p oltplab)
oltplab="$repo/target/release/oltplab"
{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/commands.txt"
for engine in $engines; do
  args=(study --scenario in-memory --engine "$engine" --scale "$scale" --data-dir "$data/$engine" --out "$out/$engine" --force)
  echo "oltplab ${args[*]}" >> "$out/commands.txt"
  "$oltplab" "${args[@]}" > "$out/$engine.stdout" 2> "$out/$engine.stderr"
  echo "load average after $engine: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/commands.txt"
done
rm -rf "$data"
