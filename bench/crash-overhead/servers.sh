#!/usr/bin/env bash
# What keeping undo costs a managed server (issue 36): tpmC of `oltplab run tpcc --engine postgres`
# on an emulated device with a volatile cache, with the shim's undo log on and off, in pairs whose
# order alternates (off,on then on,off), each run on a fresh copy of one load. Writes every run's
# result JSON, its stdout/stderr, the undo log's size and commands.txt into
# runs/<date>-<host>-servers-undo/ (or $1), and prints each pair's on/off ratio.
#
# The undo log is switched on exactly as `oltplab crash` does it: the shim reads OLTPLAB_SHIM_UNDO
# (crates/shim/src/lib.rs) and, when it names a writable file, appends the old and new contents of
# every write to a device whose cache can lose it, and a record per flush. `oltplab run` never sets
# it; the managed server inherits oltplab's environment, so setting it around the run is the same
# shim code on the same workload. The log's size after a run shows it was on.
#
# PAIRS (default 6), SPEC (default 'sata-ssd-2010{cache=volatile}'), ENGINE (postgres), DURATION
# (30s), WARMUP (5s), TERMINALS (4), UNDO_DIR (where the log goes; default the run's directory). Run from anywhere: bench/crash-overhead/servers.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/runs/$(date -u +%Y-%m-%d)-$(hostname)-servers-undo}"
pairs="${PAIRS:-6}"
# (Not in ${SPEC:-…}: the spec's closing brace would end the expansion.)
default_spec='sata-ssd-2010{cache=volatile}'
spec="${SPEC:-$default_spec}"
engine="${ENGINE:-postgres}"
duration="${DURATION:-30s}"
warmup="${WARMUP:-5s}"
terminals="${TERMINALS:-4}"
mkdir -p "$out"
# (`--bin oltplab` would leave out the shim: a bin filter applies to every package named.)
(cd "$repo" && cargo build --release --locked -q -p oltplab --bin oltplab && cargo build --release --locked -q -p oltplab-shim)
oltplab="$repo/target/release/oltplab"
work="$(mktemp -d /tmp/oltplab-bench-undo.XXXXXX)"
# The server's own account must reach the undo log (as `oltplab crash` hands it over).
chmod 711 "$work"
trap 'rm -rf "$work"' EXIT
account=""
if [[ $(id -u) == 0 ]]; then
  case "$engine" in postgres) account=postgres ;; mariadb) account=mysql ;; esac
fi
{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc); load: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$out/commands.txt"

echo "$oltplab load tpcc --engine $engine --data-dir $work/load -w 1 --buffer-pool 64m" >> "$out/commands.txt"
"$oltplab" load tpcc --engine "$engine" --data-dir "$work/load" -w 1 --buffer-pool 64m \
  > "$out/load.stdout" 2> "$out/load.stderr"

one() { # pair, undo (on|off)
  local name="pair-$1-undo-$2"
  rm -rf "$work/run"
  cp -a "$work/load" "$work/run"
  local undo="${UNDO_DIR:-$work}/undo.log"
  rm -f "$undo"
  local env=()
  if [[ $2 == on ]]; then
    : > "$undo"
    chmod 600 "$undo"
    [[ -n $account ]] && chown "$account:" "$undo"
    env=(env "OLTPLAB_SHIM_UNDO=$undo")
  fi
  local cmd=("$oltplab" run tpcc --engine "$engine" --data-dir "$work/run" --emulate "$spec"
    --backing ram --buffer-pool 64m --terminals "$terminals" --warmup "$warmup"
    --duration "$duration" --out "$work/results/$name" --json "$out/$name.json")
  echo "[load $(cut -d' ' -f1-3 /proc/loadavg)] ${env[*]} ${cmd[*]}" >> "$out/commands.txt"
  "${env[@]}" "${cmd[@]}" > "$out/$name.stdout" 2> "$out/$name.stderr"
  if [[ $2 == on ]]; then
    echo "$name undo_log_bytes $(stat -c %s "$undo")" >> "$out/undo-sizes.txt"
    rm -f "$undo"
  fi
}

for ((p = 1; p <= pairs; p++)); do
  if ((p % 2)); then order=(off on); else order=(on off); fi
  for u in "${order[@]}"; do one "$p" "$u"; done
  python3 - "$out" "$p" <<'EOF'
import json, sys
out, p = sys.argv[1], sys.argv[2]
t = {u: json.load(open(f"{out}/pair-{p}-undo-{u}.json"))["summary"]["tpmc"] for u in ("off", "on")}
print(f"pair {p}: off {t['off']:.0f} tpmC, on {t['on']:.0f} tpmC, on/off {t['on'] / t['off']:.3f}")
EOF
done | tee "$out/pairs.txt"
# The pairs' ratios: mean, standard deviation and a 95 % interval (Student's t, n-1 degrees).
python3 - "$out" <<'EOF2' | tee -a "$out/pairs.txt"
import json, math, pathlib, sys
out = pathlib.Path(sys.argv[1])
t95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131}
ratios, offs, ons = [], [], []
p = 1
while (out / f"pair-{p}-undo-off.json").exists() and (out / f"pair-{p}-undo-on.json").exists():
    off = json.load(open(out / f"pair-{p}-undo-off.json"))["summary"]["tpmc"]
    on = json.load(open(out / f"pair-{p}-undo-on.json"))["summary"]["tpmc"]
    offs.append(off); ons.append(on); ratios.append(on / off)
    p += 1
n = len(ratios)
mean = sum(ratios) / n
sd = math.sqrt(sum((r - mean) ** 2 for r in ratios) / (n - 1)) if n > 1 else float("nan")
half = t95.get(n - 1, 1.96) * sd / math.sqrt(n) if n > 1 else float("nan")
print(f"{n} pairs: off mean {sum(offs) / n:.0f} tpmC, on mean {sum(ons) / n:.0f} tpmC; "
      f"on/off mean {mean:.3f} (sd {sd:.3f}), 95 % interval {mean - half:.3f}-{mean + half:.3f}")
EOF2
