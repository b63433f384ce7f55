#!/usr/bin/env python3
"""The study's table for each pacing of bench/s1-mariadb/run.sh, as Markdown."""
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
for pacing in ("none", "spec"):
    f = out / f"results-{pacing}.json"
    if not f.exists():
        continue
    doc = json.loads(f.read_text())
    s = doc["summary"]
    scale = doc["config"]["scale"]
    print(f"\n### --pacing {pacing}: {scale['warehouses']} warehouses, {scale['terminals']} terminals, "
          f"buffer pool {s.get('buffer_pool_bytes', 0) / 2**20:.0f} MiB, "
          f"{scale['warmup_s']:.0f} s + {scale['duration_s']:.0f} s per device\n")
    print("| device | 16k IOPS QD32 | 16k lat QD1 | tpmC | run IOPS | lanes replay | causal replay | α | α causal | run off model | limited by |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for d in s["devices"]:
        fid = (d.get("run_fidelity") or {}).get("off_pct")
        causal = d.get("alpha_causal")
        bound = d.get("bound_order", "lanes")
        lanes_iops = d.get("replay_lanes_iops", d["replay_iops"])
        causal_iops = d.get("replay_causal_iops")
        mark = lambda order: "*" if order == bound else ""
        print(f"| {d['name']} | {d['randread16k_iops']:,.0f} | {d['randread16k_lat_ns'] / 1e3:,.1f} µs | "
              f"{d['tpmc']:,.0f} | {d['run_iops']:,.0f} | {lanes_iops:,.0f}{mark('lanes')} | "
              f"{'—' if causal_iops is None else f'{causal_iops:,.0f}' + mark('causal')} | {d['alpha']:.2f} | "
              f"{'—' if causal is None else f'{causal:.2f}'} | {'—' if fid is None else f'{fid:+.1f} %'} | "
              f"{d['breakdown']['limit']} |")
    print("\n(* the replay α is against: the better of the two)")
