#!/bin/bash
set -u
for b in before after; do
  uptime > /tmp/s1/$b.load
  ( time /tmp/bld-$b/oltplab study --scale s1 --engine mariadb --devices sata-ssd-2010,pcie-flash-2012 --out /tmp/s1/study-$b --data-dir /tmp/s1/data --force ) > /tmp/s1/$b.log 2>&1
  cp /tmp/s1/study-$b/results.json /tmp/s1/results-$b.json
done
rm -rf /tmp/s1/data
