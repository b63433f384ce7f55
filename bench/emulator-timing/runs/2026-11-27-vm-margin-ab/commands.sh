# A/B of the quick MariaDB study: /work/wtab = 91ef669 (margin from the whole overshoot), /work/main = margin from the timer's overshoot alone; alternated twice; tails.py prints each device's p99s and spin from results.json.
# (/tmp/tails.py was bench/emulator-timing/tails.py.)
set -e
for round in 1 2; do
 for side in old new; do
  bin=/work/main/target/release/oltplab; [ $side = old ] && bin=/work/wtab/target/release/oltplab
  d=$(mktemp -d /var/tmp/qs.XXXXXX); chmod 711 $d; cd $d
  $bin study --scale quick --engine mariadb --out $d/out > $d/log 2>&1
  echo "== round $round $side load $(cut -d' ' -f1 /proc/loadavg)"; python3 /tmp/tails.py $d/out/results.json | grep -v host
  cp $d/out/results.json /var/tmp/qsab/round$round-$side.results.json; cd /; rm -rf $d
 done
done
