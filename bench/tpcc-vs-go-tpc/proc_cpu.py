#!/usr/bin/env python3
"""CPU seconds (user + system) used so far by a process and all its descendants, from /proc:
utime + stime of each live process of the tree plus cutime + cstime (children it has reaped, such
as PostgreSQL backends that have exited). Usage: proc_cpu.py PID"""
import os
import sys

HZ = os.sysconf("SC_CLK_TCK")


def stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        text = f.read()
    # The command name may hold spaces or parentheses: split after its closing parenthesis.
    fields = text[text.rindex(")") + 2:].split()
    ppid = int(fields[1])
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return ppid, ticks


def main():
    root = int(sys.argv[1])
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                procs[int(name)] = stat(name)
            except (OSError, ValueError):
                pass  # exited while we looked
    total = 0
    for pid, (ppid, ticks) in procs.items():
        p = pid
        while p and p != root:
            p = procs.get(p, (0, 0))[0]
        if p == root:
            total += ticks
    print(f"{total / HZ:.2f}")


main()
