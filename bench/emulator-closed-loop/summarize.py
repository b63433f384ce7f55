#!/usr/bin/env python3
"""The closed loop's comparison table, from bench/emulator-closed-loop/run.sh's raw JSONs:
per round and side (the real disk, and RAM under --emulate of the fitted spec) tpmC, run IOPS and
the database's I/O latency p50/p99 (reads, writes, syncs: from each run's trace, where the emulated
side's end is the model's, and since d7b6b72 the real side's leaves out the wait for a core too;
and the emulated side's as the database waited for them, CPU queue included, beside the real
side's trace when REAL_TRACE=call says it holds the calls' own times), then the emulated side against the real one (mean over the rounds, and per round).
Usage: summarize.py OUT"""
import json
import os
import math
import pathlib
import sys

out = pathlib.Path(sys.argv[1])


def load(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


fit = load(out / "fit.json")
if fit:
    e = fit["summary"]["fit_error"]
    print(f"Fitted spec: `{fit['summary']['spec']}`\n")
    print(f"Fit error: {e['rms_pct']:.1f} % RMS over {2 * len(fit['summary']['points'])} figures "
          f"(IOPS mean |error| {e['iops_mean_abs_pct']:.1f} %, latency {e['lat_mean_abs_pct']:.1f} %, "
          f"worst {e['worst_pct']:.1f} %)\n")
    print("| point | measured IOPS | measured latency | fitted IOPS | fitted latency | IOPS error | latency error |")
    print("|---|---|---|---|---|---|---|")
    for p in fit["summary"]["points"]:
        print(f"| {p['op']} {p['block_size_bytes'] // 1024}k QD {p['qd']} | {p['measured']['iops']:,.0f} | "
              f"{p['measured']['lat_ns'] / 1e3:,.1f} µs | {p['fitted']['iops']:,.0f} | "
              f"{p['fitted']['lat_ns'] / 1e3:,.1f} µs | {p['iops_error_pct']:+.1f} % | {p['lat_error_pct']:+.1f} % |")
    print()

# Figures per (round, side).
FIGS = [("tpmC", lambda r, t: r["summary"]["tpmc"]),
        ("run IOPS", lambda r, t: r["summary"]["io"]["iops"]),
        ("read p50 µs", lambda r, t: t["read_lat_ns"]["p50"] / 1e3),
        ("read p99 µs", lambda r, t: t["read_lat_ns"]["p99"] / 1e3),
        ("write p50 µs", lambda r, t: t["write_lat_ns"]["p50"] / 1e3),
        ("write p99 µs", lambda r, t: t["write_lat_ns"]["p99"] / 1e3),
        ("sync p50 µs", lambda r, t: t["sync_lat_ns"]["p50"] / 1e3),
        ("sync p99 µs", lambda r, t: t["sync_lat_ns"]["p99"] / 1e3)]


def waited(kind, name, q):
    """What the database waited for one kind of I/O, CPU queue included, as the shim timed it on
    both sides (`summary.emulation.fidelity.realised_by_kind`): on the real side the call's time,
    on the emulated side the model's time plus any late wake-up."""
    def get(r, t):
        emulation = r["summary"].get("emulation")
        host = r["summary"].get("io", {}).get("waited_by_kind")
        if emulation is None and host:
            # The real side, timed by the same shim (runs since 2026-11-27).
            k = next(k for k in host if k["kind"] == kind)
            return k[f"realised_lat_ns_{q}"] / 1e3
        if emulation is None:
            # The real side's trace holds the calls' own times only if it was captured before
            # d7b6b72 (REAL_TRACE=call); since then it leaves out the wait for a core, like the
            # emulated side's trace, and the `traces` rows compare like with like.
            if os.environ.get("REAL_TRACE") != "call":
                return None
            return t[f"{name}_lat_ns"][q] / 1e3
        k = next(k for k in emulation["fidelity"]["realised_by_kind"] if k["kind"] == kind)
        return k[f"realised_lat_ns_{q}"] / 1e3
    return get


# The same per kind as the database waited (the traces time the emulated side by the model).
FIGS += [(f"{name} {q} µs waited", waited(kind, name, q))
         for kind, name in (("read", "read"), ("write", "write"), ("flush", "sync"))
         for q in ("p50", "p99")]

rows = {}
for f in sorted(out.glob("round*-*.json")):
    if f.stem.endswith("-trace"):
        continue
    rnd, side = f.stem[len("round"):].split("-", 1)
    run, trace = load(f), load(out / f"round{rnd}-{side}-trace.json")
    if not run or not trace:
        print(f"round {rnd} {side}: missing result or trace statistics")
        continue
    vals = {}
    for name, get in FIGS:
        try:
            vals[name] = get(run, trace)
        except (KeyError, TypeError, StopIteration):
            vals[name] = None
    fid = (run["summary"].get("emulation") or {}).get("fidelity") or {}
    vals["realised p50/p99 µs"] = (fid.get("realised_lat_ns_p50"), fid.get("realised_lat_ns_p99"))
    vals["emulated p50/p99 µs"] = (fid.get("emulated_lat_ns_p50"), fid.get("emulated_lat_ns_p99"))
    vals["cpu queue late %"] = fid.get("cpu_queue_late_pct")
    vals["spin % machine"] = fid.get("spin_machine_pct")
    rows[(int(rnd), side)] = vals


def fmt(v):
    if v is None:
        return "—"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.1f}"


def pair(p):
    return "—" if p[0] is None else f"{p[0] / 1e3:,.0f} / {p[1] / 1e3:,.0f}"


print("| round | side | " + " | ".join(n for n, _ in FIGS)
      + " | emulated p50 / p99 µs (all I/O) | realised p50 / p99 µs (all I/O) | I/Os late by the CPU queue, % | emulator spin, % of machine |")
print("|---|---|" + "---|" * (len(FIGS) + 4))
for (rnd, side), v in sorted(rows.items()):
    spin, queue = v["spin % machine"], v["cpu queue late %"]
    print(f"| {rnd} | {side} | " + " | ".join(fmt(v[n]) for n, _ in FIGS)
          + f" | {pair(v['emulated p50/p99 µs'])} | {pair(v['realised p50/p99 µs'])}"
          + f" | {'—' if queue is None else f'{queue:.1f}'} | {'—' if spin is None else f'{spin:.1f}'} |")

# Student's t at 97.5 % for n − 1 degrees of freedom: the 95 % interval of the mean log ratio.
T975 = {2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
# The headline figures: throughput and what the database waited for each kind of I/O.
HEADLINE = ["tpmC", "run IOPS"] + [n for n, _ in FIGS if n.endswith("waited")]


def interval(logs):
    """The 95 % interval (%, low and high) of the geometric mean over ≥ 3 rounds, else None."""
    n = len(logs)
    if n < 3 or n - 1 not in T975:
        return None
    m = sum(logs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (n - 1))
    h = T975[n - 1] * sd / math.sqrt(n)
    return ((math.exp(m - h) - 1) * 100, (math.exp(m + h) - 1) * 100)


rounds = sorted({r for r, _ in rows})
for other in [s for s in ("emulated", "tracefit") if any(side == s for _, side in rows)]:
    print(f"\n{other} against real ({other} ÷ real − 1; within ±10 % is the goal):\n")
    print("| figure | " + " | ".join(f"round {r}" for r in rounds)
          + " | geometric mean | 95 % interval (≥ 3 rounds) | within 10 % |")
    print("|---|" + "---|" * (len(rounds) + 3))
    headline = []
    for name, _ in FIGS:
        ratios = []
        cells = []
        for r in rounds:
            a, b = rows.get((r, "real"), {}).get(name), rows.get((r, other), {}).get(name)
            if a and b:
                ratios.append(b / a)
                cells.append(f"{(b / a - 1) * 100:+.1f} %")
            else:
                cells.append("—")
        if ratios:
            logs = [math.log(x) for x in ratios]
            g = math.exp(sum(logs) / len(logs))
            verdict = "yes" if abs(g - 1) <= 0.10 else "no"
            iv = interval(logs)
            ivs = "—" if iv is None else f"{iv[0]:+.1f} … {iv[1]:+.1f} %"
            print(f"| {name} | " + " | ".join(cells) + f" | {(g - 1) * 100:+.1f} % | {ivs} | {verdict} |")
            if name in HEADLINE:
                headline.append(math.log(g))
        else:
            print(f"| {name} | " + " | ".join(cells) + " | — | — | — |")
    if headline:
        rms = math.sqrt(sum(x * x for x in headline) / len(headline))
        within = sum(abs(math.exp(x) - 1) <= 0.10 for x in headline)
        print(f"\nRMS of the {len(headline)} headline log errors (tpmC, run IOPS, what the database"
              f" waited): {(math.exp(rms) - 1) * 100:.1f} %, {within} of {len(headline)} within 10 %")
