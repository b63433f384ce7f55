# `devices fit --pauses-only`: the evening's spec (runs/2026-11-27-vm-margin/fitted.spec: the
# device fitted well, pauses that stop) held, and only its pauses (share, length, speed kept)
# refitted to a real run's trace, replayed causally. A new load and two traced real runs as in
# runs/2026-11-27-vm-slow-pauses/traces.sh; the curves are runs/2026-11-26-vm-fit2's. Then
# alternating rounds of real / the evening's spec ("emulated") / the pauses-only fit ("tracefit").
set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/cl
out=bench/emulator-closed-loop/runs/2026-11-28-vm-pauses-only
evening=bench/emulator-closed-loop/runs/2026-11-27-vm-margin/fitted.spec
mkdir -p $d/fit2/random $d/fit2/commit
chmod 711 $d
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-random.json $d/fit2/random/result.json
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-commit.json $d/fit2/commit/result.json
$bin load tpcc --engine mariadb --warehouses 10 --data-dir $d/loaded > $d/load.log 2>&1
pool=$(( $(du -sb $d/loaded | cut -f1) / 40 ))
for n in 1 2; do
  rm -rf $d/run; cp -a $d/loaded $d/run
  $bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool $pool --emulate host --backing disk --trace $d/real$n.trace --json $d/fit-real$n.json --out $d/out-real$n > $d/real$n.log 2>&1
  rm -rf $d/run $d/out-real$n
done
python3 bench/emulator-closed-loop/bunching.py $d/real1.trace $d/real2.trace > $out/bunching-fit-traces.txt
$bin devices fit --refit $d/fit2 --start "$(cat $evening)" --pauses-only --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 400 --results $d/fitP --json $out/trace-fit.json --out $d/fitP.spec > $out/trace-fit.stdout 2> $out/trace-fit.log
ROUNDS=3 FIT_SPEC=$evening TRACE_SPEC=$d/fitP.spec SIDES="real emulated tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept bench/emulator-closed-loop/run.sh $out > $d/cl.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept/round*.trace > $out/bunching.txt
echo done > $d/all.done
