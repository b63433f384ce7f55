# `devices fit --trace` replays its trace causally (the default now: each thread's I/O after the
# one it waited for, with its think time) and starts the pauses where the trace's slow moments
# point. Same traces and load as runs/2026-11-27-vm-slow-pauses (its traces.sh); the fit first
# without that start (trace-fit-no-start.*: the search ended at pause_pct=0.07), then with it
# (trace-fit.*), then alternating rounds of real / the new fit ("tracefit").
set -e
cd /work/main
d=/var/tmp/cl
out=bench/emulator-closed-loop/runs/2026-11-27-vm-causal-fit
target/release/oltplab devices fit --refit $d/fit2 --trace $d/real1.trace --validate-trace $d/real2.trace --trace-weight 4 --max-evals 1200 --results $d/fitG --json $d/trace-fit-guess.json --out $d/fitG.spec > $d/trace-fit-guess.stdout 2> $d/trace-fit-guess.log
for f in trace-fit-guess.log trace-fit-guess.json trace-fit-guess.stdout; do cp $d/$f $out/${f/-guess/}; done
ROUNDS=3 FIT_SPEC=bench/emulator-closed-loop/runs/2026-11-27-vm-margin/fitted.spec TRACE_SPEC=$d/fitG.spec SIDES="real tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept2 bench/emulator-closed-loop/run.sh $out > $d/cl2.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept2/round*.trace > $out/bunching.txt
