#!/bin/bash
# The brokerage with client-side statements and with `--procedures`, alternating over rounds on
# one loaded database per engine (one binary); prints one line per run, then checks the
# invariants. usage: brokerage.sh OUTDIR ROUNDS "ENGINES" BIN
set -euo pipefail
out="$1"; rounds="$2"; engines="$3"; bin="$4"
mkdir -p "$out"
for engine in $engines; do
data="${DATA:-/var/tmp/oltplab-driver-round-trips}/brokerage-$engine"
if [ ! -e "$data/.loaded" ]; then
  rm -rf "$data"
  nice -n 19 "$bin" -q load brokerage --engine "$engine" --data-dir "$data" --days 2 --buffer-pool 512m
  touch "$data/.loaded"
fi
for r in $(seq 1 "$rounds"); do
  modes=(statements procedures)
  if [ $((r % 2)) -eq 0 ]; then modes=(procedures statements); fi
  for mode in "${modes[@]}"; do
    name="$engine-$mode-$r"
    extra=(); if [ "$mode" = procedures ]; then extra=(--procedures); fi
    load1=$(cut -d' ' -f1 /proc/loadavg)
    nice -n 19 "$bin" run brokerage --engine "$engine" --data-dir "$data" --buffer-pool 512m "${extra[@]}" \
      --terminals 4 --warmup 5s --duration 30s -q --json "$out/$name.json" --out "$out/$name.d" > "$out/$name.log" 2>&1 || { echo "$name failed"; tail -3 "$out/$name.log"; }
    python3 - "$out/$name.json" "$name" "$load1" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=d["summary"]; c=s["cpu"]
errs=sum(v.get("errors",0) for v in s["tx"].values())
tr=s["tx"]["trade_result"]["count"]
drv=c["driver_user_s"]+c["driver_sys_s"]; db=c["db_user_s"]+c["db_sys_s"]
print(f'{sys.argv[2]:28s} tpsE-like {s["tpse_like"]:7.1f} tx/s {s["tps_total"]:7.0f} driver_share {100*c["driver_share"]:5.1f} % driver CPU-s/1000 TR {1000*drv/tr:.3f} server CPU-s/1000 TR {1000*db/tr:.3f} util {c["utilisation"]:.2f} errors {errs} load {sys.argv[3]}')
PY
  done
done
nice -n 19 "$bin" check brokerage --engine "$engine" --data-dir "$data" --buffer-pool 512m > "$out/$engine-check.log" 2>&1 && echo "$engine check: ok" || { echo "$engine check FAILED"; tail -15 "$out/$engine-check.log"; }
done
