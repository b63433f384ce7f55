#!/bin/bash
# ab.sh TAG ROUNDS : alternating runs, prints one line per run
tag=$1
for r in $(seq 1 $2); do
  for v in $VARIANTS; do
    case $v in
      olt) ./trace.sh olt-$tag-$v-$r ;;
      olteach) OLTPLAB_SUBMIT_EACH=1 ./trace.sh olt-$tag-$v-$r ;;
      fio) ./trace.sh fio-$tag-$v-$r ;;
      fiobatch) FIOEXTRA="--iodepth_batch_submit=32 --iodepth_batch_complete_min=1" ./trace.sh fio-$tag-$v-$r ;;
      fiolibaio) ENG=libaio ./trace.sh fio-$tag-$v-$r ;;
    esac 2>&1 | grep iops
  done
done
