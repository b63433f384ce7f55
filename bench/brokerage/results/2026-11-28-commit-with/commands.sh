#!/bin/bash
# Issue 33, item 5: brokerage's read-only transactions (and Trade-Update) send COMMIT with their
# last statement. A = the build before (a worktree of the parent commit), B = the build after;
# one load per engine (the default 1,000 customers), then runs A B B A B A, each 4 terminals,
# 10 s warm-up, 30 s measured, as bench/brokerage/run.sh engines. Prints one line per run.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
A=${A:-/work/wtab/target/release/oltplab}
B=${B:-/work/main/target/release/oltplab}
work=$(mktemp -d /var/tmp/oltplab-commit-with.XXXXXX)
chmod 711 "$work"
trap 'rm -rf "$work"' EXIT
for engine in postgres mariadb; do
  d=(--engine "$engine" --data-dir "$work/e-$engine")
  "$B" -q load brokerage "${d[@]}" --no-check 2> "$out/load-$engine.stderr"
  n=0
  for side in A B B A B A; do
    n=$((n + 1))
    bin=${!side}
    name="$engine-$n-$side"
    "$bin" -q run brokerage "${d[@]}" --terminals 4 --warmup 10s --duration 30s \
      --out "$work/r-$name" --json "$out/$name.json" 2> "$out/$name.stderr"
    python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]; c = s["cpu"]
dev = max(abs(m["measured_pct"] - m["weight_pct"]) for m in s["mix"].values())
print(f'{sys.argv[2]:16s} tpsE-like {s["tpse_like"]:7.1f} tx/s {s["tps_total"]:7.0f} driver_share {100 * c["driver_share"]:5.1f} % '
      f'driver_cpu_s {c["driver_user_s"] + c["driver_sys_s"]:6.2f} db_cpu_s {c["db_user_s"] + c["db_sys_s"]:6.2f} mix_dev {dev:.2f}')
PY
  done
  rm -rf "$work/e-$engine"
done
