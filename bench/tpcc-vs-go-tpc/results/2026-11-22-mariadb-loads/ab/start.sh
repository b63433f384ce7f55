#!/bin/bash
# MariaDB with the bench's settings on port 45123
set -e
dir=/var/tmp/ml-maria
pkill -x mariadbd || true; sleep 2
rm -rf $dir && mkdir -p $dir/data $dir/sock && chown -R mysql:mysql $dir
setpriv --reuid=mysql --regid=mysql --init-groups mariadb-install-db --no-defaults --datadir=$dir/data --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve >/dev/null 2>&1
setpriv --reuid=mysql --regid=mysql --init-groups mariadbd --no-defaults --datadir=$dir/data --socket=$dir/sock/mysqld.sock --port=45123 \
  --bind-address=127.0.0.1 --pid-file=$dir/data/mariadbd.pid --innodb-buffer-pool-size=$((2048<<20)) \
  --max-connections=100 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
  --innodb-flush-method=O_DIRECT --tmpdir=$dir/data "$@" > $dir/server.log 2>&1 &
for i in $(seq 60); do mariadb -h 127.0.0.1 -P 45123 -u root -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
mariadb -h 127.0.0.1 -P 45123 -u root -e 'CREATE DATABASE oltplab'
echo started
