#!/bin/bash
# Alternates binaries over rounds on one loaded database per engine; prints one line per run.
# usage: measure.sh OUTDIR ROUNDS ENGINES BIN_A BIN_B ...
set -euo pipefail
out="$1"; rounds="$2"; engines="$3"; shift 3
bins=("$@")
mkdir -p "$out"
for engine in $engines; do
  data="${DATA:-/var/tmp/oltplab-driver-round-trips}/$engine"
  if [ ! -e "$data/.loaded" ]; then
    rm -rf "$data"
    nice -n 19 "${bins[0]}" load tpcc --engine "$engine" --data-dir "$data" --warehouses 2 --threads 2 --buffer-pool 512m -q
    touch "$data/.loaded"
  fi
  for r in $(seq 1 "$rounds"); do
    order=("${bins[@]}")
    if [ $((r % 2)) -eq 0 ]; then order=($(printf '%s\n' "${bins[@]}" | tac)); fi
    for bin in "${order[@]}"; do
      name="$engine-$(basename "$bin")-$r"
      load1=$(cut -d' ' -f1 /proc/loadavg)
      nice -n 19 "$bin" run tpcc --engine "$engine" --data-dir "$data" --buffer-pool 512m \
        --terminals 4 --warmup 5s --duration 30s -q --json "$out/$name.json" --out "$out/$name.d" > "$out/$name.log" 2>&1 || { echo "$name failed"; tail -3 "$out/$name.log"; }
      python3 - "$out/$name.json" "$name" "$load1" <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); s=d["summary"]; c=s["cpu"]
tx=s.get("tx",{})
errs=sum(v.get("errors",0) for v in tx.values()) if isinstance(tx,dict) else "?"
print(f'{sys.argv[2]:40s} tpmC {s["tpmc"]:9.0f} driver_share {100*c["driver_share"]:5.1f} % driver_cpu_s {c["driver_user_s"]+c["driver_sys_s"]:6.2f} db_cpu_s {c["db_user_s"]+c["db_sys_s"]:6.2f} util {c["utilisation"]:.2f} errors {errs} load {sys.argv[3]}')
PY
    done
  done
  nice -n 19 "${bins[-1]}" check tpcc --engine "$engine" --data-dir "$data" --buffer-pool 512m > "$out/$engine-check.log" 2>&1 && echo "$engine check: ok" || { echo "$engine check FAILED"; tail -15 "$out/$engine-check.log"; }
done
