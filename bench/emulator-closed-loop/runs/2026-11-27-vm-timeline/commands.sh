# The flash link and channels now carry whichever transfer is ready first (an NCQ/NVMe device
# completes out of order; before, a stalled command held every command submitted after it), and
# `devices fit --trace` fits pauses (pause_pct, pause_us) to a trace dense enough to show how its
# slow I/Os bunch, with the bunched share as one more term. Two traced real runs, a refit to the
# first (validated on the second), then alternating rounds of real / the morning's pause spec
# under the new model ("emulated": runs/2026-11-27-vm-pauses/trace-fitted.spec) / the new fit
# ("tracefit"); every side's trace kept for bench/emulator-closed-loop/bunching.py.
set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/clt3
out=bench/emulator-closed-loop/runs/2026-11-27-vm-timeline
mkdir -p $d/fit2/random $d/fit2/commit; chmod 711 $d
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-random.json $d/fit2/random/result.json
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-commit.json $d/fit2/commit/result.json
$bin load tpcc --engine mariadb --warehouses 10 --data-dir $d/loaded > $d/load.log 2>&1
pool=$(( $(du -sb $d/loaded | cut -f1) / 40 ))
for n in 1 2; do
  rm -rf $d/run; cp -a $d/loaded $d/run
  $bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool $pool --emulate host --backing disk --trace $d/real$n.trace --json $out/fit-real$n.json --out $d/out-real$n > $d/real$n.log 2>&1
  rm -rf $d/run $d/out-real$n
done
python3 bench/emulator-closed-loop/bunching.py $d/real1.trace $d/real2.trace > $out/bunching-fit-traces.txt
$bin devices fit --refit $d/fit2 --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitT --json $out/trace-fit.json --out $d/fitT.spec > $out/trace-fit.stdout 2> $out/trace-fit.log
ROUNDS=2 FIT_SPEC=bench/emulator-closed-loop/runs/2026-11-27-vm-pauses/trace-fitted.spec TRACE_SPEC=$d/fitT.spec SIDES="real emulated tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept bench/emulator-closed-loop/run.sh $out > $d/cl.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept/round*.trace > $out/bunching.txt
