#!/usr/bin/env bash
# The device models against published measurements and datasheets (issue 16). Writes every raw
# result and a summary.md into runs/<date>-<host>/ (or $1). Run from anywhere:
#   bench/model-validation/run.sh
#
#  1. The model in virtual time: crates/devmodel/src/validation.rs holds one table of references
#     (datasheets, published measurements, each marked calibration or validation); the `validate`
#     example runs every row on a fresh model and prints model, reference and error. The model
#     tests (crates/devmodel/tests/model.rs) assert the same table.
#  2. The same figures through the whole emulation, measured: `oltplab device --emulate` with the
#     data in RAM, random 4 KiB reads at QD 1 and 32 on each HDD, and the `commit-8k` profile
#     (8 KiB appends, fdatasync after each, QD 1) on each HDD and SSD — what the live path realises
#     against what the model predicts.
#  3. disksim-valid.sh: the HDD model on DiskSim 4.0's validation traces of ten real drives (rms
#     distance between modelled and measured response-time distributions, beside DiskSim's own).
# Takes about three minutes on the 2-core VM. RUNTIME overrides the 5 s per live point.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
runtime="${RUNTIME:-5s}"
mkdir -p "$out"
(cd "$repo" && cargo build --release -q -p oltplab && cargo build --release -q -p oltplab-devmodel --example validate)
oltplab="$repo/target/release/oltplab"
validate="$repo/target/release/examples/validate"

{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "target/release/examples/validate --json model.json > model.md"
} > "$out/commands.txt"

start=$(date +%s)
"$validate" --json "$out/model.json" > "$out/model.md"
# The HDD model on real drives' measured responses (DiskSim 4.0's validation traces, issue 31).
echo "bench/model-validation/disksim-valid.sh $out" >> "$out/commands.txt"
"$here/disksim-valid.sh" "$out" > "$out/disksim-valid.stdout"

run() { # name, oltplab arguments…
  local name="$1"; shift
  echo "oltplab $*" >> "$out/commands.txt"
  "$oltplab" "$@" --json "$out/$name.json" --out "$out/$name" --force > "$out/$name.stdout" 2> "$out/$name.stderr"
}
for dev in hdd-10k hdd-15k hdd-7.2k; do
  run "randread-$dev" device --emulate "$dev" --rw randread --bs 4k --sweep-qd 1,32 --runtime "$runtime" --ramp 1s
done
for dev in hdd-10k hdd-15k hdd-7.2k sata-ssd-2010 pcie-flash-2012; do
  run "commit-$dev" device --emulate "$dev" --profile commit-8k --runtime "$runtime" --ramp 1s
done
echo "elapsed: $(( $(date +%s) - start )) s" >> "$out/commands.txt"
python3 "$here/summarize.py" "$out" > "$out/summary.md"
{ echo; echo "## The HDD model on DiskSim 4.0's validation traces (\`disksim-valid.sh\`)"; echo
  cat "$out/disksim-valid.md"; tail -1 "$out/disksim-valid.stdout"; } >> "$out/summary.md"
cat "$out/summary.md"
