# A/B of the README's quick SQLite study: /work/wtab = 91ef669 (margin from the whole overshoot), /work/main = a25a9bd + the queue read after the deadline (margin from the timer's overshoot alone); alternated twice, quiet machine; bench/emulator-timing/tails.py on each results.json.
# (The first A/B, first-7b4c4ad/tails.txt, ran the same script with /work/main at 7b4c4ad.)
set -e
for round in 1 2; do
 for side in old new; do
  bin=/work/main/target/release/oltplab; [ $side = old ] && bin=/work/wtab/target/release/oltplab
  d=$(mktemp -d /var/tmp/qs.XXXXXX); cd $d
  $bin study --scale quick --out $d/out > $d/log 2>&1
  echo "== round $round $side load $(cut -d' ' -f1 /proc/loadavg)"; python3 /work/main/bench/emulator-timing/tails.py $d/out/results.json | grep -v host
  cp $d/out/results.json /var/tmp/sqab/round$round-$side.results.json; cd /; rm -rf $d
 done
done
