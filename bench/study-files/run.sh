#!/bin/sh
# S2 and S3 through their scenarios and through their shipped study files, back to back, at the
# quick scale on SQLite (issue 34). Usage: bench/study-files/run.sh OUT_DIR [OLTPLAB]
set -eu
out=${1:?usage: run.sh OUT_DIR [OLTPLAB]}
bin=${2:-oltplab}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cd "$out"
for pair in "placement s3" "cache-tiers s2"; do
  set -- $pair
  /usr/bin/time -v nice -n 19 "$bin" study --scenario "$1" --scale quick --out "$2-scenario" \
    --data-dir "data-$2-scenario" > "$2-scenario.log" 2>&1
  rm -rf "data-$2-scenario"
  /usr/bin/time -v nice -n 19 "$bin" study --file "$here/studies/$2.toml" --out "$2-file" \
    --data-dir "data-$2-file" > "$2-file.log" 2>&1
  rm -rf "data-$2-file"
done
