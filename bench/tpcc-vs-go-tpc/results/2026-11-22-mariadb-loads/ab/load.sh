#!/bin/bash
# load.sh gotpc|oltplab [bin]: one 4-warehouse load, prints wall, client cpu, server cpu
tool=$1; bin=${2:-/work/main/target/release/oltplab}
pid=$(pgrep -x mariadbd)
tick=$(getconf CLK_TCK)
s0=$(awk '{print $14+$15}' /proc/$pid/stat)
if [ $tool = gotpc ]; then
  cmd=(/var/tmp/oltplab-bench-tpcc-vs-go-tpc/go-tpc-v1.0.9/bin/go-tpc tpcc prepare -d mysql -H 127.0.0.1 -P 45123 -U root -D gotpc --warehouses 4 -T ${T:-4} --dropdata --no-check)
else
  cmd=($bin load tpcc --url mysql://root@127.0.0.1:45123/oltplab --warehouses 4 --threads ${T:-4} --no-check --force)
fi
/usr/bin/time -f "%e %U %S" -o /tmp/ml/time.out "${cmd[@]}" >/tmp/ml/$tool.out 2>&1 || { echo FAIL; tail -5 /tmp/ml/$tool.out; }
s1=$(awk '{print $14+$15}' /proc/$pid/stat)
read e u s < /tmp/ml/time.out
echo "$tool wall=$e client=$(echo "$u+$s"|bc) server=$(echo "scale=2;($s1-$s0)/$tick"|bc)"
