#!/usr/bin/env python3
# tails.py RESULTS.json: per emulated device of a study, the model p99, the emulated and realised
# p99 against it, the spin (share of the machine, of a core, per 10k IOPS), the share of I/Os late
# only by the CPU queue, and tpmC — the A/B figures of this directory's runs.
import json,sys
d=json.load(open(sys.argv[1]))
for dev in d['summary'].get('devices',[]):
    f=dev.get('run_fidelity') or {}
    if not f or not f.get('ios'): 
        print(f"{dev['name']:16} (host)"); continue
    m=f['modelled_lat_ns_p99']; r=f['realised_lat_ns_p99']; e=f.get('emulated_lat_ns_p99',r)
    ios=f['ios']; w=f.get('window_s',0) or 1
    iops=ios/w
    spin=f.get('spin_machine_pct',0)
    spin_core_pct=spin*2  # of one core on 2 cores
    print(f"{dev['name']:16} model p99 {m/1e3:8.1f}us  emulated {100*(e/m-1):+6.1f}%  realised {100*(r/m-1):+6.1f}%  spin {spin:5.2f}% machine = {spin_core_pct:5.2f}% core at {iops:7.0f} IOPS -> {spin_core_pct/(iops/1e4) if iops else 0:5.2f}% core/10k IOPS  cpuq-late {f.get('cpu_queue_late_pct',0):4.1f}%  tpmC {dev.get('tpmc',0):.0f}")
