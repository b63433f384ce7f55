# `devices fit --start SPEC`: the causal fit started from the evening's spec
# (runs/2026-11-27-vm-margin/fitted.spec: the device fitted well, pauses that stop) instead of from
# the curves, its pauses started where the trace's slow moments point. Same traces and load as
# runs/2026-11-27-vm-slow-pauses (its traces.sh). Then alternating rounds of real / the evening's
# spec ("emulated") / the new fit ("tracefit").
set -e
cd /work/main
d=/var/tmp/cl
out=bench/emulator-closed-loop/runs/2026-11-27-vm-started-fit
target/release/oltplab devices fit --refit $d/fit2 --start "$(cat bench/emulator-closed-loop/runs/2026-11-27-vm-margin/fitted.spec)" --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitS --json $d/trace-fit-start.json --out $d/fitS.spec > $d/trace-fit-start.stdout 2> $d/trace-fit-start.log
for f in trace-fit-start.log trace-fit-start.json trace-fit-start.stdout; do cp $d/$f $out/${f/-start/}; done
ROUNDS=3 FIT_SPEC=bench/emulator-closed-loop/runs/2026-11-27-vm-margin/fitted.spec TRACE_SPEC=$d/fitS.spec SIDES="real emulated tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept3 bench/emulator-closed-loop/run.sh $out > $d/cl3.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept3/round*.trace > $out/bunching.txt
