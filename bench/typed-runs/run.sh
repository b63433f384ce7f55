#!/bin/bash
# Issue 18's refactor must not cost speed: the device command (the null engine's I/Os per
# CPU-second, 16 KiB random reads on the disk) and TPC-C on SQLite (load time, tpmC), with the
# build before and after, alternating which goes first in each round so that drift of the machine
# falls on both. Usage: bench/typed-runs/run.sh BEFORE_BIN AFTER_BIN OUT [ROUNDS]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
before=$(realpath "$1") after=$(realpath "$2") out=$3 rounds=${4:-3}
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d /var/tmp/oltplab-typed-runs.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
one() { # one BUILD ROUND
  local bin=$before; [ "$1" = after ] && bin=$after
  local tag="$1-r$2"
  "$bin" -q device --engine null --bs 4k --qd 32 --runtime 5s --ramp 1s --json "$out/null-$tag.json" --out "n-$tag"
  "$bin" -q device disk.dat --size 1g --bs 16k --qd 32 --runtime 5s --ramp 1s --json "$out/disk-$tag.json" --out "d-$tag" --force
  rm -rf "db-$tag"
  /usr/bin/time -o "$out/load-$tag.time" -f '%e s %U user %S sys' \
    "$bin" -q load tpcc -w 2 --data-dir "db-$tag" > "$out/load-$tag.log" 2>&1
  "$bin" -q run tpcc -w 2 -t 4 --duration 30s --warmup 5s --data-dir "db-$tag" \
    --json "$out/run-$tag.json" --out "r-$tag" > "$out/run-$tag.log" 2>&1
  rm -rf "db-$tag" "n-$tag" "d-$tag" "r-$tag"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then one before "$r"; one after "$r"; else one after "$r"; one before "$r"; fi
done
python3 "$here/summarize.py" "$out" > "$out/summary.md"
cat "$out/summary.md"
