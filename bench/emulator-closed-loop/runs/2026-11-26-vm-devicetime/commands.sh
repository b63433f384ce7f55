set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/clw2
out=bench/emulator-closed-loop/runs/2026-11-26-vm-devicetime
mkdir -p $out
{ echo "commit $(git rev-parse --short HEAD) + the host trace's device time (uncommitted at start)"; date -u; uname -r; nproc; cat /proc/loadavg; } > $out/env-fit.txt
$bin load tpcc --engine mariadb --warehouses 10 --data-dir $d/loaded > $d/load.log 2>&1
for n in 1 2; do
  rm -rf $d/run; cp -a $d/loaded $d/run
  cat /proc/loadavg > $out/fit-real$n-loadavg.txt
  $bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool 28913215 --emulate host --backing disk --trace $d/real$n.trace --json $out/fit-real$n.json --out $d/out-real$n > $d/real$n.log 2>&1
  rm -rf $d/run $d/out-real$n
  $bin trace stat $d/real$n.trace --json $out/fit-real$n-trace-stat.json > /dev/null 2>&1
done
$bin devices fit --refit $d/fit2 --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitD --json $out/trace-fit.json --out $d/fitD.spec > $out/trace-fit.stdout 2> $out/trace-fit.log
ROUNDS=2 FIT_SPEC=bench/emulator-closed-loop/runs/2026-11-26-vm-trace-quiet2/fitted.spec TRACE_SPEC=$d/fitD.spec SIDES="real tracefit" LOADED=$d/loaded bench/emulator-closed-loop/run.sh $out > $d/cl.log 2>&1
echo done
