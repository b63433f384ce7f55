#!/usr/bin/env bash
# oltplab's TPC-C driver and loader versus go-tpc, side by side in one run: ONE PostgreSQL and ONE
# MariaDB server, started here in temporary directories on private ports with the settings of
# oltplab's managed servers (crates/dbs/src/server/), the same server and settings for both tools.
# Writes every raw output and a summary.md into results/<date>/ (or $1).
# Run from anywhere, as root (the servers run as the postgres / mysql accounts):
#   bench/tpcc-vs-go-tpc/run.sh
#
# For each server engine and each round (ROUNDS, default 2; PARTS=load for step 1 only):
#  1. load WAREHOUSES warehouses with LOAD_THREADS threads: `go-tpc tpcc prepare` into database
#     `gotpc`, `oltplab load tpcc` into database `oltplab` (each tool's own schema; no check after
#     the load for either; wall time from GNU time; the order alternates per round);
#  2. run TERMINALS terminals, no keying/think: a WARMUP s warm-up, then DURATION s measured, on
#     each tool's freshly loaded data; the order of the tools alternates per round. CPU of the
#     driver (GNU time) and of the server (/proc of its process tree) over each whole command;
#  3. `oltplab check tpcc` on oltplab's data after its run (the 12 consistency conditions).
# Every load and run starts on a settled server (see settle below).
# Then SQLite (embedded, so no go-tpc): load, run, tpmC and the driver's share of the CPU.
#
# go-tpc has no warm-up of its own: it runs WARMUP+DURATION(+1) s with --interval 10s, and its
# measured tpmC is its New-Order count in the [Current] intervals after the warm-up (see
# compare.py); its own whole-run [Summary] tpmC is reported too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$here/results/$(date -u +%Y-%m-%d)}"
rounds="${ROUNDS:-2}"
warehouses="${WAREHOUSES:-4}"
terminals="${TERMINALS:-8}"
load_threads="${LOAD_THREADS:-4}"
duration="${DURATION:-60}"         # seconds measured
warmup="${WARMUP:-10}"             # seconds; a multiple of 10 (go-tpc's interval)
buffer_pool_mb="${BUFFER_POOL_MB:-2048}"
engines="${ENGINES:-postgres mariadb sqlite}"
# PARTS=load: only the loads of each round (step 1; no runs, no checks, no SQLite) — many rounds of
# the load comparison in minutes.
parts="${PARTS:-load run}"
# More options for the server runs of oltplab, e.g. OLTPLAB_RUN_ARGS=--procedures (PostgreSQL).
read -r -a oltplab_run_args <<< "${OLTPLAB_RUN_ARGS:-}"
go_tpc_version="${GO_TPC_VERSION:-v1.0.9}"
# The module's hash (go.sum line), so that the build is verified without the checksum database.
go_tpc_sum="${GO_TPC_SUM:-h1:DeFrlVnNzC+SxiRIihNhD9fWHnHhMZWDSFNfUVq67Ys=}"
# Servers run as the postgres/mysql accounts, which must be able to enter this directory.
work="${WORK:-/var/tmp/oltplab-bench-tpcc-vs-go-tpc}"

[ "$(id -u)" -eq 0 ] || { echo "run as root: the servers are started as the postgres and mysql accounts" >&2; exit 2; }
[ $((warmup % 10)) -eq 0 ] || { echo "WARMUP must be a multiple of 10 s (go-tpc reports every 10 s)" >&2; exit 2; }
[ $((duration % 10)) -eq 0 ] || { echo "DURATION must be a multiple of 10 s (go-tpc reports every 10 s)" >&2; exit 2; }
for c in go /usr/bin/time python3 setpriv initdb postgres psql mariadb-install-db mariadbd mariadb; do
  command -v "$c" >/dev/null || { echo "$c is missing (Go: the go toolchain; GNU time: apt-get install time; servers: see scripts/test.sh)" >&2; exit 2; }
done
mkdir -p "$out" "$work"
out="$(cd "$out" && pwd)"
rm -f "$out/loadavg.txt"

# --- go-tpc, built from the Go module proxy (not committed) -----------------------------------
# `go install …@version` asks the proxy for the module's version list (deprecation check), which
# this proxy refuses; a throwaway module that requires the pinned version builds the same binary.
go_tpc="$work/go-tpc-$go_tpc_version/bin/go-tpc"
if [ ! -x "$go_tpc" ]; then
  echo "building go-tpc $go_tpc_version" >&2
  mod="$work/go-tpc-$go_tpc_version/module"
  rm -rf "$mod" && mkdir -p "$mod"
  printf 'module oltplab.bench/gotpc\n\ngo 1.18\n\nrequire github.com/pingcap/go-tpc %s\n' "$go_tpc_version" > "$mod/go.mod"
  echo "github.com/pingcap/go-tpc $go_tpc_version $go_tpc_sum" > "$mod/go.sum"
  (cd "$mod" && GOFLAGS=-mod=mod GONOSUMDB=github.com/pingcap/go-tpc GOPATH="$work/gopath" GOCACHE="$work/gocache" \
    go build -o "$go_tpc" github.com/pingcap/go-tpc/cmd/go-tpc) > "$out/go-tpc-build.log" 2>&1 \
    || { cat "$out/go-tpc-build.log" >&2; exit 1; }
fi

# --- oltplab --------------------------------------------------------------------------------
echo "building oltplab (release)" >&2
(cd "$repo" && cargo build --release --locked -q -p oltplab)
oltplab="$repo/target/release/oltplab"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

{
  echo "# commands of this run ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
  echo "oltplab: $("$oltplab" --version) ($(git -C "$repo" describe --always --dirty))"
  echo "go-tpc: github.com/pingcap/go-tpc $go_tpc_version ($("$go_tpc" version 2>&1 | tr '\n' ' '))"
  echo "go: $(go version)"
  echo "postgres: $(postgres --version); mariadb: $(mariadbd --version)"
  echo "kernel: $(uname -r); cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); cores: $(nproc); memory: $(free -g | awk '/Mem:/{print $2}') GiB"
  echo "rounds=$rounds warehouses=$warehouses terminals=$terminals load_threads=$load_threads warmup_s=$warmup duration_s=$duration buffer_pool_mb=$buffer_pool_mb parts=${parts// /,}"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15-min load average before the run)"
} > "$out/commands.txt"

# Runs a command under GNU time (-v: user/system CPU, wall time, RSS) and, when a server pid is
# given, samples the server's CPU before and after; keeps stdout/stderr/time/server_cpu.
run() { # name, server pid (or -), command…
  local name="$1" spid="$2"; shift 2
  [ "$spid" = - ] || settle
  echo "$*" >> "$out/commands.txt"
  local before=""
  [ "$spid" = - ] || before="$(python3 "$here/proc_cpu.py" "$spid")"
  # The machine's load before and after: other work on it shows here.
  local load_before; load_before="$(cut -d' ' -f1 /proc/loadavg)"
  local rc=0
  /usr/bin/time -v -o "$out/$name.time" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr" || rc=$?
  [ "$spid" = - ] || echo "$before $(python3 "$here/proc_cpu.py" "$spid")" > "$out/$name.server_cpu"
  echo "$name $load_before $(cut -d' ' -f1 /proc/loadavg)" >> "$out/loadavg.txt"
  if [ "$rc" -ne 0 ]; then
    echo "$name failed (exit $rc); see $out/$name.stderr:" >&2
    tail -5 "$out/$name.stderr" >&2
    return "$rc"
  fi
}

# Before each timed command on a server, the server finishes what the previous command left it,
# so that no command pays for its predecessor's work: dirty pages written back (PostgreSQL's
# CHECKPOINT; InnoDB flushes everything while innodb_max_dirty_pages_pct is 0, then the default
# comes back; MariaDB would otherwise flush them when the next load fills its redo log), then
# the server idle (under 5 % of a core for 2 s: InnoDB's purge of a run's old row versions,
# PostgreSQL's autovacuum after a load), at most 2 minutes each.
settle() {
  case "$engine" in
    postgres) psql -h 127.0.0.1 -p "$port" -U oltplab -d postgres -q -c CHECKPOINT ;;
    mariadb)
      local sql=(mariadb -h 127.0.0.1 -P "$port" -u root -N -B -e) pct dirty
      pct="$("${sql[@]}" 'SELECT @@innodb_max_dirty_pages_pct')"
      "${sql[@]}" 'SET GLOBAL innodb_max_dirty_pages_pct = 0'
      for _ in $(seq 1 600); do
        dirty="$("${sql[@]}" "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
          WHERE VARIABLE_NAME = 'INNODB_BUFFER_POOL_PAGES_DIRTY'")"
        [ "$dirty" -lt 64 ] && break
        sleep 0.2
      done
      "${sql[@]}" "SET GLOBAL innodb_max_dirty_pages_pct = $pct" ;;
  esac
  local before after
  for _ in $(seq 1 60); do
    before="$(python3 "$here/proc_cpu.py" "$server_pid")"; sleep 2
    after="$(python3 "$here/proc_cpu.py" "$server_pid")"
    python3 -c "import sys; sys.exit(0 if float('$after') - float('$before') < 0.1 else 1)" && break
  done
}

server_pid=""
server_stop() {
  [ -n "$server_pid" ] || return 0
  # The databases are thrown away: MariaDB need not write its 2 GiB of dirty pages back before it
  # exits (innodb_fast_shutdown=2), which on this disk took minutes and overlapped the next part.
  [ "$1" = TERM ] && mariadb -h 127.0.0.1 -P "$port" -u root -e 'SET GLOBAL innodb_fast_shutdown = 2' 2>/dev/null || true
  # PostgreSQL: SIGINT is a fast shutdown; MariaDB: SIGTERM is a normal one.
  kill "-$1" "$server_pid" 2>/dev/null || true
  # Nothing else runs until the server is gone, so that its shutdown cannot skew the next figures.
  for _ in $(seq 1 6000); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$server_pid" 2>/dev/null; then
    echo "the server (pid $server_pid) did not stop within 10 minutes: killing it" >&2
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}
stop_signal=INT
trap 'server_stop $stop_signal' EXIT
trap 'exit 130' INT TERM

as() { # account, program, args… (the program by its full path: --reset-env resets PATH)
  local account="$1" program; program="$(command -v "$2")"; shift 2
  setpriv --reuid="$account" --regid="$account" --init-groups --reset-env -- "$program" "$@"
}

start_server() { # log file, account, program, args… — in the background; sets server_pid
  local log="$1" account="$2" program; program="$(command -v "$3")"; shift 3
  # setpriv itself in the background (not a function in a subshell), so that $! is the server's
  # own pid once setpriv execs it, and the stop signal reaches the server.
  setpriv --reuid="$account" --regid="$account" --init-groups --reset-env -- "$program" "$@" > "$log" 2>&1 &
  server_pid=$!
}

wait_ready() { # what, command…
  local what="$1"; shift
  for _ in $(seq 1 300); do
    "$@" >/dev/null 2>&1 && return 0
    kill -0 "$server_pid" 2>/dev/null || { echo "$what exited while starting; see its log in $out" >&2; exit 1; }
    sleep 0.1
  done
  echo "$what did not accept connections within 30 s" >&2; exit 1
}

# The settings of oltplab's managed PostgreSQL (crates/dbs/src/server/postgres.rs), with
# shared_buffers = BUFFER_POOL_MB so that both tools' databases stay in memory.
start_postgres() {
  local dir="$work/postgres"
  rm -rf "$dir" && mkdir -p "$dir/sock" && chown -R postgres:postgres "$dir"
  port="$(free_port)"
  as postgres initdb -D "$dir/data" -U oltplab --auth=trust -E UTF8 --no-locale --no-sync --no-instructions \
    > "$out/postgres-initdb.log" 2>&1
  local settings=(-c "port=$port" -c listen_addresses=127.0.0.1 -c "unix_socket_directories=$dir/sock"
    -c unix_socket_permissions=0777 -c "shared_buffers=${buffer_pool_mb}MB" -c max_connections=100
    -c logging_collector=off -c log_destination=stderr)
  echo "postgres -D $dir/data ${settings[*]}" >> "$out/commands.txt"
  start_server "$out/postgres-server.log" postgres postgres -D "$dir/data" "${settings[@]}"
  stop_signal=INT
  wait_ready PostgreSQL psql -h 127.0.0.1 -p "$port" -U oltplab -d postgres -c 'SELECT 1'
  psql -h 127.0.0.1 -p "$port" -U oltplab -d postgres -q -c 'CREATE DATABASE oltplab'
  psql -h 127.0.0.1 -p "$port" -U oltplab -d postgres -A -c 'SELECT version()' -c \
    "SELECT name, setting, unit FROM pg_settings WHERE name IN ('shared_buffers','max_connections','fsync','synchronous_commit','wal_sync_method','full_page_writes','wal_level','max_wal_size','checkpoint_timeout','default_transaction_isolation')" \
    > "$out/postgres-settings.txt"
  oltplab_url="postgres://oltplab@127.0.0.1:$port/oltplab"
  go_tpc_conn=(-d postgres -H 127.0.0.1 -P "$port" -U oltplab -D gotpc --conn-params sslmode=disable)
}

# The settings of oltplab's managed MariaDB (crates/dbs/src/server/mariadb.rs): O_DIRECT, utf8mb4,
# innodb_buffer_pool_size = BUFFER_POOL_MB.
start_mariadb() {
  local dir="$work/mariadb"
  rm -rf "$dir" && mkdir -p "$dir/data" "$dir/sock" && chown -R mysql:mysql "$dir"
  port="$(free_port)"
  as mysql mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db --skip-name-resolve > "$out/mariadb-install-db.log" 2>&1
  local settings=(--no-defaults --datadir="$dir/data" --socket="$dir/sock/mysqld.sock" --port="$port"
    --bind-address=127.0.0.1 --pid-file="$dir/data/mariadbd.pid" --innodb-buffer-pool-size=$((buffer_pool_mb << 20))
    --max-connections=100 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci
    --innodb-flush-method=O_DIRECT --tmpdir="$dir/data")
  echo "mariadbd ${settings[*]}" >> "$out/commands.txt"
  start_server "$out/mariadb-server.log" mysql mariadbd "${settings[@]}"
  stop_signal=TERM
  wait_ready MariaDB mariadb -h 127.0.0.1 -P "$port" -u root -e 'SELECT 1'
  mariadb -h 127.0.0.1 -P "$port" -u root -e 'CREATE DATABASE oltplab'
  mariadb -h 127.0.0.1 -P "$port" -u root -e "SELECT VERSION(); SHOW GLOBAL VARIABLES WHERE Variable_name IN \
    ('innodb_buffer_pool_size','innodb_flush_method','innodb_flush_log_at_trx_commit','innodb_doublewrite',\
    'innodb_log_file_size','log_bin','sync_binlog','max_connections','transaction_isolation')" \
    > "$out/mariadb-settings.txt"
  oltplab_url="mysql://root@127.0.0.1:$port/oltplab"
  go_tpc_conn=(-d mysql -H 127.0.0.1 -P "$port" -U root -D gotpc)
}

for engine in $engines; do
  case "$engine" in
    postgres) start_postgres ;;
    mariadb) start_mariadb ;;
    sqlite) continue ;;
    *) echo "unknown engine '$engine' in ENGINES (postgres, mariadb, sqlite)" >&2; exit 2 ;;
  esac
  for r in $(seq 1 "$rounds"); do
    echo "$engine round $r/$rounds: loading $warehouses warehouses with each tool" >&2
    gotpc_load() {
      run "$engine-load-gotpc-$r" "$server_pid" "$go_tpc" tpcc prepare "${go_tpc_conn[@]}" \
        --warehouses "$warehouses" -T "$load_threads" --dropdata --no-check
    }
    oltplab_load() {
      run "$engine-load-oltplab-$r" "$server_pid" "$oltplab" load tpcc --url "$oltplab_url" \
        --warehouses "$warehouses" --threads "$load_threads" --no-check --force
    }
    # Each tool loads first in every other round, like the runs below.
    if [ $((r % 2)) -eq 1 ]; then gotpc_load; oltplab_load; else oltplab_load; gotpc_load; fi
    gotpc_run() {
      echo "$engine round $r/$rounds: go-tpc run" >&2
      run "$engine-run-gotpc-$r" "$server_pid" "$go_tpc" tpcc run "${go_tpc_conn[@]}" \
        --warehouses "$warehouses" -T "$terminals" --time "$((warmup + duration + 1))s" --interval 10s
    }
    oltplab_run() {
      echo "$engine round $r/$rounds: oltplab run" >&2
      rm -rf "$out/$engine-run-oltplab-$r"
      run "$engine-run-oltplab-$r" "$server_pid" "$oltplab" run tpcc --url "$oltplab_url" \
        --terminals "$terminals" --warmup "${warmup}s" --duration "${duration}s" \
        ${oltplab_run_args[@]+"${oltplab_run_args[@]}"} --out "$out/$engine-run-oltplab-$r"
      run "$engine-check-oltplab-$r" - "$oltplab" check tpcc --url "$oltplab_url" || true  # in summary.md
    }
    [[ " $parts " == *" run "* ]] || continue
    if [ $((r % 2)) -eq 1 ]; then gotpc_run; oltplab_run; else oltplab_run; gotpc_run; fi
  done
  server_stop "$stop_signal"
done

if [[ " $engines " == *" sqlite "* && " $parts " == *" run "* ]]; then
  echo "sqlite: loading $warehouses warehouses, then one run" >&2
  rm -rf "$work/sqlite" && mkdir -p "$work/sqlite"
  run "sqlite-load-oltplab-1" - "$oltplab" load tpcc --url "sqlite:$work/sqlite/tpcc.sqlite" \
    --warehouses "$warehouses" --threads "$load_threads" --no-check
  rm -rf "$out/sqlite-run-oltplab-1"
  run "sqlite-run-oltplab-1" - "$oltplab" run tpcc --url "sqlite:$work/sqlite/tpcc.sqlite" \
    --terminals "$terminals" --warmup "${warmup}s" --duration "${duration}s" --out "$out/sqlite-run-oltplab-1"
  run "sqlite-check-oltplab-1" - "$oltplab" check tpcc --url "sqlite:$work/sqlite/tpcc.sqlite" || true
fi

python3 "$here/compare.py" "$out" | tee "$out/summary.md"
rm -rf "$work/postgres" "$work/mariadb" "$work/sqlite"
