# The append-based start of `devices fit` (2026-11-28), before and after, on saved curves:
# the three real-disk measurement sets of this bench, refitted by two debug builds of one tree —
# "old" without the change to crates/oltplab/src/devices_commands/fit.rs, "new" with it — each
# with the defaults (2,000 candidates, 2,000 simulated I/Os per point). The fit is deterministic:
# the same curves and build give the same spec.
set -e
d=/var/tmp/refit
for r in 2026-11-26-vm-fit2 2026-11-26-vm-first 2026-11-26-vm; do
  mkdir -p $d/$r/random $d/$r/commit
  cp bench/emulator-closed-loop/runs/$r/fit-measured-random.json $d/$r/random/result.json
  cp bench/emulator-closed-loop/runs/$r/fit-measured-commit.json $d/$r/commit/result.json
  for tag in old new; do
    $d/oltplab-$tag devices fit --refit $d/$r --json $OUT/$r-$tag.json > $OUT/$r-$tag.spec 2> $OUT/$r-$tag.log
    echo "$r $tag: $(grep 'fit error' $OUT/$r-$tag.log)" >> $OUT/$tag.txt
  done
done
# An emulated sata-ssd-2010 measured and fitted as tests/devices_fit.rs does (emulated-sata-ssd-2010/fitN.json):
# fit1 by the old build, 24.7 % RMS (its curves refitted: 21.0 / 19.4 % with 3,000 / 6,000
# candidates; by the new build 6.7 %, 3.3 % with 3,000); fit2-6 by the new build, 6.4, 12.0,
# 10.3, 6.2 and 8.8 %.
for i in 1 2 3 4 5 6; do
  oltplab devices fit --emulate sata-ssd-2010 --bs 16k --sweep-qd 1,16 --runtime 500ms --ramp 150ms \
    --size 256m --sim-ios 500 --max-evals 1500 --out fitted.spec --json fit.json --results res
done
