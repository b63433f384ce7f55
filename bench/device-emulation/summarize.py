#!/usr/bin/env python3
"""Summarises a bench/device-emulation run directory as Markdown (stdout)."""
import json
import math
import sys
from pathlib import Path

run = Path(sys.argv[1])


def load(name):
    return json.loads((run / name / "result.json").read_text())


def point(doc, qd):
    sweep = doc["summary"]["sweep"]
    emu = doc["summary"]["emulation"]["points"]
    s = next(p for p in sweep if p["qd"] == qd)
    e = next(p for p in emu if p["qd"] == qd)
    return s, e


def us(ns):
    return f"{ns / 1000:,.1f} µs"


print("# Emulated devices — measured with `oltplab device --emulate`\n")
print((run / "commands.txt").read_text().split("\n")[3] if (run / "commands.txt").exists() else "")
print()
print("## Calibration against S1 (16 KiB random reads, ratios to hdd-10k)\n")
hdd = load("cal-hdd-10k")
h1, he1 = point(hdd, 1)
h32, he32 = point(hdd, 32)
print("| device | QD 1 mean latency | QD 1 p50 | QD 32 IOPS | model QD 1 | model QD 32 IOPS | fidelity (realised vs modelled mean) |")
print("|---|---|---|---|---|---|---|")
rows = [("hdd-10k", hdd)]
for dev in ["sata-ssd-2010", "pcie-flash-2012"]:
    rows.append((dev, load(f"cal-{dev}")))
for name, doc in rows:
    p1, e1 = point(doc, 1)
    p32, e32 = point(doc, 32)
    print(f"| {name} | {us(p1['lat_ns']['mean'])} | {us(p1['lat_ns']['p50'])} | {p32['iops']:,.0f} | {us(e1['model_lat_ns_mean'])} | {e32['model_iops']:,.0f} | {e1['fidelity']['off_pct']:+.1f} % / {e32['fidelity']['off_pct']:+.1f} % |")
print()
print("| ratio to hdd-10k | S1 target | measured (mean) | measured (p50) | model | measured vs target |")
print("|---|---|---|---|---|---|")
targets = {"sata-ssd-2010": (16.7, 43.2), "pcie-flash-2012": (160.0, 208.1)}
for name, doc in rows[1:]:
    p1, e1 = point(doc, 1)
    p32, e32 = point(doc, 32)
    lat_t, iops_t = targets[name]
    lat_mean = h1["lat_ns"]["mean"] / p1["lat_ns"]["mean"]
    lat_p50 = h1["lat_ns"]["p50"] / p1["lat_ns"]["p50"]
    lat_model = he1["model_lat_ns_mean"] / e1["model_lat_ns_mean"]
    iops = p32["iops"] / h32["iops"]
    iops_model = e32["model_iops"] / he32["model_iops"]
    print(f"| {name}: QD 1 latency | 1/{lat_t} | 1/{lat_mean:.1f} | 1/{lat_p50:.1f} | 1/{lat_model:.1f} | {(lat_mean / lat_t - 1) * 100:+.0f} % (p50 {(lat_p50 / lat_t - 1) * 100:+.0f} %) |")
    print(f"| {name}: QD 32 IOPS | {iops_t}× | {iops:.1f}× | | {iops_model:.1f}× | {(iops / iops_t - 1) * 100:+.0f} % |")
print()


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v and all(x > 0 for x in v) else 0.0


print("## S4: twelve profiles, QD 1…256, 4-drive RAID5 (geometric mean of IOPS over the depths)\n")
names = sorted(p.name for p in run.glob("s4-*") if p.is_dir())
docs = {n: load(n) for n in names}
if len(docs) == 2:
    hdd_name = next(n for n in names if "hdd" in n)
    ssd_name = next(n for n in names if "ssd" in n)
    hp = {p["name"]: p for p in docs[hdd_name]["summary"]["profiles"]}
    sp = {p["name"]: p for p in docs[ssd_name]["summary"]["profiles"]}
    print(f"| profile | {docs[hdd_name]['config']['emulate']} | {docs[ssd_name]['config']['emulate']} | SSD / HDD |")
    print("|---|---|---|---|")
    for name in hp:
        h, s = hp[name]["geomean_iops"], sp[name]["geomean_iops"]
        print(f"| {name} | {h:,.0f} | {s:,.0f} | {s / h:.1f}× |" if h > 0 else f"| {name} | {h} | {s} | |")
    gh = geomean([p["geomean_iops"] for p in hp.values()])
    gs = geomean([p["geomean_iops"] for p in sp.values()])
    print(f"| **all profiles** | **{gh:,.0f}** | **{gs:,.0f}** | **{gs / gh:.1f}×** |")
    print()
    print("## Saturation: realised IOPS against the model's own closed-loop IOPS (its bound) at QD 256\n")
    print("| profile | HDD RAID5 realised / model | SSD RAID5 realised / model |")
    print("|---|---|---|")
    def at(doc, prof, qd):
        for p in doc["summary"]["emulation"]["points"]:
            if p.get("profile") == prof and p["qd"] == qd:
                return p
    ratios = {hdd_name: [], ssd_name: []}
    for name in hp:
        cells = []
        for n in (hdd_name, ssd_name):
            p = at(docs[n], name, 256)
            r = p["iops"] / p["model_iops"]
            ratios[n].append(r)
            cells.append(f"{p['iops']:,.0f} / {p['model_iops']:,.0f} = {r:.2f}")
        print(f"| {name} | {cells[0]} | {cells[1]} |")
    print()
    for n in (hdd_name, ssd_name):
        f = docs[n]["summary"]["emulation"]["fidelity"]
        print(f"- {docs[n]['config']['emulate']}: fidelity over all {len(docs[n]['summary']['emulation']['points'])} points: modelled mean {us(f['modelled_lat_ns_mean'])}, realised {us(f['realised_lat_ns_mean'])} ({f['off_pct']:+.1f} %); waits woke {us(f['wake_late_ns_mean'])} late on average; warnings: {len(docs[n]['warnings'])}")
