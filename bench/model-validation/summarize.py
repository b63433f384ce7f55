#!/usr/bin/env python3
"""Summarises a bench/model-validation run directory as Markdown (stdout)."""
import json
import pathlib
import sys

run = pathlib.Path(sys.argv[1])
print(f"# Device models against published references — {run.name}\n")
for line in (run / "commands.txt").read_text().splitlines()[1:4]:
    print(f"- {line}")
print("\n## The model, in virtual time (`validate`)\n")
print((run / "model.md").read_text())

# What the model predicts for the live points: the same rows of model.json where they match.
print("## The same through the live emulation (`oltplab device --emulate`, data in RAM)\n")
print("| device | figure | realised | model (virtual time, same device state) | realised / model | emulation off model |")
print("|---|---|---|---|---|---|")
for path in sorted(run.glob("randread-*.json")):
    doc = json.loads(path.read_text())
    emu = doc["summary"]["emulation"]
    for p in emu["points"]:
        ratio = p["iops"] / p["model_iops"] if p["model_iops"] else float("nan")
        print(f"| `{emu['spec']}` | 4 KiB random reads, QD {p['qd']} | {p['iops']:,.0f} IOPS | "
              f"{p['model_iops']:,.0f} IOPS | {ratio:.3f} | {p['fidelity']['off_pct']:+.2f} % |")
for path in sorted(run.glob("commit-*.json")):
    doc = json.loads(path.read_text())
    s = doc["summary"]
    emu = s["emulation"]
    flush = s["flush"]
    point = emu["points"][0]
    ratio = flush["per_s"] / point["model_iops"] if point.get("model_iops") else float("nan")
    print(f"| `{emu['spec']}` | commit-8k: 8 KiB append + fdatasync, QD 1 | {flush['per_s']:,.0f} commits/s "
          f"(flush p50 {flush['lat_ns']['p50'] / 1e3:,.0f} µs, p99 {flush['lat_ns']['p99'] / 1e3:,.0f} µs) | "
          f"{point['model_iops']:,.0f} I/Os/s | {ratio:.3f} | {emu['fidelity']['off_pct']:+.2f} % |")
