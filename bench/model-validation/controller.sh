#!/usr/bin/env bash
# The RAID controller model (`wbcache(…,size=…,readahead=…)`, issue 31 item 4) against published
# behaviour of such a controller: one 15k rpm drive, 16 KiB sequential reads and writes at QD 1,
# with the controller (write back, read-ahead) and without. Writes controller.md into $1 (default
# runs/<date>-<host>-controller/). Two parts:
#  1. the model in virtual time: the controller rows of the validation table
#     (crates/devmodel/src/validation.rs; sources there and in docs/devices.md), printed by the
#     `validate` example like every other row;
#  2. the same through the live emulation (data in RAM): `oltplab device --emulate` on the bare
#     drive and on the drive behind the controller — and behind a 16 MiB cache, so that a 5 s run
#     shows the sustained rate after the absorbed burst, not the burst alone.
# Published references: Cheetah 15K.7 manual, sustained 122–204 MB/s; HP: a 15k drive sustains
# ~200 MB/s and bounds sequential throughput behind a Smart Array controller; without a protected
# cache and with the drive's write cache off a write waits about one turn (250/s at 15k rpm:
# PostgreSQL 9.0 High Performance); HP: the P410i generation's controller does up to 60,000 4 KB IOPS.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)-controller}"
runtime="${RUNTIME:-5s}"
mkdir -p "$out"
# OLTPLAB and VALIDATE name prebuilt binaries (then nothing is built).
if [[ -z "${OLTPLAB:-}" || -z "${VALIDATE:-}" ]]; then
  (cd "$repo" && cargo build --release -q -p oltplab && cargo build --release -q -p oltplab-devmodel --example validate)
fi
oltplab="${OLTPLAB:-$repo/target/release/oltplab}"
validate="${VALIDATE:-$repo/target/release/examples/validate}"
{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown))"
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$out/commands.txt"
{
  echo "# The RAID controller model: one 15k drive, 16 KiB sequential, QD 1"
  echo
  echo "## Model (virtual time): the controller rows of the validation table"
  echo
  "$validate" | sed -n '1,2p;/wbcache\|sequential writes/p'
  echo
  echo "## Live emulation (data in RAM, $runtime after 1 s)"
  echo
  echo "| spec | reads/s | read MB/s | writes/s | write MB/s |"
  echo "|---|---|---|---|---|"
} > "$out/controller.md"
for spec in hdd-15k 'wbcache(hdd-15k,size=1g,readahead=on)' 'wbcache(hdd-15k,size=16m,readahead=on)'; do
  name=$(echo "$spec" | tr -c 'a-z0-9.\n-' '_')
  row="| \`$spec\`"
  for rw in read write; do
    echo "oltplab device --emulate '$spec' --rw $rw --bs 16k --qd 1 --runtime $runtime --ramp 1s" >> "$out/commands.txt"
    "$oltplab" device --emulate "$spec" --rw "$rw" --bs 16k --qd 1 --runtime "$runtime" --ramp 1s \
      --json "$out/$name-$rw.json" --out "$out/$name-$rw" --force > "$out/$name-$rw.stdout" 2>&1
    row="$row $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["summary"][sys.argv[2]]; print("| %.0f | %.1f" % (d["iops"], d["bw_bytes"]/1e6))' "$out/$name-$rw.json" "$rw")"
  done
  echo "$row |" >> "$out/controller.md"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/commands.txt"
cat "$out/controller.md"
