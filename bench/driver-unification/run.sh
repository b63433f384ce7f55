#!/bin/bash
# Issue 33's one driver must not cost SQLite tpmC: `oltplab run tpcc` on SQLite with the build
# before and after, on copies of one load, alternating which goes first in each round so that
# drift of the (shared, 2-core) machine falls on both. Every command runs under nice -n 19.
# Usage: bench/driver-unification/run.sh BEFORE_BIN AFTER_BIN OUT [ROUNDS]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
before=$(realpath "$1") after=$(realpath "$2") out=$3 rounds=${4:-3}
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d /var/tmp/oltplab-driver-unification.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
nice -n 19 "$before" -q load tpcc -w 2 --data-dir loaded > "$out/load.log" 2>&1
one() { # one BUILD ROUND
  local bin=$before; [ "$1" = after ] && bin=$after
  local tag="$1-r$2"
  rm -rf "db-$tag"
  cp -a loaded "db-$tag"
  nice -n 19 "$bin" -q run tpcc -w 2 -t 4 --duration 30s --warmup 5s --data-dir "db-$tag" \
    --json "$out/run-$tag.json" --out "r-$tag" > "$out/run-$tag.log" 2>&1
  rm -rf "db-$tag" "r-$tag"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then one before "$r"; one after "$r"; else one after "$r"; one before "$r"; fi
done
python3 "$here/summarize.py" "$out" > "$out/summary.md"
cat "$out/summary.md"
