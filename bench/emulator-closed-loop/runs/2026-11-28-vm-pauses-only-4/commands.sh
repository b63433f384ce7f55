# Four more alternating rounds of the same two specs as runs/2026-11-28-vm-pauses-only (the
# evening's stopping-pause spec, "emulated"; the pauses-only fit, "tracefit"), on a new load,
# to tell the two apart with an interval.
set -e
cd /work/main
r=bench/emulator-closed-loop/runs
ROUNDS=4 FIT_SPEC=$r/2026-11-27-vm-margin/fitted.spec TRACE_SPEC=$r/2026-11-28-vm-pauses-only/trace-fitted.spec \
  SIDES="real emulated tracefit" bench/emulator-closed-loop/run.sh $r/2026-11-28-vm-pauses-only-4 > /var/tmp/cl4.log 2>&1
cat /proc/loadavg > $r/2026-11-28-vm-pauses-only-4/loadavg-end.txt
