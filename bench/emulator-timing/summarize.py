#!/usr/bin/env python3
"""Per device and build: the run's realised-vs-modelled mean latency (off %), the realised and
modelled p99, the emulator's spin CPU, tpmC and α, from bench/emulator-timing/run.sh's results."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
print("| build | round | device | run off model | p99 modelled / realised | spin CPU-s | tpmC | α | α causal |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(out.glob("results-*.json")):
    build = f.stem.split("-")[1].rstrip("0123456789")
    rnd = f.stem[len("results-" + build):]
    for d in json.loads(f.read_text())["summary"]["devices"]:
        fid = d.get("run_fidelity") or {}
        if not fid:
            continue
        spin = fid.get("spin_cpu_s")
        print(f"| {build} | {rnd} | {d['name']} | {fid['off_pct']:+.1f} % | "
              f"{fid['modelled_lat_ns_p99'] / 1e3:,.0f} / {fid['realised_lat_ns_p99'] / 1e3:,.0f} µs | "
              f"{'—' if spin is None else f'{spin:.1f}'} | {d['tpmc']:,.0f} | {d['alpha']:.2f} | "
              f"{d.get('alpha_causal') or 0:.2f} |")
