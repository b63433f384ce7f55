#!/usr/bin/env bash
# What TPC-C on PostgreSQL pays for each --isolation level (issue 20, item 1): a managed
# PostgreSQL, WAREHOUSES warehouses, TERMINALS unpaced terminals, WARMUP + DURATION, ROUNDS rounds
# of read-committed (the default: level 3 through locking reads), repeatable-read and
# serializable, alternating. Raw results and summary.md into results/<date>/ (or $1).
#   bench/tpcc-isolation/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/results/$(date -u +%Y-%m-%d)}"
warehouses="${WAREHOUSES:-1}"
terminals="${TERMINALS:-4}"
warmup="${WARMUP:-5s}"
duration="${DURATION:-30s}"
rounds="${ROUNDS:-2}"
levels="${LEVELS:-read-committed repeatable-read serializable}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
(cd "$repo" && cargo build --release --locked -q -p oltplab)
oltplab="$repo/target/release/oltplab"
work="$(mktemp -d /var/tmp/oltplab-tpcc-isolation.XXXXXX)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))" > "$out/commands.txt"
load=("$oltplab" -q load tpcc --engine postgres --data-dir "$work/data" --warehouses "$warehouses" --no-check)
echo "${load[*]}" >> "$out/commands.txt"
"${load[@]}"
for r in $(seq 1 "$rounds"); do
  for level in $levels; do
    cmd=("$oltplab" -q run tpcc --engine postgres --data-dir "$work/data" --terminals "$terminals"
         --warmup "$warmup" --duration "$duration" --isolation "$level"
         --out "$work/r" --force --json "$out/run-$level-$r.json")
    echo "${cmd[*]}" >> "$out/commands.txt"
    "${cmd[@]}" 2> "$out/run-$level-$r.stderr"
  done
done
python3 - "$out" $levels <<'PY'
import json, sys, glob, statistics
out, levels = sys.argv[1], sys.argv[2:]
rows = ["| isolation | rounds | NOPM (median) | retries per 100 tx | failed tx per 100 tx | Payment p90 | New-Order p90 |",
        "|---|---|---|---|---|---|---|"]
for level in levels:
    docs = [json.load(open(p)) for p in sorted(glob.glob(f"{out}/run-{level}-*.json"))]
    nopm = statistics.median(d["summary"]["nopm"] for d in docs)
    def per100(key):
        v = [100 * sum(t[key] for t in d["summary"]["tx"].values()) / max(1, sum(t["count"] for t in d["summary"]["tx"].values())) for d in docs]
        return statistics.median(v)
    p90 = lambda tx: statistics.median(d["summary"]["tx"][tx]["lat_ns"]["p90"] for d in docs) / 1e6
    rows.append(f"| {level} | {len(docs)} | {nopm:,.0f} | {per100('retries'):.1f} | {per100('errors'):.2f} | {p90('payment'):.1f} ms | {p90('new_order'):.1f} ms |")
open(f"{out}/summary.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
