# The spin margin without the CPU queue (emulator wakes no earlier than the timer needs): four
# rounds of the real disk against the same fit as runs/2026-11-27-vm-timeline-5 (its
# trace-fitted.spec), a fresh load of the same size, nothing else on the machine.
set -e
cd /work/main
out=bench/emulator-closed-loop/runs/2026-11-27-vm-margin
spec=bench/emulator-closed-loop/runs/2026-11-27-vm-timeline/trace-fitted.spec
ROUNDS=4 FIT_SPEC=$spec TRACE_SPEC=$spec SIDES="real tracefit" bench/emulator-closed-loop/run.sh $out > /var/tmp/clm/cl.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
