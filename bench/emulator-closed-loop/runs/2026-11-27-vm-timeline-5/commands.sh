# The error with an interval: five rounds of the real disk against the fit of
# runs/2026-11-27-vm-timeline (its trace-fitted.spec, fitted to this evening's first traced run),
# same load (a copy of that run's), nothing else on the machine. summarize.py's 95 % interval is
# Student's t over the rounds' log ratios.
set -e
cd /work/main
d=/var/tmp/clt3
out=bench/emulator-closed-loop/runs/2026-11-27-vm-timeline-5
spec=bench/emulator-closed-loop/runs/2026-11-27-vm-timeline/trace-fitted.spec
ROUNDS=5 FIT_SPEC=$spec TRACE_SPEC=$spec SIDES="real tracefit" LOADED=$d/loaded bench/emulator-closed-loop/run.sh $out > $d/cl5.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
