#!/usr/bin/env python3
"""summary.md of a capture-overhead run: tpmC per round without and with --trace, per engine."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
engines = sys.argv[2:]
print("# Capture overhead: tpmC without and with --trace\n")
print("| engine | rounds | tpmC plain (mean) | tpmC traced (mean) | traced / plain | traced records/s |")
print("|---|---|---|---|---|---|")
for engine in engines:
    plain, traced, rate = [], [], []
    for d in sorted(out.glob(f"{engine}-*-*/result.json")):
        doc = json.loads(d.read_text())
        s = doc["summary"]
        if "-traced-" in d.parent.name:
            traced.append(s["tpmc"])
            io = s["io"]
            rate.append((io["reads"] + io["writes"] + io["syncs"]) / s["measured_s"])
        else:
            plain.append(s["tpmc"])
    if not plain or not traced:
        continue
    p, t = statistics.mean(plain), statistics.mean(traced)
    print(f"| {engine} | {len(plain)} | {p:,.0f} | {t:,.0f} | {t / p:.3f} | {statistics.mean(rate):,.0f} |")
print("\nEach round's figures: the `<engine>-<plain|traced>-<round>/result.json` files beside this one.")
