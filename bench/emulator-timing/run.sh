#!/bin/bash
# The emulator's timing in a MariaDB study, before and after a change: alternating runs of
# `oltplab study --scale quick --engine mariadb` with two builds, so that drift of the machine
# falls on both. Usage: bench/emulator-timing/run.sh BEFORE_DIR AFTER_DIR OUT [ROUNDS] [STUDY OPTIONS…]
# (each *_DIR holds an `oltplab` binary and its `liboltplab_shim.so`; options after ROUNDS go to
# every study, e.g. --devices hdd-10k,sata-ssd-2010,pcie-flash-2012).
set -euo pipefail
before=$1 after=$2 out=$3 rounds=${4:-3}
shift $(( $# < 4 ? $# : 4 ))
mkdir -p "$out"
for r in $(seq "$rounds"); do
  for build in before after; do
    dir=$before; [ "$build" = after ] && dir=$after
    uptime > "$out/study-$build$r.load"
    "$dir/oltplab" study --scale quick --engine mariadb --out "$out/study-$build$r" \
      --data-dir "$out/data" --force "$@" > "$out/study-$build$r.log" 2>&1
    cp "$out/study-$build$r/results.json" "$out/results-$build$r.json"
    rm -rf "$out/study-$build$r"
  done
done
rm -rf "$out/data"
python3 "$(dirname "$0")/summarize.py" "$out"
