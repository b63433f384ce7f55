#!/usr/bin/env bash
# Installs what oltplab's tests need on a fresh Debian machine (fio, util-linux for loop devices),
# then checks formatting and lints and runs every test. This is the README's test command; .ci/run
# calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
# need COMMAND PACKAGE: install PACKAGE from Debian's packages unless COMMAND is found.
need() { command -v "$1" >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/"$1" >/dev/null 2>&1 || missing+=("$2"); }
need fio fio
need losetup mount
need chromium chromium
need initdb postgresql
need mariadbd mariadb-server
# The managed Galera cluster's certificates (galera-4 comes with mariadb-server).
need openssl openssl
# scripts/module-cycles.py, which tests/e2e/module_cycles.rs runs.
need python3 python3
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "scripts/test.sh: installing ${missing[*]} from Debian's packages"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "scripts/test.sh: cargo is missing: install a stable Rust toolchain with rustup, then run this again" >&2
  exit 2
fi

# Everything the tests need is installed now: a test whose package, server or browser is missing
# fails, not skips (oltplab_core::testing::skip). What installing cannot give — root, a kernel
# feature — is skipped, and every skip is appended to $OLTPLAB_SKIP_LOG, counted and named below.
export OLTPLAB_REQUIRE_ALL=1

# Under CI (CI set) a skip fails the run unless its test is on this allow-list, for a capability
# CI's machine may legitimately lack even as root. One entry per line: "binary::test need", with
# why it may be missing. Root is never on it: CI runs as root.
ci_allowed=(
  # Containers usually have no loop driver or loop devices; losetup fails even for root.
  "device::a_block_device_is_read_but_never_written_without_force kernel"
  # Containers without CAP_SYS_ADMIN cannot mount, even as root.
  "device::a_file_system_without_direct_io_gets_a_hint_to_use_buffered kernel"
  # kernel.io_uring_disabled exists from Linux 6.6; in a container /proc/sys is read-only.
  "io_uring_fallback::without_io_uring_it_falls_back_to_psync_with_a_warning kernel"
)

cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
log=$(mktemp)
OLTPLAB_SKIP_LOG=$(mktemp)
export OLTPLAB_SKIP_LOG
trap 'rm -f "$log" "$OLTPLAB_SKIP_LOG"' EXIT
status=0
cargo test --workspace --locked 2>&1 | tee "$log" || status=$?

# The summary: libtest counts a skipped test as passed; here it is counted as skipped instead.
skipped=$(cut -f1 "$OLTPLAB_SKIP_LOG" | sort -u | wc -l)
awk -v s="$skipped" '/^test result:/ { p += $4; f += $6; i += $8 }
     END { printf "scripts/test.sh: %d tests passed, %d skipped, %d failed, %d ignored\n", p - s, s, f, i }' "$log"
# CI as the tests read it (oltplab_core::testing): set, and not empty, 0 or false.
on_ci=false
case "${CI:-}" in "" | 0 | false) ;; *) on_ci=true ;; esac
not_allowed=0
if [ "$skipped" -eq 0 ]; then
  echo "scripts/test.sh: none skipped"
else
  echo "scripts/test.sh: skipped (test [what it lacked] why):"
  while IFS=$'\t' read -r test need why; do
    mark=""
    if $on_ci; then
      mark="  NOT ALLOWED ON CI"
      for entry in "${ci_allowed[@]}"; do
        if [ "$entry" = "$test $need" ]; then mark="  (allowed on CI)"; fi
      done
      if [ "$mark" = "  NOT ALLOWED ON CI" ]; then not_allowed=$((not_allowed + 1)); fi
    fi
    echo "  $test [$need] $why$mark"
  done <"$OLTPLAB_SKIP_LOG"
fi
if $on_ci; then
  echo "scripts/test.sh: allowed to skip on CI (${#ci_allowed[@]}):"
  printf '  %s\n' "${ci_allowed[@]}"
  if [ "$not_allowed" -gt 0 ]; then
    echo "scripts/test.sh: $not_allowed skip(s) not on the CI allow-list: CI must run every other test" >&2
    if [ "$status" -eq 0 ]; then status=1; fi
  fi
fi
exit "$status"
