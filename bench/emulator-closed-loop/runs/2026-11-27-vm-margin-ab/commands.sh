# A/B of the spin margin in one run: "emulated" = the build before (91ef669, margin from the whole
# overshoot, worktree /work/wtab built in release), "tracefit" = this build (margin from the timer's
# overshoot alone); both emulate the same spec (runs/2026-11-27-vm-timeline's trace-fitted.spec)
# against the real disk, three alternating rounds, one fresh load, nothing else on the machine.
set -e
cd /work/main
out=bench/emulator-closed-loop/runs/2026-11-27-vm-margin-ab
spec=bench/emulator-closed-loop/runs/2026-11-27-vm-timeline/trace-fitted.spec
ROUNDS=3 FIT_SPEC=$spec TRACE_SPEC=$spec SIDES="real emulated tracefit" EMULATED_OLTPLAB=/work/wtab/target/release/oltplab bench/emulator-closed-loop/run.sh $out > /var/tmp/clm/cl-ab.log 2>&1
cat /proc/loadavg > $out/loadavg-end.txt
