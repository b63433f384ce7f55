#!/bin/bash
# Issue 30, item 4: the emulator's end-to-end error, from a closed loop on a real device.
# 1. `oltplab devices fit` measures this machine's disk (a directory on the file system the run's
#    data lives on, O_DIRECT) and fits the flash model to it.
# 2. TPC-C on a managed MariaDB in S1's proportions (one terminal per warehouse, a buffer pool of
#    2.5 % of the loaded data, O_DIRECT), scaled down so that a run takes ~1.5 min, in alternating
#    rounds: on the real disk (`--emulate host --backing disk`: the shim only times and traces
#    the I/O) and from the page cache (a copy beside it) under `--emulate <fitted spec> --backing ram`. Each
#    run starts from a copy of one load. Both sides are captured by the same shim, so their
#    traces compare.
# 3. summarize.py prints tpmC, run IOPS and the database's I/O latency p50/p99 per side.
# Usage: bench/emulator-closed-loop/run.sh [OUT]   (from the repository's root, after
# cargo build --release). ROUNDS, WAREHOUSES, DURATION, WARMUP, FIT_RUNTIME override the defaults;
# FIT_SPEC, TRACE_SPEC, SIDES, KEEP_TRACES and LOADED are described where they are used below.
set -euo pipefail
out=${1:-bench/emulator-closed-loop/runs/$(date -u +%Y-%m-%d)-vm}
bin=${OLTPLAB:-target/release/oltplab}
rounds=${ROUNDS:-2}
warehouses=${WAREHOUSES:-10}
duration=${DURATION:-60s}
warmup=${WARMUP:-20s}
fit_runtime=${FIT_RUNTIME:-1s}
# On the root file system, as /work is: the real device under test.
data=$(mktemp -d /var/tmp/oltplab-closed-loop.XXXXXX)
# The emulated side's copy lives on the same file system, served from the page cache
# (`--backing ram`: O_DIRECT dropped, syncs not passed on), as the studies' emulated runs are.
# Not in /dev/shm: MariaDB takes /dev/shm for persistent memory and memory-maps its redo log
# there, so the log's writes and syncs would never reach the emulated device (runs before
# 2026-11-27 12:00 did that, see README.md).
ram=$data/emulated
# A managed MariaDB runs as its own account, which must be able to enter the data directory.
chmod 711 "$data"
mkdir -m 711 "$ram"
trap 'rm -rf "$data"' EXIT
mkdir -p "$out"
{ echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"; date -u; uname -r;
  nproc; cat /proc/loadavg; } > "$out/env.txt"

# 1. The fit (FIT_SPEC=FILE: a spec fitted before — e.g. from the curves of an earlier run — instead).
if [ -n "${FIT_SPEC:-}" ]; then
  cp "$FIT_SPEC" "$out/fitted.spec"
else
/usr/bin/time -v "$bin" devices fit "$data/fitdev" --runtime "$fit_runtime" --ramp 500ms \
  --results "$data/fit" --json "$out/fit.json" --out "$out/fitted.spec" \
  > "$out/fit.stdout" 2> "$out/fit.log"
cp "$data/fit/random/result.json" "$out/fit-measured-random.json"
cp "$data/fit/commit/result.json" "$out/fit-measured-commit.json"
rm -rf "$data/fitdev" "$data/fit"
fi
spec=$(cat "$out/fitted.spec")
# TRACE_SPEC=FILE adds a third side, "tracefit": the emulation of a spec fitted to a real run's trace
# (`oltplab devices fit --trace`). KEEP_TRACES=DIR keeps each side's trace there (a real one to
# fit to; all of them to compare beyond the summary).
sides="real emulated"
if [ -n "${TRACE_SPEC:-}" ]; then
  cp "$TRACE_SPEC" "$out/trace-fitted.spec"
  sides="real emulated tracefit"
fi
# SIDES="real tracefit": only those sides, in that order on odd rounds.
sides=${SIDES:-$sides}
echo "fitted: $spec"

# 2. One load, copied for every run.
# (LOADED=DIR: a copy of an earlier load of the same warehouses instead.)
if [ -n "${LOADED:-}" ]; then
  cp -a "$LOADED" "$data/loaded"; echo "copied the load of $LOADED" > "$out/load.log"
else
  "$bin" load tpcc --engine mariadb --warehouses "$warehouses" --data-dir "$data/loaded" \
    > "$out/load.log" 2>&1
fi
data_bytes=$(du -sb "$data/loaded" | cut -f1)
pool=$(( data_bytes / 40 ))                # 2.5 %, S1's 512 MB for ~20 GB
[ "$pool" -lt $((8 << 20)) ] && pool=$((8 << 20))
echo "loaded $warehouses warehouses: $data_bytes bytes; buffer pool $pool bytes" | tee -a "$out/env.txt"

run_side() {  # run_side ROUND SIDE
  local r=$1 side=$2 emulate backing dir side_bin=$bin
  case $side in
    real) emulate=host backing=disk dir=$data/run ;;
    # EMULATED_OLTPLAB=BIN: the emulated side runs another build (an A/B of two emulators
    # against the same disk and load, e.g. FIT_SPEC = TRACE_SPEC and SIDES="real emulated tracefit").
    emulated) emulate=$spec backing=ram dir=$ram/run side_bin=${EMULATED_OLTPLAB:-$bin} ;;
    tracefit) emulate=$(cat "$out/trace-fitted.spec") backing=ram dir=$ram/run ;;
  esac
  cp -a "$data/loaded" "$dir"
  /usr/bin/time -v "$side_bin" run tpcc --engine mariadb --data-dir "$dir" \
    --terminals "$warehouses" --duration "$duration" --warmup "$warmup" --buffer-pool "$pool" \
    --emulate "$emulate" --backing "$backing" --trace "$data/run.trace" \
    --json "$out/round$r-$side.json" --out "$data/out-$r-$side" \
    > "$out/round$r-$side.log" 2> "$out/round$r-$side.time" || true
  "$bin" trace stat "$data/run.trace" --json "$out/round$r-$side-trace.json" \
    > /dev/null 2>&1 || true
  if [ -n "${KEEP_TRACES:-}" ]; then
    mkdir -p "$KEEP_TRACES" && mv "$data/run.trace" "$KEEP_TRACES/round$r-$side.trace"
  fi
  rm -rf "$dir" "$data/run.trace" "$data/out-$r-$side"
}

# 3. Alternating rounds: odd rounds start on the real disk, even ones on the emulation.
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order=$sides; else order=$(echo $sides | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for side in $order; do
    echo "round $r: $side"
    run_side "$r" "$side"
  done
done
python3 "$(dirname "$0")/summarize.py" "$out" | tee "$out/summary.md"
