#!/bin/bash
sql=(mariadb -h 127.0.0.1 -P 45123 -u root -N -B -e)
pct="$("${sql[@]}" 'SELECT @@innodb_max_dirty_pages_pct')"
"${sql[@]}" 'SET GLOBAL innodb_max_dirty_pages_pct = 0'
for _ in $(seq 1 600); do
  dirty="$("${sql[@]}" "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'")"
  [ "$dirty" -lt 64 ] && break; sleep 0.2
done
"${sql[@]}" "SET GLOBAL innodb_max_dirty_pages_pct = $pct"
pid=$(pgrep -x mariadbd)
for _ in $(seq 1 60); do
  b=$(awk '{print $14+$15}' /proc/$pid/stat); sleep 2; a=$(awk '{print $14+$15}' /proc/$pid/stat)
  [ $((a-b)) -lt 10 ] && break
done
