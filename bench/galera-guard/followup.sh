#!/bin/bash
# The follow-up of run.sh's finding: one binary (with or without the guard) run again and again on
# a 3-node cluster, TPC-C's checks after each run (a violation reloads). Usage:
#   bench/galera-guard/followup.sh BIN TAG     (log in /tmp/guard-loop-TAG/log.txt)
bin=${1:-/tmp/oltplab-guard}; tag=${2:-guard}
data=/tmp/oltplab-guard-loop-$tag
out=/tmp/guard-loop-$tag; mkdir -p $out
load() { $bin load tpcc --engine galera --nodes 3 --warehouses 4 --data-dir $data --force --buffer-pool 128m > $out/load.txt 2>&1; }
load
for i in $(seq 1 30); do
  $bin run tpcc --engine galera --data-dir $data --buffer-pool 128m --terminals 8 --warmup 5s --duration 30s --out $out/run-$i > $out/run-$i.txt 2>&1
  r=$(python3 -c "import json;d=json.load(open('$out/run-$i/result.json'));print(d['summary'].get('retries_by_kind'))" 2>/dev/null)
  if $bin check tpcc --engine galera --data-dir $data > $out/check-$i.txt 2>&1; then c=ok; else c=VIOLATED; fi
  echo "$(date +%T) run $i $c $r" >> $out/log.txt
  if [ $c = VIOLATED ]; then load; fi
done
