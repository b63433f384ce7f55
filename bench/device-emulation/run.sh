#!/usr/bin/env bash
# Emulated devices, measured with `oltplab device --emulate` on this machine. Writes every raw result
# and a summary.md into runs/<date>-<host>/ (or $1). Run from anywhere: bench/device-emulation/run.sh
#
#  1. Calibration against S1 (docs/studies.md): 16 KiB random reads at QD 1 and QD 32 on hdd-10k,
#     sata-ssd-2010 and pcie-flash-2012; S1's ratios to its HDD are 1/16.7 and 1/160 of the latency
#     at QD 1, 43.2× and 208.1× the IOPS at QD 32.
#  2. S4 (docs/studies.md): all twelve server profiles at QD 1…256 on raid5(4,hdd-15k) and on
#     raid5(4,sas-ssd-2012), summarised by the geometric mean of IOPS over the queue depths, and each
#     point's realised IOPS against the model's own closed-loop IOPS (its bound).
# Every emulated run keeps its data in RAM (/dev/shm), so the model alone sets the pace. The job
# thread runs at nice -10 when allowed (root), so that other work on a shared machine delays its
# wake-ups less; `NICE=` turns that off. RUNTIME/RAMP (S4) and CAL_RUNTIME override the defaults.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
runtime="${RUNTIME:-1s}"
ramp="${RAMP:-500ms}"
cal_runtime="${CAL_RUNTIME:-6s}"
nice_cmd=(${NICE-nice -n -10})
s4_profiles=web-file-4k,web-file-8k,web-file-64k,web-log,oltp-db,dss-db,sql-log,exchange,media-streaming,video-on-demand,workstation,os-paging
mkdir -p "$out"
(cd "$repo" && cargo build --release -q -p oltplab)
oltplab="$repo/target/release/oltplab"

{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/commands.txt"

run() { # name, oltplab arguments…
  local name="$1"; shift
  echo "${nice_cmd[*]} oltplab $*" >> "$out/commands.txt"
  "${nice_cmd[@]}" "$oltplab" "$@" --out "$out/$name" --force > "$out/$name.stdout" 2> "$out/$name.stderr"
}

for dev in hdd-10k sata-ssd-2010 pcie-flash-2012; do
  echo "calibration: $dev" >&2
  run "cal-$dev" device --emulate "$dev" --rw randread --bs 16k --sweep-qd 1,32 --size 1g --runtime "$cal_runtime" --ramp 1s
done
for dev in 'raid5(4,hdd-15k)' 'raid5(4,sas-ssd-2012)'; do
  name="s4-$(echo "$dev" | tr -c 'a-z0-9.\n' '-' | sed 's/-*$//')"
  echo "S4 profiles: $dev" >&2
  run "$name" device --emulate "$dev" --profile "$s4_profiles" --sweep-qd 1:256 --size 1g --runtime "$runtime" --ramp "$ramp"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/commands.txt"
python3 "$here/summarize.py" "$out" > "$out/summary.md"
cat "$out/summary.md"
