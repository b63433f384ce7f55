#!/usr/bin/env python3
"""Whether a trace's slow I/Os come together in time (a device that pauses) or one by one.

usage: bunching.py TRACE... (oltplab traces, format version 2: docs/trace.md)

For each trace, in the window FROM_S..FROM_S+WINDOW_S seconds (the trace fit's: 25..35 s): the
slowest 5 % of reads, of writes and of syncs (by the latency the trace records: the device's, as
the shim timed it on a real disk or the model's under emulation) are "slow". Each I/O is placed at
the middle of its time in the device, and time is cut into 2 ms bins. Printed: the share of slow
I/Os that fall in bins of at least 8 I/Os where most I/Os are slow (as `oltplab devices fit
--trace` reports it), and the same share when the slow flags are
shuffled among the window's I/Os (what slowness that strikes I/Os one by one would give on the
same load). Then, of the slow moments (bins of at least 8 I/Os, mostly slow) against the other
bins: the I/Os per bin, the median I/O's latency over its class's median (`oltplab devices fit
--trace`'s "slowdown"), the mean run of consecutive slow moments, and the share of bins that
are slow moments. A device that stops in its slow moments has few I/Os in them, each waiting
out the stop; one that slows keeps a share of its I/Os, each a few times its usual time.
"""
import random
import struct
import sys

FROM_S, WINDOW_S, BIN_MS, SLOW_SHARE, MIN_IOS = 25.0, 10.0, 2.0, 0.05, 8
RECORD = struct.Struct("<QIIQIHBB")


def records(path):
    """(submit ns, latency ns, op) of every record of a version-2 trace."""
    b = open(path, "rb").read()
    at, out = 64, []
    while at + 16 <= len(b) and b[at:at + 4] == b"OLTC":
        kind, n = b[at + 4], struct.unpack_from("<I", b, at + 8)[0]
        if kind in (3, 6):
            size = 36 if kind == 6 else 32
            for i in range(at + 16, at + 16 + n, size):
                t, lat, _len, _off, _tid, _fid, op, _tag = RECORD.unpack_from(b, i)
                out.append((t, lat, op))
        at += 16 + n
    return out


def share_in_slow_bins(bins, slow):
    """Of the slow I/Os, the share in bins of at least MIN_IOS I/Os that are mostly slow."""
    n, s = {}, {}
    for b, f in zip(bins, slow):
        n[b] = n.get(b, 0) + 1
        s[b] = s.get(b, 0) + f
    total = sum(s.values())
    return sum(v for b, v in s.items() if n[b] >= MIN_IOS and v > n[b] / 2) / total if total else 0.0


def slow_moments(ios, slow, bins):
    """(median I/Os per slow moment, per other bin, the slow moments' slowdown, their mean run, share of bins)."""
    import statistics
    med = {}
    for c in range(3):
        lats = sorted(io[1] for io in ios if io[2] == c)
        if lats:
            med[c] = lats[len(lats) // 2]
    n, s, ratio = {}, {}, {}
    for io, b, f in zip(ios, bins, slow):
        n[b] = n.get(b, 0) + 1
        s[b] = s.get(b, 0) + f
        ratio.setdefault(b, []).append(io[1] / med[io[2]])
    nbins = int(WINDOW_S * 1e3 / BIN_MS)
    moment = {b for b in n if n[b] >= MIN_IOS and s[b] > n[b] / 2 and 0 <= b < nbins}
    others = [n.get(b, 0) for b in range(nbins) if b not in moment]
    runs = sum(1 for b in moment if b - 1 not in moment)
    return (statistics.median([n[b] for b in moment]) if moment else 0,
            statistics.median(others) if others else 0,
            statistics.median([r for b in moment for r in ratio[b]]) if moment else 1.0,
            len(moment) / runs if runs else 0.0,
            len(moment) / nbins)


def bunching(path):
    lo, hi = FROM_S * 1e9, (FROM_S + WINDOW_S) * 1e9
    ios = [(t, lat, min(op, 2)) for t, lat, op in records(path) if op <= 3 and lo <= t < hi]
    slow = [False] * len(ios)
    for c in range(3):
        idx = [i for i, io in enumerate(ios) if io[2] == c]
        if not idx:
            continue
        lats = sorted(ios[i][1] for i in idx)
        cut = lats[int(len(lats) * (1 - SLOW_SHARE))]
        for i in idx:
            slow[i] = ios[i][1] >= cut
    bins = [int((t + lat / 2 - lo) // (BIN_MS * 1e6)) for t, lat, _ in ios]
    shuffled = slow[:]
    random.Random(1).shuffle(shuffled)
    return (len(ios), share_in_slow_bins(bins, slow), share_in_slow_bins(bins, shuffled),
            slow_moments(ios, slow, bins))


if __name__ == "__main__":
    print(f"window {FROM_S:.0f}-{FROM_S + WINDOW_S:.0f} s, {BIN_MS:.0f} ms bins, slow = each class's slowest {SLOW_SHARE:.0%}")
    print("trace | I/Os | slow I/Os in mostly-slow bins | the same, slowness shuffled"
          " | I/Os per slow moment | per other bin | slowdown | slow moments in a row"
          " | bins that are slow moments")
    for path in sys.argv[1:]:
        n, real, shuffled, (in_moment, other, slowdown, run, share) = bunching(path)
        print(f"{path.rsplit('/', 1)[-1]} | {n:,} | {real:.1%} | {shuffled:.1%} | {in_moment:g}"
              f" | {other:g} | {slowdown:.2f} | {run:.2f} | {share:.1%}")
