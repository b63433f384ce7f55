#!/usr/bin/env bash
# Issue 21: the brokerage workload on this machine.
#   bench/brokerage/run.sh load [OUT_DIR]  load 1,000 customers with TPC-E's 300 trading days of
#                                          history on SQLite, PostgreSQL and MariaDB, timed
#   bench/brokerage/run.sh io [OUT_DIR]    its I/O against TPC-C's on MariaDB (file per table, so
#                                          that the trace names each table's file): reads per write,
#                                          I/Os per transaction, the hottest tables
#   bench/brokerage/run.sh engines [OUT_DIR]  the default load (10 days) and a 4-terminal run on each
#                                          engine: tpsE-like, the mix, the driver's share of the CPU
# Raw outputs and summary-<part>.md go into OUT_DIR (default: results/<date>).
set -euo pipefail
part="${1:?give load, io or engines}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${2:-$here/results/$(date -u +%Y-%m-%d)}"
days="${DAYS:-300}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
(cd "$repo" && cargo build --release --locked -q -p oltplab)
oltplab="$repo/target/release/oltplab"
work="$(mktemp -d /var/tmp/oltplab-brokerage.XXXXXX)"
# Managed servers run as their own account, which must be able to enter it.
chmod 711 "$work"
trap 'rm -rf "$work"' EXIT
log() { echo "$*" >> "$out/commands-$part.txt"; }
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty)); $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB" >> "$out/commands-$part.txt"

case "$part" in
load)
  for engine in ${ENGINES:-sqlite postgres mariadb}; do
    cmd=("$oltplab" load brokerage --engine "$engine" --data-dir "$work/$engine" --days "$days")
    log "${cmd[*]}"
    /usr/bin/time -f "wall_s=%e user_s=%U sys_s=%S max_rss_kib=%M" -o "$out/load-$engine.time" \
      "${cmd[@]}" 2> "$out/load-$engine.stderr"
    du -sb "$work/$engine" | awk '{print "bytes=" $1}' >> "$out/load-$engine.time"
    rm -rf "$work/$engine"
  done
  python3 - "$out" <<'PY'
import re, sys, pathlib
out = pathlib.Path(sys.argv[1])
rows = []
for e in ["sqlite", "postgres", "mariadb"]:
    if not (out / f"load-{e}.time").exists():
        continue
    t = dict(kv.split("=") for kv in (out / f"load-{e}.time").read_text().split() if "=" in kv)
    err = (out / f"load-{e}.stderr").read_text()
    m = re.search(r"loaded ([\d,]+) rows in ([\d.]+) s \(([\d,.]+[kM]?) rows/s; data ([\d.]+) s, indexes and statistics ([\d.]+) s\)", err)
    ok = "VIOLATED" not in err and "holds" in err
    rows.append(f"| {e} | {m.group(1)} | {m.group(2)} | {m.group(4)} | {m.group(5)} | {m.group(3)} | {float(t['wall_s']):.0f} | {int(t['bytes'])/2**30:.1f} | {'hold' if ok else 'VIOLATED'} |")
(out / "summary-load.md").write_text(
    "| engine | rows | load s | data s | indexes s | rows/s | wall s with check | GiB | invariants |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
    + "\n".join(rows) + "\n")
print((out / "summary-load.md").read_text())
PY
  ;;
io)
  pool="${POOL:-1g}"; terminals="${TERMINALS:-8}"; warehouses="${WAREHOUSES:-20}"
  duration="${DURATION:-60s}"; warmup="${WARMUP:-20s}"
  b=(--engine mariadb --data-dir "$work/brokerage" --buffer-pool "$pool")
  t=(--engine mariadb --data-dir "$work/tpcc" --buffer-pool "$pool")
  cmds=(
    "$oltplab -q load brokerage ${b[*]} --days $days --no-check"
    "$oltplab -q run brokerage ${b[*]} --terminals $terminals --warmup $warmup --duration $duration --trace $work/brokerage.trace --out $work/rb --json $out/run-brokerage.json"
    "$oltplab -q trace stat $work/brokerage.trace --json $out/stat-brokerage.json"
    "$oltplab -q load tpcc ${t[*]} --warehouses $warehouses --no-check"
    "$oltplab -q run tpcc ${t[*]} --terminals $terminals --warmup $warmup --duration $duration --trace $work/tpcc.trace --out $work/rt --json $out/run-tpcc.json"
    "$oltplab -q trace stat $work/tpcc.trace --json $out/stat-tpcc.json"
  )
  for c in "${cmds[@]}"; do
    log "$c"
    name=$(echo "$c" | awk '{print $3 "-" $4}')
    $c > "$out/$name.stdout" 2> "$out/$name.stderr"
  done
  du -sb "$work/brokerage" "$work/tpcc" > "$out/sizes.txt"
  python3 "$here/summarise_io.py" "$out"
  ;;
engines)
  for engine in sqlite postgres mariadb; do
    d=(--engine "$engine" --data-dir "$work/e-$engine")
    for c in "$oltplab -q load brokerage ${d[*]} --no-check" \
             "$oltplab -q run brokerage ${d[*]} --terminals 4 --warmup 10s --duration 30s --out $work/r-$engine --json $out/engine-$engine.json"; do
      log "$c"
      $c 2>> "$out/engine-$engine.stderr"
    done
    rm -rf "$work/e-$engine"
  done
  python3 - "$out" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
rows = ["| engine | tpsE-like | transactions/s | largest mix deviation (points) | driver share of CPU | driver user s | driver system s |",
        "|---|---:|---:|---:|---:|---:|---:|"]
for e in ["sqlite", "postgres", "mariadb"]:
    s = json.loads((out / f"engine-{e}.json").read_text())["summary"]
    dev = max(abs(m["measured_pct"] - m["weight_pct"]) for m in s["mix"].values())
    c = s["cpu"]
    rows.append(f"| {e} | {s['tpse_like']:.1f} | {s['tps_total']:,.0f} | {dev:.2f} | {100 * c['driver_share']:.1f} % | {c['driver_user_s']:.1f} | {c['driver_sys_s']:.1f} |")
(out / "summary-engines.md").write_text("\n".join(rows) + "\n")
print((out / "summary-engines.md").read_text())
PY
  ;;
*) echo "give load, io or engines" >&2; exit 2 ;;
esac
