#!/usr/bin/env python3
"""Refill timing from block:block_rq_issue events (perf record -e block:block_rq_issue -a): issues
less than 40 us apart form one refill burst; prints burst sizes, how long a burst of >= 8 takes,
and the time from one burst start to the next (the round). Usage: refill.py PERF.DATA..."""
import sys,subprocess,statistics as st
for f in sys.argv[1:]:
    out=subprocess.run(['perf','script','-i',f,'-F','time,event'],capture_output=True,text=True).stdout
    ts=sorted(float(l.split()[0].rstrip(':')) for l in out.splitlines() if 'rq_issue' in l)
    bursts=[]; cur=[ts[0]]
    for t in ts[1:]:
        if t-cur[-1]>40e-6: bursts.append(cur); cur=[]
        cur.append(t)
    bursts.append(cur)
    big=[b for b in bursts if len(b)>=8]
    size=[len(b) for b in bursts]; dur=[(b[-1]-b[0])*1e6 for b in big]
    per=[(bursts[i+1][0]-bursts[i][0])*1e6 for i in range(len(bursts)-1)]
    q=lambda v:(round(st.median(v),1), round(sorted(v)[int(len(v)*0.1)],1), round(sorted(v)[int(len(v)*0.9)],1))
    span=ts[-1]-ts[0]
    print(f"{f}: issues {len(ts)} in {span:.2f}s = {len(ts)/span:.0f}/s; bursts {len(bursts)}; size med/p10/p90 {q(size)}; "
          f"share of issues in bursts>=8: {sum(len(b) for b in big)/len(ts):.2f}; duration of bursts>=8 us {q(dur)}; start-to-start us {q(per)}")
