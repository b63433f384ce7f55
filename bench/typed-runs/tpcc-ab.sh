#!/bin/bash
# TPC-C on SQLite alone, before and after, on copies of one loaded database, alternating which
# build goes first. Usage: bench/typed-runs/tpcc-ab.sh BEFORE_BIN AFTER_BIN OUT [ROUNDS]
set -euo pipefail
before=$(realpath "$1") after=$(realpath "$2") out=$(realpath -m "$3") rounds=${4:-6}
mkdir -p "$out"
work=$(mktemp -d /var/tmp/oltplab-tpcc-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$after" -q load tpcc -w 2 --data-dir base > /dev/null
one() { # one BUILD ROUND
  local bin=$before; [ "$1" = after ] && bin=$after
  rm -rf "db"; cp -a base db
  "$bin" -q run tpcc -w 2 -t 4 --duration 20s --warmup 5s --data-dir db \
    --json "$out/ab-run-$1-r$2.json" --out "r-$1-$2" > "$out/ab-run-$1-r$2.log" 2>&1
  rm -rf "r-$1-$2"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then one before "$r"; one after "$r"; else one after "$r"; one before "$r"; fi
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
t = {b: [json.load(open(f"{out}/ab-run-{b}-r{r}.json"))["summary"]["tpmc"] for r in range(1, n + 1)] for b in ("before", "after")}
ratios = [a / b for a, b in zip(t["after"], t["before"])]
print(f"tpmC before {[round(x) for x in t['before']]}\ntpmC after  {[round(x) for x in t['after']]}")
print(f"medians {statistics.median(t['before']):,.0f} / {statistics.median(t['after']):,.0f} = {statistics.median(t['after']) / statistics.median(t['before']):.3f}; paired ratios {', '.join(f'{x:.3f}' for x in ratios)}, mean {statistics.mean(ratios):.3f}")
PY
