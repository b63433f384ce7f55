#!/usr/bin/env python3
"""Summarises a bench/replay run: IOPS of the replay, the device job and fio's iolog replay on the
disk; IOPS and I/Os per CPU-second of the replay and fio on /dev/shm. Medians over the rounds, and
every round's figures."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
rounds = int(sys.argv[2])
total = int(sys.argv[3])


def cpu_s(name):
    user, system, _elapsed = (float(x) for x in (out / f"{name}.time").read_text().split()[-3:])
    return user + system


def oltplab(name):
    doc = json.loads((out / name / "result.json").read_text())
    s = doc["summary"]
    ios = s["read"]["ios"] + s["write"]["ios"]
    return s["iops"], ios


def fio(name):
    doc = json.loads((out / f"{name}.json").read_text())
    job = doc["jobs"][0]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    return job["read"]["iops"] + job["write"]["iops"], ios


rows = {}
for r in range(1, rounds + 1):
    for scenario, tools in (("disk", ("replay", "device", "fio")), ("shm", ("replay", "fio"))):
        for tool in tools:
            name = f"{scenario}-{tool}-{r}"
            iops, ios = fio(name) if tool == "fio" else oltplab(name)
            rows.setdefault((scenario, tool), []).append((iops, ios, ios / max(cpu_s(name), 1e-9)))


def med(key, i):
    return statistics.median(v[i] for v in rows[key])


print(f"# replay vs device vs fio ({rounds} rounds, {total} I/Os per replay)\n")
print("| scenario | tool | IOPS (median) | I/Os per CPU-s (median) | every round (IOPS) |")
print("|---|---|---|---|---|")
for (scenario, tool), values in rows.items():
    rounds_txt = ", ".join(f"{v[0]:,.0f}" for v in values)
    print(f"| {scenario} | {tool} | {med((scenario, tool), 0):,.0f} | {med((scenario, tool), 2):,.0f} | {rounds_txt} |")
print()
d = med(("disk", "replay"), 0)
print(f"- disk: replay / device = **{d / med(('disk', 'device'), 0):.3f}** (target ≥ 0.95); "
      f"replay / fio = **{d / med(('disk', 'fio'), 0):.3f}** (target ≥ 1.0)")
s = med(("shm", "replay"), 0)
print(f"- shm: replay / fio IOPS = **{s / med(('shm', 'fio'), 0):.3f}**; "
      f"I/Os per CPU-second replay / fio = **{med(('shm', 'replay'), 2) / med(('shm', 'fio'), 2):.3f}**")
for (scenario, tool), values in rows.items():
    if tool != "device" and any(v[1] != total for v in values):
        print(f"- note: {scenario} {tool} did {[v[1] for v in values]} I/Os, not {total}")
