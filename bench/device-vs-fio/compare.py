#!/usr/bin/env python3
"""Summarises a bench/device-vs-fio run directory into Markdown: medians over the rounds, and each
round's oltplab / fio ratio averaged with its 95 % interval (rounds alternate the tools, so a pair
shares the device's state of the moment)."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
rounds = int(sys.argv[2])


def fio(name):
    job = json.loads((out / f"{name}.json").read_text())["jobs"][0]["read"]
    # oltplab times an I/O from before its submission, as fio's total latency (`lat`, with
    # --lat_percentiles=1) does; older runs only have fio's completion latency (`clat`).
    lat = job["lat_ns"] if "percentile" in job["lat_ns"] else job["clat_ns"]
    pct = lat["percentile"]
    return {"ios": job["total_ios"], "iops": job["iops"], "p50": pct["50.000000"], "p99": pct["99.000000"], "mean": lat["mean"]}


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
        figures = fio(name) if tool.startswith("fio") else oltplab(name)
        values.append(figures["ios"] / cpu_s(name) if key == "ios_per_cpu_s" else figures[key])
    return statistics.median(values), values


# Student's t, two-sided 95 %, by degrees of freedom (beyond 30: 2.0).
T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
       11: 2.20, 12: 2.18, 13: 2.16, 14: 2.14, 15: 2.13, 19: 2.09, 24: 2.06, 29: 2.05}


def paired(ours_all, theirs_all):
    ratios = [o / t for o, t in zip(ours_all, theirs_all)]
    if len(ratios) < 2:
        return "—"
    df = len(ratios) - 1
    t95 = T95[max(k for k in T95 if k <= df)] if df <= 29 else 2.0
    half = t95 * statistics.stdev(ratios) / len(ratios) ** 0.5
    return f"{statistics.mean(ratios):.3f} ± {half:.3f}"


def row(label, kind, key, unit, scale=1.0, theirs_tool="fio"):
    if not (out / f"{kind}-{theirs_tool}-1.json").exists():
        return  # this part was not run (PARTS, or no huge pages for fio)
    ours, ours_all = median(kind, "oltplab", key)
    theirs, theirs_all = median(kind, theirs_tool, key)
    fmt = lambda v: f"{v / scale:,.1f}" if scale != 1.0 else f"{v:,.0f}"
    rounds_text = " / ".join(fmt(v) for v in ours_all) + " vs " + " / ".join(fmt(v) for v in theirs_all)
    print(f"| {label} | {fmt(theirs)} {unit} | {fmt(ours)} {unit} | {ours / theirs:.3f} | {paired(ours_all, theirs_all)} | {rounds_text} |")


print(f"# oltplab device vs fio — medians of {rounds} alternating rounds\n")
print("| figure | fio | oltplab | oltplab / fio (medians) | paired ratio: mean ± 95 % CI | rounds (oltplab vs fio) |")
print("|---|---|---|---|---|---|")
row("disk 16 KiB randread QD32 direct: IOPS", "disk", "iops", "")
row("disk 16 KiB randread QD32 direct: latency p50", "disk", "p50", "µs", 1000.0)
row("disk 16 KiB randread QD32 direct: latency p99", "disk", "p99", "µs", 1000.0)
row("disk 16 KiB randread QD32 direct: latency mean", "disk", "mean", "µs", 1000.0)
for key, what, unit, scale in [("iops", "IOPS", "", 1.0), ("p50", "latency p50", "µs", 1000.0), ("p99", "latency p99", "µs", 1000.0)]:
    row(f"disk, fio --mem=shmhuge (huge-page buffers like oltplab's): {what}", "disk", key, unit, scale, "fiohuge")
row("/dev/shm 4 KiB randread QD32 buffered: IOPS", "shm", "iops", "")
row("/dev/shm 4 KiB randread QD32 buffered: I/Os per CPU-second", "shm", "ios_per_cpu_s", "")
row("null engine 4 KiB QD32: IOPS", "null", "iops", "")
row("null engine 4 KiB QD32: I/Os per CPU-second", "null", "ios_per_cpu_s", "")
print("\nfio's default buffers are malloc'd (4 KiB pages, contiguous only by chance); oltplab's and fio --mem=shmhuge's sit on a 2 MiB huge page.")
print("\nCPU-seconds are user + system of the whole process (GNU time); I/Os are each tool's own count.")
