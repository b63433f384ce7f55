#!/bin/bash
name=$1; out=/tmp/dk/$name; mkdir -p $out; f=/work/wt/disk/oltplab-data/bench-16k.dat
sleep ${GAP:-20}
if [ "${name%%-*}" = fio ]; then
  fio --name=job --rw=randread --iodepth=32 --ioengine=${ENG:-io_uring} --norandommap --randrepeat=0 --time_based --output-format=json --filename=$f --size=1g --bs=16k --direct=1 --runtime=10 --ramp_time=2 $FIOEXTRA --output=$out/fio.json &
else
  ${OLT:-/work/wt/disk/target/release/oltplab} device $f --size 1g --bs 16k --qd 32 --runtime 10s --ramp 2s --out $out/res $OLTEXTRA > $out/olt.txt &
fi
pid=$!
sleep 4
bpftrace /tmp/dk/blk.bt > $out/bt.txt 2>&1
wait $pid
if [ -f $out/fio.json ]; then python3 -c "
import json;j=json.load(open('$out/fio.json'))['jobs'][0]['read'];p=j['clat_ns']['percentile'];print('$name fio iops %.0f p50 %.0f p99 %.0f'%(j['iops'],p['50.000000']/1e3,p['99.000000']/1e3))"
else python3 -c "
import json;j=json.load(open('$out/res/result.json'));s=j['summary'];print('$name olt iops %.0f p50 %.0f p99 %.0f'%(s['iops'],s['read']['lat_ns']['p50']/1e3,s['read']['lat_ns']['p99']/1e3))"; fi
