#!/usr/bin/env python3
"""Summarises `run.sh io`: the brokerage workload's I/O against TPC-C's on MariaDB, from the runs'
result JSON and the traces' statistics: reads per write, I/Os per transaction, each table's share."""
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
lines = ["| workload | database GiB | tx/s | reads | writes | reads per write | I/Os per tx | read KiB per tx |",
         "|---|---:|---:|---:|---:|---:|---:|---:|"]
sizes = {}
for line in (out / "sizes.txt").read_text().split("\n"):
    if line.strip():
        b, path = line.split()
        sizes[pathlib.Path(path).name] = int(b) / 2**30
tables = {}
for w in ["brokerage", "tpcc"]:
    run = json.loads((out / f"run-{w}.json").read_text())["summary"]
    stat = json.loads((out / f"stat-{w}.json").read_text())
    tx = sum(t["count"] for t in run["tx"].values())
    reads, writes = stat["ops"]["read"], stat["ops"]["write"]
    lines.append(f"| {w} | {sizes.get(w, 0):.1f} | {tx / run['measured_s']:,.0f} | {reads:,} | {writes:,} | "
                 f"{reads / max(writes, 1):.2f} | {(reads + writes) / max(tx, 1):.2f} | "
                 f"{stat['read_bytes'] / 1024 / max(tx, 1):.1f} |")
    # Each table's file (InnoDB file per table); the rest by kind.
    per = {}
    for f in stat["per_file"]:
        name = pathlib.Path(f["path"]).name
        key = name[:-4] if name.endswith(".ibd") else ("redo log" if name.startswith("ib_logfile") else "system and undo")
        per[key] = per.get(key, 0) + f["reads"] + f["writes"]
    total = sum(per.values()) or 1
    tables[w] = sorted(((v / total, k) for k, v in per.items()), reverse=True)[:8]
lines.append("")
for w, top in tables.items():
    lines.append(f"{w}: " + ", ".join(f"{k} {100 * s:.1f} %" for s, k in top))
(out / "summary-io.md").write_text("\n".join(lines) + "\n")
print((out / "summary-io.md").read_text())
