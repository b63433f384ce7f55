#!/usr/bin/env bash
# The HDD model on DiskSim 4.0's validation traces (issue 31). For each drive of DiskSim's
# valid/runvalid (data and licence in disksim-valid/, see its README.md): the HDD model configured
# from the drive's extracted parameters runs the drive's trace of measured requests, one at a time
# with the trace's think times, in virtual time; the table gives the rms distance between the
# modelled and the measured response-time distributions beside DiskSim's own rms for the drive.
# Writes disksim-valid.md and disksim-valid.json into runs/<date>-<host>/ (or $1) and checks
# issue 31's goal: rms at most twice DiskSim's on the Atlas 10K and at least three other drives
# (exit 1 if not). Takes a few seconds after the build. Run from anywhere:
#   bench/model-validation/disksim-valid.sh [OUT_DIR]
# DISKSIM_VALID=DIR reads the files from DIR instead (e.g. an unpacked disksim-4.0/valid).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
data="${DISKSIM_VALID:-$here/disksim-valid}"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)}"
if [ ! -f "$data/atlas10k.trace" ]; then
  echo "disksim-valid.sh: no DiskSim validation traces in $data; they come from DiskSim 4.0's valid/ directory (Carnegie Mellon PDL, https://www.pdl.cmu.edu/DiskSim/, or a public mirror of disksim-4.0); set DISKSIM_VALID to that directory" >&2
  exit 2
fi
mkdir -p "$out"
(cd "$repo" && cargo build --release -q -p oltplab-devmodel --example diskvalid)
"$repo/target/release/examples/diskvalid" --dir "$data" --json "$out/disksim-valid.json" > "$out/disksim-valid.md"
cat "$out/disksim-valid.md"
python3 - "$out/disksim-valid.json" <<'EOF'
import json, sys
rows = json.load(open(sys.argv[1]))
within = [r["drive"] for r in rows if r["rms_ms"] <= 2 * r["disksim_rms_ms"]]
ok = "atlas10k" in within and len(within) >= 4
print(f"\nwithin twice DiskSim's rms: {', '.join(within) or 'none'} — issue 31's goal "
      f"(the Atlas 10K and at least three others) {'met' if ok else 'NOT met'}")
sys.exit(0 if ok else 1)
EOF
