#!/usr/bin/env python3
"""tpmC, all transactions per minute, New-Order p90 and CPU per transaction of each run, and
each build's means. CPU per transaction (the process's user + system time over the window's
transactions) moves far less than tpmC when other work shares the machine."""
import json
import pathlib
import statistics
import sys

out = pathlib.Path(sys.argv[1])
rows = {"before": [], "after": []}
cpu = {"before": [], "after": []}
print("| run | tpmC | tpm total | New-Order p90 (ms) | CPU µs per transaction | driver CPU share |")
print("|---|---:|---:|---:|---:|---:|")
for f in sorted(out.glob("run-*.json")):
    s = json.loads(f.read_text())["summary"]
    build = f.stem.split("-")[1]
    p90 = s["tx"]["new_order"]["lat_ns"]["p90"] / 1e6
    c = s["cpu"]
    tx = s["tpm_total"] * s["measured_s"] / 60
    us = 1e6 * (c["db_user_s"] + c["db_sys_s"] + c["driver_user_s"] + c["driver_sys_s"]) / tx
    rows[build].append(s["tpmc"])
    cpu[build].append(us)
    print(f"| {f.stem[4:]} | {s['tpmc']:.0f} | {s['tpm_total']:.0f} | {p90:.2f} | {us:.0f} | {100 * c['driver_share']:.1f} % |")
print()
for build, v in rows.items():
    if v:
        print(f"{build}: mean tpmC {statistics.mean(v):.0f} (min {min(v):.0f}, max {max(v):.0f}, n={len(v)}); "
              f"median CPU per transaction {statistics.median(cpu[build]):.0f} µs")
if rows["before"] and rows["after"]:
    b, a = statistics.mean(rows["before"]), statistics.mean(rows["after"])
    print(f"after / before: tpmC {a / b:.3f}, CPU per transaction "
          f"{statistics.median(cpu['after']) / statistics.median(cpu['before']):.3f}")
