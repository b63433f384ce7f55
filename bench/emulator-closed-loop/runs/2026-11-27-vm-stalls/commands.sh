# As runs/2026-11-27-vm-spread, with the flash model's stalls (stall_pct, stall_us) fitted too:
# two traced real runs, a refit to the first (validated on the second), then alternating rounds of
# real / the fit without its stalls ("emulated": the same spec, stall_pct and stall_us removed) /
# the fit.
set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/clt
out=bench/emulator-closed-loop/runs/2026-11-27-vm-stalls
rm -rf $d; mkdir -p $out $d/fit2/random $d/fit2/commit; chmod 711 $d
# The device curves of runs/2026-11-26-vm-fit2, as --refit reads them.
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-random.json $d/fit2/random/result.json
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-commit.json $d/fit2/commit/result.json
{ echo "commit $(git rev-parse --short HEAD)"; date -u; uname -r; nproc; cat /proc/loadavg; } > $out/env-fit.txt
$bin load tpcc --engine mariadb --warehouses 10 --data-dir $d/loaded > $d/load.log 2>&1
pool=$(( $(du -sb $d/loaded | cut -f1) / 40 ))
echo "buffer pool $pool bytes" >> $out/env-fit.txt
for n in 1 2; do
  rm -rf $d/run; cp -a $d/loaded $d/run
  cat /proc/loadavg > $out/fit-real$n-loadavg.txt
  $bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool $pool --emulate host --backing disk --trace $d/real$n.trace --json $out/fit-real$n.json --out $d/out-real$n > $d/real$n.log 2>&1
  rm -rf $d/run $d/out-real$n
  $bin trace stat $d/real$n.trace --json $out/fit-real$n-trace-stat.json > /dev/null 2>&1
done
$bin devices fit --refit $d/fit2 --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitD --json $out/trace-fit.json --out $d/fitD.spec > $out/trace-fit.stdout 2> $out/trace-fit.log
# The same spec without its stalls: what they change, everything else equal.
sed -E 's/,?stall_(pct|us)=[0-9.]+//g; s/\{,/{/' $d/fitD.spec > $d/nocv.spec
ROUNDS=2 FIT_SPEC=$d/nocv.spec TRACE_SPEC=$d/fitD.spec SIDES="real emulated tracefit" LOADED=$d/loaded bench/emulator-closed-loop/run.sh $out > $d/cl.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
rm -rf $d
echo done
