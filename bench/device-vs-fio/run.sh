#!/usr/bin/env bash
# oltplab device versus fio, side by side in one run on this machine. Writes every raw output and a
# summary.md into runs/<date>-<host>/ (or $1). Run from anywhere: bench/device-vs-fio/run.sh
#
#  1. 16 KiB random reads, QD 32, direct, io_uring, on a 1 GiB file on the machine's disk:
#     IOPS and latency percentiles (rounds alternate the tools so drift hits both alike). fio runs
#     twice: with its default buffers (malloc: 4 KiB pages, or by chance contiguous) and with
#     `--mem=shmhuge` (a 2 MiB huge page, like oltplab's buffers; needs root for
#     vm.nr_hugepages, which is raised to 4 for the run and restored).
#  2. 4 KiB random reads, QD 32, buffered, io_uring, on a 1 GiB file in /dev/shm (RAM): I/Os per
#     CPU-second, the tool's cost per I/O when the "device" is nearly free.
#  3. The same job on the null engine (no I/O at all): the tool's own cost, nothing else.
# CPU time is measured from outside with GNU time (user + system of the whole process), the same
# way for both tools; ramp is 0 in 2 and 3 so that every counted I/O falls inside that time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
rounds="${ROUNDS:-4}"
# This machine's virtual disk refills a burst budget while idle: whichever tool runs first after a
# pause gets more IOPS. So every disk run gets the same idle gap first, and the order alternates.
gap="${GAP:-20}"
runtime="${RUNTIME:-10}"
# Which parts to run: the disk's IOPS and latency are noisy (see bench/README.md), so a run with
# many rounds may take the disk alone: PARTS=disk ROUNDS=12 bench/device-vs-fio/run.sh
parts="${PARTS:-disk shm null}"
mkdir -p "$out"
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "GNU time is missing: apt-get install time" >&2; exit 2; }
(cd "$repo" && cargo build --release --locked -q)
oltplab="$repo/target/release/oltplab"

disk_dir="$repo/oltplab-data"
disk_file="$disk_dir/bench-16k.dat"
shm_file="/dev/shm/oltplab-bench-4k.dat"
# oltplab creates and fills both files once (random data); fio then reuses them as they are.
mkdir -p "$disk_dir"
has() { [[ " $parts " == *" $1 "* ]]; }
"$oltplab" device "$disk_file" --size 1g --runtime 200ms --ramp 0s --out "$out/prepare-disk" >/dev/null
has shm && "$oltplab" device "$shm_file" --size 1g --bs 4k --buffered --runtime 200ms --ramp 0s --out "$out/prepare-shm" >/dev/null

{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "fio: $(fio --version)"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc)"
} > "$out/commands.txt"

run() { # name, command… — runs under GNU time, keeps stdout/stderr/time
  local name="$1"; shift
  echo "$*" >> "$out/commands.txt"
  /usr/bin/time -f "%U %S %e" -o "$out/$name.time" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
}

# fio --mem=shmhuge takes its buffers from the huge-page pool.
hugepages_before="$(cat /proc/sys/vm/nr_hugepages)"
fio_huge=false
if has disk; then
  if [ "$hugepages_before" -ge 4 ] || { echo 4 > /proc/sys/vm/nr_hugepages; } 2>/dev/null; then
    fio_huge=true
    trap 'echo "$hugepages_before" > /proc/sys/vm/nr_hugepages 2>/dev/null || true' EXIT
  else
    echo "not root: vm.nr_hugepages cannot be raised, so fio runs without --mem=shmhuge" >&2
  fi
fi

fio_common=(--name=job --rw=randread --iodepth=32 --ioengine=io_uring --norandommap --randrepeat=0 --time_based --output-format=json)
for r in $(seq 1 "$rounds"); do
  has disk && {
  echo "round $r/$rounds: disk, 16 KiB random read, QD 32, direct" >&2
  disk_fio() { sleep "$gap"; run "disk-fio-$r" fio "${fio_common[@]}" --lat_percentiles=1 --filename="$disk_file" --size=1g --bs=16k --direct=1 --runtime="$runtime" --ramp_time=2 --output="$out/disk-fio-$r.json"; }
  disk_fiohuge() { $fio_huge || return 0; sleep "$gap"; run "disk-fiohuge-$r" fio "${fio_common[@]}" --mem=shmhuge --lat_percentiles=1 --filename="$disk_file" --size=1g --bs=16k --direct=1 --runtime="$runtime" --ramp_time=2 --output="$out/disk-fiohuge-$r.json"; }
  disk_oltplab() { sleep "$gap"; run "disk-oltplab-$r" "$oltplab" device "$disk_file" --size 1g --bs 16k --qd 32 --runtime "${runtime}s" --ramp 2s --out "$out/disk-oltplab-$r"; }
  if [ $((r % 2)) -eq 1 ]; then disk_fio; disk_oltplab; disk_fiohuge; else disk_fiohuge; disk_oltplab; disk_fio; fi
  }
  has shm && {
  echo "round $r/$rounds: /dev/shm, 4 KiB random read, QD 32, buffered" >&2
  run "shm-fio-$r" fio "${fio_common[@]}" --filename="$shm_file" --size=1g --bs=4k --direct=0 --runtime="$runtime" --output="$out/shm-fio-$r.json"
  run "shm-oltplab-$r" "$oltplab" device "$shm_file" --size 1g --bs 4k --qd 32 --buffered --runtime "${runtime}s" --ramp 0s --out "$out/shm-oltplab-$r"
  }
  has null && {
  echo "round $r/$rounds: null engine, 4 KiB, QD 32" >&2
  run "null-fio-$r" fio --name=job --ioengine=null --rw=randread --size=1g --bs=4k --iodepth=32 --norandommap --randrepeat=0 --time_based --runtime="$runtime" --output-format=json --output="$out/null-fio-$r.json"
  run "null-oltplab-$r" "$oltplab" device --engine null --size 1g --bs 4k --qd 32 --runtime "${runtime}s" --ramp 0s --out "$out/null-oltplab-$r"
  }
done
rm -f "$shm_file" "$shm_file.oltplab"
python3 "$here/compare.py" "$out" "$rounds" | tee "$out/summary.md"
