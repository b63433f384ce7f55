#!/usr/bin/env python3
"""Summary (Markdown) of a bench/tpcc-vs-go-tpc run directory: load times, tpmC and CPU per engine,
round and tool, then medians and ratios. Usage: compare.py RUN_DIR"""
import json
import os
import re
import statistics
import sys

out = sys.argv[1]


def read(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def gnu_time(name):
    """(user + system CPU seconds, wall seconds) from GNU time -v."""
    text = read(name + ".time")
    if not text or "User time" not in text:
        return None  # not run (yet)
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1))
    system = float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", text).group(1)
    secs = 0.0
    for part in wall.split(":"):
        secs = secs * 60 + float(part)
    return user + system, secs


def server_cpu(name):
    text = read(name + ".server_cpu")
    if text is None:
        return None
    before, after = (float(x) for x in text.split())
    return after - before


def go_tpc_run(name, commands):
    """go-tpc's New-Order and all-type counts per [Current] interval, and its [Summary] tpmC."""
    text = read(name + ".stdout") or ""
    blocks, last_op = [], None
    for line in text.splitlines():
        m = re.match(r"\[Current\] (\S+) - Takes\(s\): [\d.]+, Count: (\d+)", line)
        if not m:
            continue
        op, count = m.group(1), int(m.group(2))
        # Each interval prints its operations in name order: a name not after the last one
        # starts the next interval.
        if last_op is None or op <= last_op:
            blocks.append({})
        blocks[-1][op] = count
        last_op = op
    m = re.search(r"tpmC: ([\d.]+), tpmTotal: ([\d.]+)", text)
    summary_tpmc = float(m.group(1)) if m else None
    warmup_blocks = commands["warmup_s"] // 10
    measured = blocks[warmup_blocks:warmup_blocks + commands["duration_s"] // 10]
    minutes = len(measured) * 10 / 60
    no = sum(b.get("NEW_ORDER", 0) for b in measured)
    total = sum(c for b in measured for op, c in b.items() if not op.endswith("_ERR"))
    errors = sum(c for b in measured for op, c in b.items() if op.endswith("_ERR"))
    return {
        "tpmc": no / minutes if minutes else None,
        "tpm_total": total / minutes if minutes else None,
        "errors": errors,
        "intervals": len(measured),
        "summary_tpmc": summary_tpmc,
    }


def oltplab_run(name):
    text = read(os.path.join(name, "result.json"))
    if text is None:
        return None
    s = json.loads(text)["summary"]
    no = s["tx"]["new_order"]
    return {
        "tpmc": s["tpmc"],
        "tpm_total": s["tpm_total"],
        "errors": sum(t["errors"] for t in s["tx"].values()),
        "rollbacks": no["rollbacks"],
        "new_orders": no["count"],
        "cpu": s["cpu"],
    }


def check_ok(name):
    """True when `oltplab check` printed its conditions (on stderr) and none is violated."""
    text = read(name + ".stderr")
    if text is None:
        return None
    return "consistency conditions" in text and "VIOLATED" not in text


def commands_settings():
    text = read("commands.txt") or ""
    m = re.search(r"rounds=(\d+) warehouses=(\d+) terminals=(\d+) load_threads=(\d+) warmup_s=(\d+) duration_s=(\d+)", text)
    keys = ["rounds", "warehouses", "terminals", "load_threads", "warmup_s", "duration_s"]
    return dict(zip(keys, (int(g) for g in m.groups())))


def fmt(v, digits=0):
    if v is None:
        return "—"
    return f"{v:,.{digits}f}"


def ratio(a, b):
    return a / b if a and b else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


cfg = commands_settings()
print(f"# oltplab vs go-tpc, TPC-C: {cfg['warehouses']} warehouses, {cfg['terminals']} terminals, "
      f"{cfg['warmup_s']} s warm-up + {cfg['duration_s']} s measured, loads with {cfg['load_threads']} threads\n")
print("CPU figures are over each whole command (driver: GNU time of its process; server: /proc of its "
      "process tree), so they include the warm-up and connection set-up of both tools alike.\n")

medians = []
for engine in ("postgres", "mariadb"):
    rows = []
    for r in range(1, cfg["rounds"] + 1):
        lg, lo = gnu_time(f"{engine}-load-gotpc-{r}"), gnu_time(f"{engine}-load-oltplab-{r}")
        if lg is None and lo is None:
            continue
        g = go_tpc_run(f"{engine}-run-gotpc-{r}", cfg)
        o = oltplab_run(f"{engine}-run-oltplab-{r}")
        tg, to = gnu_time(f"{engine}-run-gotpc-{r}"), gnu_time(f"{engine}-run-oltplab-{r}")
        sg, so = server_cpu(f"{engine}-run-gotpc-{r}"), server_cpu(f"{engine}-run-oltplab-{r}")
        rows.append({
            "round": r,
            "load_gotpc_s": lg[1] if lg else None,
            "load_oltplab_s": lo[1] if lo else None,
            "tpmc_gotpc": g["tpmc"],
            "tpmc_gotpc_summary": g["summary_tpmc"],
            "tpmc_oltplab": o["tpmc"] if o else None,
            "tpm_total_gotpc": g["tpm_total"],
            "tpm_total_oltplab": o["tpm_total"] if o else None,
            "errors_gotpc": g["errors"],
            "errors_oltplab": o["errors"] if o else None,
            "rollbacks_oltplab": o["rollbacks"] if o else None,
            "driver_cpu_gotpc": tg[0] if tg else None,
            "driver_cpu_oltplab": to[0] if to else None,
            "server_cpu_gotpc": sg,
            "server_cpu_oltplab": so,
            "check": check_ok(f"{engine}-check-oltplab-{r}"),
            "load_client_cpu_gotpc": lg[0] if lg else None,
            "load_client_cpu_oltplab": lo[0] if lo else None,
            "load_server_cpu_gotpc": server_cpu(f"{engine}-load-gotpc-{r}"),
            "load_server_cpu_oltplab": server_cpu(f"{engine}-load-oltplab-{r}"),
        })
    if not rows:
        continue
    print(f"## {engine}\n")
    speedups = [ratio(x["load_gotpc_s"], x["load_oltplab_s"]) for x in rows]
    speedups = [v for v in speedups if v is not None]
    if all(x["tpmc_gotpc"] is None and x["tpmc_oltplab"] is None for x in rows):
        # PARTS=load: the loads alone, with the CPU each side spent on them.
        print("| round | load go-tpc (s) | load oltplab (s) | load speed-up | client CPU go-tpc (s) "
              "| client CPU oltplab (s) | server CPU go-tpc (s) | server CPU oltplab (s) |")
        print("|---|---|---|---|---|---|---|---|")
        for x in rows:
            print(f"| {x['round']} | {fmt(x['load_gotpc_s'], 1)} | {fmt(x['load_oltplab_s'], 1)} "
                  f"| {fmt(ratio(x['load_gotpc_s'], x['load_oltplab_s']), 2)}× "
                  f"| {fmt(x['load_client_cpu_gotpc'], 2)} | {fmt(x['load_client_cpu_oltplab'], 2)} "
                  f"| {fmt(x['load_server_cpu_gotpc'], 2)} | {fmt(x['load_server_cpu_oltplab'], 2)} |")
        print()
        if speedups:
            print(f"Load speed-up over the {len(speedups)} rounds: median of the per-round ratios "
                  f"{statistics.median(speedups):.2f}×, mean {statistics.mean(speedups):.2f}×, "
                  f"lowest {min(speedups):.2f}×, highest {max(speedups):.2f}×.\n")
        m = {k: median(x[k] for x in rows) for k in rows[0] if k not in ("round", "check")}
        medians.append((engine, m))
        continue
    print("| round | load go-tpc (s) | load oltplab (s) | load speed-up | tpmC go-tpc | tpmC oltplab | tpmC ratio "
          "| driver CPU go-tpc (s) | driver CPU oltplab (s) | server CPU go-tpc (s) | server CPU oltplab (s) "
          "| driver share go-tpc | driver share oltplab | oltplab check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for x in rows:
        share = lambda d, s: f"{100 * d / (d + s):.0f} %" if d is not None and s is not None else "—"
        print(f"| {x['round']} | {fmt(x['load_gotpc_s'], 1)} | {fmt(x['load_oltplab_s'], 1)} "
              f"| {fmt(ratio(x['load_gotpc_s'], x['load_oltplab_s']), 2)}× "
              f"| {fmt(x['tpmc_gotpc'])} | {fmt(x['tpmc_oltplab'])} | {fmt(ratio(x['tpmc_oltplab'], x['tpmc_gotpc']), 2)}× "
              f"| {fmt(x['driver_cpu_gotpc'], 1)} | {fmt(x['driver_cpu_oltplab'], 1)} "
              f"| {fmt(x['server_cpu_gotpc'], 1)} | {fmt(x['server_cpu_oltplab'], 1)} "
              f"| {share(x['driver_cpu_gotpc'], x['server_cpu_gotpc'])} | {share(x['driver_cpu_oltplab'], x['server_cpu_oltplab'])} "
              f"| {'holds' if x['check'] else ('—' if x['check'] is None else 'VIOLATED')} |")
    print()
    print("Also per round: go-tpc's own whole-run [Summary] tpmC (warm-up included) "
          + ", ".join(fmt(x["tpmc_gotpc_summary"]) for x in rows)
          + "; tpmTotal go-tpc " + ", ".join(fmt(x["tpm_total_gotpc"]) for x in rows)
          + ", oltplab " + ", ".join(fmt(x["tpm_total_oltplab"]) for x in rows)
          + "; failed transactions go-tpc " + ", ".join(str(x["errors_gotpc"]) for x in rows)
          + ", oltplab " + ", ".join(str(x["errors_oltplab"]) for x in rows)
          + "; oltplab's New-Order rollbacks (counted in tpmC by both tools) "
          + ", ".join(str(x["rollbacks_oltplab"]) for x in rows) + ".\n")
    if speedups:
        print(f"Load speed-up per round: median {statistics.median(speedups):.2f}×, mean "
              f"{statistics.mean(speedups):.2f}×, lowest {min(speedups):.2f}×, highest {max(speedups):.2f}×.\n")
    m = {k: median(x[k] for x in rows) for k in rows[0] if k not in ("round", "check")}
    medians.append((engine, m))

if medians:
    print("## Medians over the rounds\n")
    print("| engine | load go-tpc (s) | load oltplab (s) | load speed-up (target ≥ 2×) | tpmC go-tpc | tpmC oltplab "
          "| tpmC ratio (target ≥ 1.0×, goal 1.2×) | driver CPU-s per 1,000 New-Orders go-tpc | oltplab |")
    print("|---|---|---|---|---|---|---|---|---|")
    minutes = cfg["duration_s"] / 60
    for engine, m in medians:
        per = lambda cpu, tpmc: cpu / (tpmc * (cfg["duration_s"] + cfg["warmup_s"]) / 60) * 1000 if cpu and tpmc else None
        print(f"| {engine} | {fmt(m['load_gotpc_s'], 1)} | {fmt(m['load_oltplab_s'], 1)} "
              f"| **{fmt(ratio(m['load_gotpc_s'], m['load_oltplab_s']), 2)}×** "
              f"| {fmt(m['tpmc_gotpc'])} | {fmt(m['tpmc_oltplab'])} | **{fmt(ratio(m['tpmc_oltplab'], m['tpmc_gotpc']), 2)}×** "
              f"| {fmt(per(m['driver_cpu_gotpc'], m['tpmc_gotpc']), 2)} | {fmt(per(m['driver_cpu_oltplab'], m['tpmc_oltplab']), 2)} |")
    print()

sq = oltplab_run("sqlite-run-oltplab-1")
if sq:
    lt = gnu_time("sqlite-load-oltplab-1")
    cpu = sq["cpu"]
    print("## SQLite (embedded; oltplab only)\n")
    print("| load (s) | tpmC | tpmTotal | driver share of CPU | database CPU (s) | driver CPU (s) | check |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {fmt(lt[1] if lt else None, 1)} | {fmt(sq['tpmc'])} | {fmt(sq['tpm_total'])} "
          f"| {100 * cpu['driver_share']:.1f} % | {fmt(cpu['db_user_s'] + cpu['db_sys_s'], 1)} "
          f"| {fmt(cpu['driver_user_s'] + cpu['driver_sys_s'], 1)} "
          f"| {'holds' if check_ok('sqlite-check-oltplab-1') else 'VIOLATED'} |")
    print()

loads = read("loadavg.txt")
if loads:
    print("1-minute load average of the machine before → after each command (2 cores; above ~2 means "
          "other work competed with the run):\n")
    print("; ".join(f"{n} {a} → {b}" for n, a, b in (line.split() for line in loads.splitlines())) + "\n")
