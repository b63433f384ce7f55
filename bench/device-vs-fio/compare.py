#!/usr/bin/env python3
"""Summarises a bench/device-vs-fio run directory into Markdown: medians over the rounds."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
rounds = int(sys.argv[2])


def fio(name):
    job = json.loads((out / f"{name}.json").read_text())["jobs"][0]["read"]
    pct = job["clat_ns"]["percentile"]
    return {"ios": job["total_ios"], "iops": job["iops"], "p50": pct["50.000000"], "p99": pct["99.000000"], "mean": job["clat_ns"]["mean"]}


def oltplab(name):
    read = json.loads((out / name / "result.json").read_text())["summary"]["read"]
    return {"ios": read["ios"], "iops": read["iops"], "p50": read["lat_ns"]["p50"], "p99": read["lat_ns"]["p99"], "mean": read["lat_ns"]["mean"]}


def cpu_s(name):
    user, system, _ = (float(v) for v in (out / f"{name}.time").read_text().split())
    return user + system


def median(kind, tool, key):
    values = []
    for r in range(1, rounds + 1):
        name = f"{kind}-{tool}-{r}"
        figures = fio(name) if tool == "fio" else oltplab(name)
        values.append(figures["ios"] / cpu_s(name) if key == "ios_per_cpu_s" else figures[key])
    return statistics.median(values), values


def row(label, kind, key, unit, scale=1.0):
    ours, ours_all = median(kind, "oltplab", key)
    theirs, theirs_all = median(kind, "fio", key)
    fmt = lambda v: f"{v / scale:,.1f}" if scale != 1.0 else f"{v:,.0f}"
    rounds_text = " / ".join(fmt(v) for v in ours_all) + " vs " + " / ".join(fmt(v) for v in theirs_all)
    print(f"| {label} | {fmt(theirs)} {unit} | {fmt(ours)} {unit} | {ours / theirs:.3f} | {rounds_text} |")


print(f"# oltplab device vs fio — medians of {rounds} alternating rounds\n")
print("| figure | fio | oltplab | oltplab / fio | rounds (oltplab vs fio) |")
print("|---|---|---|---|---|")
row("disk 16 KiB randread QD32 direct: IOPS", "disk", "iops", "")
row("disk 16 KiB randread QD32 direct: latency p50", "disk", "p50", "µs", 1000.0)
row("disk 16 KiB randread QD32 direct: latency p99", "disk", "p99", "µs", 1000.0)
row("disk 16 KiB randread QD32 direct: latency mean", "disk", "mean", "µs", 1000.0)
row("/dev/shm 4 KiB randread QD32 buffered: IOPS", "shm", "iops", "")
row("/dev/shm 4 KiB randread QD32 buffered: I/Os per CPU-second", "shm", "ios_per_cpu_s", "")
row("null engine 4 KiB QD32: IOPS", "null", "iops", "")
row("null engine 4 KiB QD32: I/Os per CPU-second", "null", "ios_per_cpu_s", "")
print("\nCPU-seconds are user + system of the whole process (GNU time); I/Os are each tool's own count.")
