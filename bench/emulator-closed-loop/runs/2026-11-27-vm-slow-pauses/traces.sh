set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/cl
chmod 711 $d
$bin load tpcc --engine mariadb --warehouses 10 --data-dir $d/loaded > $d/load.log 2>&1
pool=$(( $(du -sb $d/loaded | cut -f1) / 40 ))
for n in 1 2; do
  rm -rf $d/run; cp -a $d/loaded $d/run
  $bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool $pool --emulate host --backing disk --trace $d/real$n.trace --json $d/fit-real$n.json --out $d/out-real$n > $d/real$n.log 2>&1
  rm -rf $d/run $d/out-real$n
done
python3 bench/emulator-closed-loop/bunching.py $d/real1.trace $d/real2.trace > $d/bunching-fit-traces.txt
echo done > $d/traces.done
