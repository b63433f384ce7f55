#!/usr/bin/env python3
"""Medians of tpmC and CPU per transaction over several run directories (runs/*), per build, and
the ratio of each round's adjacent pair (after / before)."""
import json
import pathlib
import statistics
import sys

tpmc = {"before": [], "after": []}
cpu = {"before": [], "after": []}
pairs = []
for d in map(pathlib.Path, sys.argv[1:]):
    by = {}
    for f in sorted(d.glob("run-*.json")):
        s = json.loads(f.read_text())["summary"]
        build, rnd = f.stem.split("-")[1:3]
        c = s["cpu"]
        us = 1e6 * (c["db_user_s"] + c["db_sys_s"] + c["driver_user_s"] + c["driver_sys_s"]) / (
            s["tpm_total"] * s["measured_s"] / 60)
        tpmc[build].append(s["tpmc"])
        cpu[build].append(us)
        by[(build, rnd)] = (s["tpmc"], us)
    for (build, rnd), v in by.items():
        if build == "after" and ("before", rnd) in by:
            b = by[("before", rnd)]
            pairs.append((d.name, rnd, v[0] / b[0], v[1] / b[1]))
print("| runs | round | tpmC after/before | CPU per transaction after/before |")
print("|---|---|---:|---:|")
for p in pairs:
    print(f"| {p[0]} | {p[1]} | {p[2]:.2f} | {p[3]:.2f} |")
print()
for build in ("before", "after"):
    print(f"{build}: median tpmC {statistics.median(tpmc[build]):.0f} (n={len(tpmc[build])}, "
          f"{min(tpmc[build]):.0f}–{max(tpmc[build]):.0f}), median CPU per transaction "
          f"{statistics.median(cpu[build]):.0f} µs")
gm = statistics.geometric_mean([p[2] for p in pairs])
print(f"pairs: median tpmC ratio {statistics.median([p[2] for p in pairs]):.2f}, geometric mean {gm:.2f}; "
      f"median CPU-per-transaction ratio {statistics.median([p[3] for p in pairs]):.2f}")
