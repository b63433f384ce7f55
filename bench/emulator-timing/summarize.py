#!/usr/bin/env python3
"""Per device and build, from bench/emulator-timing/run.sh's results: the run's realised against
modelled latency — the means (off %), the p99s and their gap, the share of I/Os late by more than
max(10 µs, 10 %) — the emulator's spin (CPU-seconds and share of the machine), the submissions the
model took out of arrival order (counted since issue 30), tpmC and α."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
print("| build | round | device | run off model (mean) | p99 modelled / realised | p99 off | late I/Os | spin CPU-s (share of machine) | out-of-order arrivals (mean gap) | tpmC | α | α causal |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")


def pct(v):
    return "—" if v is None else f"{v:.1f} %"


for f in sorted(out.glob("results-*.json"), key=lambda p: (p.stem.rstrip("0123456789")[::-1], p.stem[-1])):
    build = f.stem.split("-")[1].rstrip("0123456789")
    rnd = f.stem[len("results-" + build):]
    doc = json.loads(f.read_text())
    cores = (doc.get("env") or {}).get("cores") or 2
    for d in doc["summary"]["devices"]:
        fid = d.get("run_fidelity") or {}
        if not fid:
            continue
        mod, real = fid["modelled_lat_ns_p99"], fid["realised_lat_ns_p99"]
        p99_off = (real - mod) / mod * 100 if mod else None
        spin = fid.get("spin_cpu_s")
        # Builds before issue 30 did not record the window: the study's measured duration.
        window = fid.get("window_s") or doc["config"]["scale"]["duration_s"]
        share = spin / (window * cores) * 100 if spin is not None else None
        inv = fid.get("order_inversions")
        inv_text = "—" if inv is None else f"{inv:,} of {fid['ios']:,} ({fid.get('order_inversion_ns_mean', 0) / 1e3:,.0f} µs)"
        print(f"| {build} | {rnd} | {d['name']} | {fid['off_pct']:+.1f} % | "
              f"{mod / 1e3:,.0f} / {real / 1e3:,.0f} µs | {'—' if p99_off is None else f'{p99_off:+.0f} %'} | "
              f"{pct(fid.get('late_pct'))} | "
              f"{'—' if spin is None else f'{spin:.1f} ({share:.0f} %)'} | {inv_text} | "
              f"{d['tpmc']:,.0f} | {d['alpha']:.2f} | {d.get('alpha_causal') or 0:.2f} |")
