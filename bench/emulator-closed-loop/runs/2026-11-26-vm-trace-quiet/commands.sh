set -e
cd /work/main
bin=target/release/oltplab
d=/var/tmp/clw
rm -rf $d/run; cp -a $d/loaded $d/run
cat /proc/loadavg > /work/cl/realQ.load
$bin run tpcc --engine mariadb --data-dir $d/run --terminals 10 --duration 60s --warmup 20s --buffer-pool 28913211 --emulate host --backing disk --trace /work/cl/realQ.trace --json /work/cl/realQ.json --out /work/cl/out-realQ > /work/cl/realQ.log 2>&1
rm -rf $d/run
$bin trace stat /work/cl/realQ.trace --json /work/cl/realQ-trace.json > /dev/null 2>&1
$bin devices fit --refit /work/cl/fit2 --trace /work/cl/realQ.trace --validate-trace /work/cl/real2.trace --trace-weight 4 --max-evals 1200 --results /work/cl/fitQ --out /work/cl/fitQ.spec > /work/cl/fitQ.out 2> /work/cl/fitQ.log
ROUNDS=2 FIT_SPEC=/work/cl/curves.spec TRACE_SPEC=/work/cl/fitQ.spec LOADED=/var/tmp/clw/loaded KEEP_TRACES=/work/cl/keptQ bench/emulator-closed-loop/run.sh bench/emulator-closed-loop/runs/2026-11-26-vm-trace-quiet > /work/cl/clQ.log 2>&1
echo done
