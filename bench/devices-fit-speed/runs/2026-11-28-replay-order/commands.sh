#!/bin/bash
# `devices fit --trace` before (A, a689a5b) and after (B, 31f3a9a) the open-loop replay order
# sorted once and quantiles by selection: wall and user time of the same refit, each replay, two
# alternating rounds, and whether both builds fit the same spec. A: a worktree of a689a5b built
# with `cargo build --release --locked`; B: this repository's release build.
# The trace: TPC-C on a managed MariaDB on this machine's disk, traced by the shim (as the closed
# loop's real side is), 4 warehouses, 4 terminals, 16 MiB buffer pool, 30 s after 10 s.
# The curves: the measured curves of bench/emulator-closed-loop/runs/2026-11-26-vm-fit2.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
A=${A:-/work/wtab/target/release/oltplab}
B=${B:-target/release/oltplab}
w=$(mktemp -d /var/tmp/fitab.XXXXXX)
chmod 711 "$w"
trap 'rm -rf "$w"' EXIT
"$B" -q load tpcc --engine mariadb --warehouses 4 --data-dir "$w/d" > "$w/load.log" 2>&1
"$B" -q run tpcc --engine mariadb --data-dir "$w/d" --terminals 4 --duration 30s --warmup 10s \
  --buffer-pool 16M --emulate host --backing disk --trace "$w/run.trace" --out "$w/out" \
  > "$out/run.log" 2>&1
rm -rf "$w/d" "$w/out"
mkdir -p "$w/refit/random" "$w/refit/commit"
runs=bench/emulator-closed-loop/runs
cp "$runs/2026-11-26-vm-fit2/fit-measured-random.json" "$w/refit/random/result.json"
cp "$runs/2026-11-26-vm-fit2/fit-measured-commit.json" "$w/refit/commit/result.json"
spec=$(cat "$runs/2026-11-28-vm-pauses-only/fitted.spec")
for round in 1 2; do
  for side in A B; do
    for replay in causal open; do
      bin=${!side}
      /usr/bin/time -f "%e s %U user" "$bin" -q devices fit --refit "$w/refit" --start "$spec" \
        --trace "$w/run.trace" --trace-replay "$replay" --max-evals 300 \
        --out "$out/$side-$replay.spec" --json "$out/$side-$replay-$round.json" \
        > /dev/null 2> "$w/time"
      echo "$round $side $replay $(tail -1 "$w/time")" | tee -a "$out/times.txt"
    done
  done
done
for r in causal open; do
  cmp "$out/A-$r.spec" "$out/B-$r.spec" && echo "$r: both builds fit the same spec" | tee -a "$out/times.txt"
done
