# A pause may keep part of the device's speed (pause_speed_pct), and `devices fit --trace` fits
# it to how much the trace's slow moments slow their I/Os and how long they last (two more
# bunching terms). Two traced real runs of one load (traces.sh), a refit to the first (validated
# on the second), then alternating rounds of real / the spec of runs/2026-11-27-vm-margin
# (pauses that stop the device: "emulated") / the new fit ("tracefit"); every side's trace kept
# for bunching.py.
set -e
cd /work/main
d=/var/tmp/cl
out=bench/emulator-closed-loop/runs/2026-11-27-vm-slow-pauses
bash $out/traces.sh
mkdir -p $d/fit2/random $d/fit2/commit
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-random.json $d/fit2/random/result.json
cp bench/emulator-closed-loop/runs/2026-11-26-vm-fit2/fit-measured-commit.json $d/fit2/commit/result.json
target/release/oltplab devices fit --refit $d/fit2 --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitT --json $d/trace-fit.json --out $d/fitT.spec > $d/trace-fit.stdout 2> $d/trace-fit.log
cp $d/trace-fit.* $d/fit-real1.json $d/fit-real2.json $d/bunching-fit-traces.txt $out/
ROUNDS=3 FIT_SPEC=bench/emulator-closed-loop/runs/2026-11-27-vm-margin/fitted.spec TRACE_SPEC=$d/fitT.spec SIDES="real emulated tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept bench/emulator-closed-loop/run.sh $out > $d/cl.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept/round*.trace > $out/bunching.txt
