# The spec fitted with pauses in runs/2026-11-27-vm-pauses ("tracefit") against the same spec
# with pause_pct and pause_us removed ("emulated"), everything else equal, in alternating rounds
# with the real disk; every side's trace kept, for the bunching of slow I/Os (bunching.py).
set -e
cd /work/main
d=/var/tmp/clt2
out=bench/emulator-closed-loop/runs/2026-11-27-vm-pauses-ab
sed -E 's/,pause_(pct|us)=[0-9.]+//g' bench/emulator-closed-loop/runs/2026-11-27-vm-pauses/trace-fitted.spec > $out/nopause.spec
ROUNDS=2 FIT_SPEC=$out/nopause.spec TRACE_SPEC=bench/emulator-closed-loop/runs/2026-11-27-vm-pauses/trace-fitted.spec SIDES="real emulated tracefit" LOADED=$d/loaded KEEP_TRACES=$d/kept bench/emulator-closed-loop/run.sh $out > $d/cl-ab.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
python3 bench/emulator-closed-loop/bunching.py $d/kept/round*.trace > $out/bunching.txt
