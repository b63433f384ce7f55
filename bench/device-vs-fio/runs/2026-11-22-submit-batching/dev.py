import sys,re,glob,json,os
def stats(n):
    t=open(f'/tmp/dk/{n}/bt.txt').read()
    m=re.search(r'@dev_us: \n((?:\[.*\n)+)',t)
    rows=[]
    for l in m.group(1).splitlines():
        mm=re.match(r'\[(\d+), (?:\d+|\.\.\.)\)\s+(\d+)',l) or re.match(r'\[(\d+), \.\.\.\)\s+(\d+)',l)
        if mm: rows.append((int(mm.group(1)),int(mm.group(2))))
    tot=sum(c for _,c in rows); acc=0; p50=None
    for lo,c in rows:
        acc+=c
        if p50 is None and acc>=tot/2: p50=lo+50
    mean=sum((lo+50)*c for lo,c in rows if lo<3000)/max(1,sum(c for lo,c in rows if lo<3000))
    sub=re.search(r'@to_submit\[(?:fio|oltplab-job0)\]: \n((?:\[.*\n)+)',t).group(1)
    big=sum(int(x) for x in re.findall(r'^\[(?:[4-9]|[1-9]\d), \d+\)\s+(\d+)',sub,re.M))
    ent=sum(int(x) for x in re.findall(r'^\[\d+, (?:\d+|\.\.\.)\)\s+(\d+)',sub,re.M))
    return p50,mean,big,ent
for n in sys.argv[1:]:
    p50,mean,big,ent=stats(n)
    if os.path.exists(f'/tmp/dk/{n}/fio.json'):
        j=json.load(open(f'/tmp/dk/{n}/fio.json'))['jobs'][0]['read']; iops=j['iops']; lp50=j['clat_ns']['percentile']['50.000000']/1e3
    else:
        s=json.load(open(f'/tmp/dk/{n}/res/result.json'))['summary']; iops=s['iops']; lp50=s['read']['lat_ns']['p50']/1e3
    print(f'{n:22s} iops {iops:7.0f} p50 {lp50:5.0f}us | device(issue->complete) p50~{p50} mean~{mean:.0f}us | enters with >=4 SQEs: {big}/{ent}')
