#!/usr/bin/env python3
"""summary.md of a capture-overhead run: tpmC per round without and with --trace, per engine."""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
engines = sys.argv[2:]
print("# Capture overhead: tpmC without and with --trace\n")
print("| engine | rounds | tpmC plain (mean) | tpmC traced (mean) | traced / plain (means) | paired ratio: mean ± 95 % CI | traced records/s |")
print("|---|---|---|---|---|---|---|")
for engine in engines:
    plain, traced, rate = {}, {}, []
    for d in sorted(out.glob(f"{engine}-*-*/result.json")):
        doc = json.loads(d.read_text())
        s = doc["summary"]
        round_no = int(d.parent.name.rsplit("-", 1)[1])
        if "-traced-" in d.parent.name:
            traced[round_no] = s["tpmc"]
            io = s["io"]
            rate.append((io["reads"] + io["writes"] + io["syncs"]) / s["measured_s"])
        else:
            plain[round_no] = s["tpmc"]
    if not plain or not traced:
        continue
    p, t = statistics.mean(plain.values()), statistics.mean(traced.values())
    # Each round's traced run against its own plain run: drift between rounds cancels out.
    pairs = [traced[r] / plain[r] for r in sorted(plain) if r in traced]
    ci = ""
    if len(pairs) > 1:
        # Student's t, two-sided 95 %, for n - 1 degrees of freedom (n ≤ 10 here).
        t95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}
        half = t95.get(len(pairs) - 1, 2.0) * statistics.stdev(pairs) / len(pairs) ** 0.5
        ci = f"{statistics.mean(pairs):.3f} ± {half:.3f}"
    print(f"| {engine} | {len(plain)} | {p:,.0f} | {t:,.0f} | {t / p:.3f} | {ci} | {statistics.mean(rate):,.0f} |")
print("\nEach round's figures: the `<engine>-<plain|traced>-<round>/result.json` files beside this one.")
