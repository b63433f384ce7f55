"""Medians and paired ratios (after / before) of bench/typed-runs' raw results."""
import json, re, statistics, sys
from pathlib import Path

out = Path(sys.argv[1])
rounds = sorted({int(m.group(1)) for p in out.glob("null-before-r*.json") if (m := re.search(r"r(\d+)", p.stem))})

def fig(kind, build, r):
    if kind == "load":
        text = (out / f"load-{build}-r{r}.time").read_text().split()
        return float(text[0])
    doc = json.loads((out / f"{kind}-{build}-r{r}.json").read_text())
    s = doc["summary"]
    if kind == "null":
        return s["cpu"]["ios_per_cpu_s"]
    if kind == "disk":
        return s["iops"]
    return s["tpmc"]

rows = [("null engine 4 KiB QD 32: I/Os per CPU-second", "null"),
        ("disk 16 KiB randread QD 32 direct: IOPS", "disk"),
        ("load tpcc -w 2 (SQLite): seconds", "load"),
        ("run tpcc -w 2 -t 4, 30 s (SQLite): tpmC", "run")]
print("| figure | before | after | after / before, medians | paired ratios |")
print("|---|---|---|---|---|")
for label, kind in rows:
    b = [fig(kind, "before", r) for r in rounds]
    a = [fig(kind, "after", r) for r in rounds]
    ratios = [x / y for x, y in zip(a, b)]
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"| {label} | {mb:,.0f} | {ma:,.0f} | {ma / mb:.3f} | {', '.join(f'{x:.3f}' for x in ratios)} |"
          if kind != "load" else
          f"| {label} | {mb:.2f} | {ma:.2f} | {ma / mb:.3f} | {', '.join(f'{x:.3f}' for x in ratios)} |")
print(f"\n{len(rounds)} rounds; raw results beside this file.")
