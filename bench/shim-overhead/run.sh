#!/usr/bin/env bash
# CPU the emulation shim adds per interposed call.
#
# fio (psync engine: one pread per I/O) reads a 16 MiB file that sits in the page cache, N times,
# in four set-ups; each set-up runs ROUNDS times and the lowest CPU time (user + system, fio and
# everything it started) counts:
#   plain      fio without oltplab                              the baseline
#   untracked  under oltplab emulate, the file outside --path   the cost of the fd lookup alone
#   host       under emulate --device host                      full bookkeeping: clock reads, model
#                                                               call, fidelity counters, no wait
#   traced     as host, with --trace                            plus one trace record per call
#   ram        emulate --device ram                             adds the model (lock, arithmetic)
#                                                               and its ~1.4 µs service time
# The per-call cost is (set-up − plain) / N. The `host` device models no time, so no CPU is spent
# waiting; with a real device model the caller sleeps (and spins for the last few µs) on top.
#
# Usage: bench/shim-overhead/run.sh [OUT_DIR]   (builds release binaries first)
set -euo pipefail
cd "$(dirname "$0")/../.."
LOOPS=${LOOPS:-100}
N=$((LOOPS * 4096)) # 16 MiB / 4 KiB per pass
ROUNDS=${ROUNDS:-5}
out=${1:-bench/shim-overhead/runs/$(date -u +%Y-%m-%d)-$(hostname -s)}
mkdir -p "$out"
command -v fio >/dev/null || { echo "fio is missing: apt-get install fio" >&2; exit 2; }
cargo build --release --quiet -p oltplab -p oltplab-shim
oltplab=$PWD/target/release/oltplab
work=$(mktemp -d /tmp/oltplab-shim-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/other"
# The data file, created and cached once (outside any emulation).
fio_args=(--name=r --rw=randread --bs=4k --size=16m --ioengine=psync --loops="$LOOPS"
          --randrepeat=1 --norandommap --output-format=terse --terse-version=3)
"$oltplab" emulate --device host --path "$work/d" -- true 2>/dev/null
fio "${fio_args[@]}" --filename="$work/d/data" >/dev/null
cp "$work/d/data" "$work/other/data"
cat "$work/d/data" "$work/other/data" >/dev/null

cpu_of() { # prints the user+sys seconds of the command and everything it started
  ( "$@" >/dev/null 2>>"$out/stderr.log"; times ) | tail -1 |
    awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f\n", u[1]*60+u[2]+s[1]*60+s[2] }'
}
run() { # name, command...
  local name=$1; shift
  local best=""
  for _ in $(seq "$ROUNDS"); do
    local c
    c=$(cpu_of "$@")
    echo "$name $c" >>"$out/raw.txt"
    if [ -z "$best" ] || [ "$(echo "$c < $best" | bc)" = 1 ]; then best=$c; fi
  done
  echo "$best"
}
: >"$out/raw.txt"
: >"$out/stderr.log"
plain=$(run plain fio "${fio_args[@]}" --filename="$work/d/data")
untracked=$(run untracked "$oltplab" emulate --device host --path "$work/d" -- fio "${fio_args[@]}" --filename="$work/other/data")
host=$(run host "$oltplab" emulate --device host --path "$work/d" -- fio "${fio_args[@]}" --filename="$work/d/data")
ram=$(run ram "$oltplab" emulate --device ram --path "$work/d" -- fio "${fio_args[@]}" --filename="$work/d/data")
traced=$(run traced bash -c "rm -f '$work/t.trace'; exec '$oltplab' emulate --device host --path '$work/d' --trace '$work/t.trace' -- fio ${fio_args[*]} --filename='$work/d/data'")
per_call() { awk -v a="$1" -v b="$plain" -v n="$N" 'BEGIN { printf "%.2f", (a - b) * 1e6 / n }'; }
{
  echo "# Shim CPU per interposed pread ($N calls, best of $ROUNDS, release build)"
  echo
  echo "$(uname -sr), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo
  echo "| set-up | CPU s | added per call |"
  echo "|---|---|---|"
  echo "| plain fio | $plain | — |"
  echo "| untracked fd (lookup only) | $untracked | $(per_call "$untracked") µs |"
  echo "| emulated, device host | $host | $(per_call "$host") µs |"
  echo "| emulated + trace | $traced | $(per_call "$traced") µs |"
  echo "| emulated, device ram (model's lock and arithmetic; includes the ~1.4 µs modelled service time wherever the real pread was quicker) | $ram | $(per_call "$ram") µs |"
  echo
  echo "Target: ≤ 2 µs of CPU per interposed call. The emulate rows include oltplab's own start-up"
  echo "(shared state, copying the shim, the wake-up calibration in each process: a few ms in all)."
} | tee "$out/summary.md"
