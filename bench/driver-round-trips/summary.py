import json,sys,glob,os,statistics as st,re
# per engine and binary: tpmC, driver share, driver and server CPU-s per 1000 New-Orders (medians)
rows={}
for f in sorted(glob.glob(sys.argv[1]+"/*.json")):
    name=os.path.basename(f)[:-5]
    m=re.match(r"(\w+)-([\w-]+)-(\d+)$",name)
    d=json.load(open(f)); s=d["summary"]; c=s["cpu"]
    no=s["tx"]["new_order"]["count"] if "tx" in s and "new_order" in s["tx"] else s["tpmc"]*d["config"].get("duration_s",30)/60
    drv=c["driver_user_s"]+c["driver_sys_s"]; db=c["db_user_s"]+c["db_sys_s"]
    rows.setdefault((m.group(1),m.group(2)),[]).append((s["tpmc"],100*c["driver_share"],1000*drv/no,1000*db/no,c["utilisation"],int(m.group(3))))
for (e,b),v in sorted(rows.items()):
    med=lambda i: st.median(x[i] for x in v)
    print(f"{e:9s} {b:16s} n={len(v)} tpmC {med(0):8.0f} [{', '.join(f'{x[0]:.0f}' for x in v)}]  driver share {med(1):4.1f} % [{', '.join(f'{x[1]:.1f}' for x in v)}]  driver CPU-s/1000 NO {med(2):.3f}  server CPU-s/1000 NO {med(3):.3f}  util {med(4):.2f}")
