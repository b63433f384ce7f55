#!/usr/bin/env bash
# Issue 20, item 7: how much of SQLite's page cache survives when several connections share a
# database in WAL mode? SQLite discards a connection's whole cache when, at the start of a read
# transaction, it sees that another connection has committed. With one terminal the cache stays
# warm; with eight, each connection holds --buffer-pool / 8 and may start cold after any commit.
#
# For each terminal count and buffer pool: a 1-warehouse TPC-C run on SQLite with the VFS trace on
# (`--trace`), so that `summary.io.by_tx.<type>.reads_per_tx` counts the pages each transaction
# asked the VFS for — the reads an emulated device would see. Writes raw results and summary.md.
#   bench/sqlite-cache/run.sh [OUT_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/results/$(date -u +%Y-%m-%d)}"
duration="${DURATION:-20s}"
warmup="${WARMUP:-5s}"
pools="${POOLS:-256m 16m}"
terminals="${TERMINALS:-1 8}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
(cd "$repo" && cargo build --release --locked -q -p oltplab)
oltplab="$repo/target/release/oltplab"
work="$(mktemp -d /var/tmp/oltplab-sqlite-cache.XXXXXX)"
trap 'rm -rf "$work"' EXIT
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "$oltplab load tpcc --data-dir $work/data --warehouses 1"
} > "$out/commands.txt"
"$oltplab" -q load tpcc --data-dir "$work/data" --warehouses 1 --no-check
for pool in $pools; do
  for t in $terminals; do
    cmd=("$oltplab" -q run tpcc --data-dir "$work/data" --terminals "$t" --buffer-pool "$pool"
         --warmup "$warmup" --duration "$duration" --trace "$work/run-$pool-$t.trace"
         --out "$work/r-$pool-$t" --force --json "$out/run-$pool-$t.json")
    echo "${cmd[*]}" >> "$out/commands.txt"
    "${cmd[@]}" 2> "$out/run-$pool-$t.stderr"
  done
done
python3 - "$out" $pools -- $terminals <<'PY'
import json, sys
out = sys.argv[1]
sep = sys.argv.index("--")
pools, terms = sys.argv[2:sep], sys.argv[sep + 1:]
rows = ["| buffer pool | terminals | cache per connection | NOPM | reads/tx new_order | payment | order_status | stock_level | all reads/s |",
        "|---|---|---|---|---|---|---|---|---|"]
for p in pools:
    for t in terms:
        d = json.load(open(f"{out}/run-{p}-{t}.json"))
        s = d["summary"]
        by = s["io"]["by_tx"]
        per = lambda k: f'{by.get(k, {}).get("reads_per_tx", 0):.1f}'
        cache = d["env"]["engine_settings"].get("cache_bytes_per_connection", "?")
        rows.append(f'| {p} | {t} | {cache} | {s["nopm"]:.0f} | {per("new_order")} | {per("payment")} | '
                    f'{per("order_status")} | {per("stock_level")} | {s["io"]["reads"] / s["measured_s"]:.0f} |')
open(f"{out}/summary.md", "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
