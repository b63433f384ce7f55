#!/usr/bin/env bash
# oltplab trace replay versus `oltplab device` (same sizes, mix and concurrency) and versus fio
# replaying the same trace exported as iolog v3 with replay_no_stall=1. Writes every raw output and
# a summary.md into runs/<date>-<host>/ (or $1). Run from anywhere: bench/replay/run.sh
#
# The trace is synthetic and OLTP-like: THREADS synchronous threads, each doing OPS random BS reads
# and writes (READ_PCT % reads) on one 1 GiB file, so the replay has THREADS lanes of one I/O each.
#  1. disk: direct I/O on the machine's disk — replay, `oltplab device --qd THREADS`, fio iolog replay
#     with --iodepth THREADS; IOPS (rounds alternate the order; each disk run gets the same idle gap,
#     because this VM's disk refills a burst budget while idle).
#  2. shm: buffered I/O on a copy in /dev/shm (RAM): IOPS and I/Os per CPU-second, i.e. what one
#     replayed I/O costs each tool when the device is nearly free.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
rounds="${ROUNDS:-3}"
gap="${GAP:-20}"
threads="${THREADS:-16}"
ops="${OPS:-20000}"          # per thread
bs="${BS:-16384}"
read_pct="${READ_PCT:-70}"
mkdir -p "$out"
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "GNU time is missing: apt-get install time" >&2; exit 2; }
(cd "$repo" && cargo build --release --locked -q -p oltplab && cargo build --release --locked -q -p oltplab-trace --example synth)
oltplab="$repo/target/release/oltplab"
synth="$repo/target/release/examples/synth"

work="$repo/oltplab-data/bench-replay"
shm="/dev/shm/oltplab-bench-replay"
rm -rf "$shm"
mkdir -p "$work"
trace="$out/synthetic.trace"
rm -f "$trace"
"$synth" "$trace" "$threads" "$ops" "$bs" "$read_pct" 1024
"$oltplab" trace stat "$trace" --seconds 0 > "$out/synthetic.stat.txt"

{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "fio: $(fio --version)"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
  echo "$synth $trace $threads $ops $bs $read_pct 1024"
} > "$out/commands.txt"

run() { # name, command… — runs under GNU time, keeps stdout/stderr/time
  local name="$1"; shift
  echo "$*" >> "$out/commands.txt"
  /usr/bin/time -f "%U %S %e" -o "$out/$name.time" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
}

# The replay creates and fills its copy once; fio replays the same copy (paths rewritten), and the
# device job gets its own 1 GiB file of random data.
"$oltplab" trace replay "$trace" --target "$work/disk" --out "$out/prepare-disk" >/dev/null 2>&1
"$oltplab" trace replay "$trace" --target "$shm" --buffered --out "$out/prepare-shm" >/dev/null 2>&1
copy="$work/disk/0000-data.db"    # the replay names copies <file id>-<base name>
shm_copy="$shm/0000-data.db"
"$oltplab" trace convert "$trace" --to fio-iolog-v3 -o "$out/synthetic.iolog" >/dev/null 2>&1
sed "s|/bench/data.db|$copy|" "$out/synthetic.iolog" > "$out/disk.iolog"
sed "s|/bench/data.db|$shm_copy|" "$out/synthetic.iolog" > "$out/shm.iolog"
"$oltplab" device "$work/device.dat" --size 1g --runtime 200ms --ramp 0s --out "$out/prepare-device" >/dev/null 2>&1
# The device job runs about as long as the replay of the same number of I/Os.
total=$((threads * ops))

fio_replay=(fio --name=replay --replay_no_stall=1 --ioengine=io_uring --iodepth="$threads" --output-format=json)
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds: disk, direct" >&2
  d_replay() { sleep "$gap"; run "disk-replay-$r" "$oltplab" trace replay "$trace" --target "$work/disk" --out "$out/disk-replay-$r"; }
  d_device() { sleep "$gap"; run "disk-device-$r" "$oltplab" device "$work/device.dat" --size 1g --rw randrw --rwmix-read "$read_pct" --bs "$bs" --qd "$threads" --runtime "${DEVICE_RUNTIME:-8}s" --ramp 0s --out "$out/disk-device-$r"; }
  d_fio() { sleep "$gap"; run "disk-fio-$r" "${fio_replay[@]}" --read_iolog="$out/disk.iolog" --direct=1 --output="$out/disk-fio-$r.json"; }
  case $((r % 3)) in
    1) d_replay; d_device; d_fio ;;
    2) d_device; d_fio; d_replay ;;
    0) d_fio; d_replay; d_device ;;
  esac
  echo "round $r/$rounds: /dev/shm, buffered" >&2
  run "shm-replay-$r" "$oltplab" trace replay "$trace" --target "$shm" --buffered --out "$out/shm-replay-$r"
  run "shm-fio-$r" "${fio_replay[@]}" --read_iolog="$out/shm.iolog" --direct=0 --output="$out/shm-fio-$r.json"
done
rm -rf "$shm"
python3 "$here/compare.py" "$out" "$rounds" "$total" | tee "$out/summary.md"
# The trace and iologs are regenerated exactly by the commands above (fixed seed): keep samples only.
for f in synthetic.iolog disk.iolog shm.iolog; do head -20 "$out/$f" > "$out/$f.head"; rm -f "$out/$f"; done
rm -f "$trace"
