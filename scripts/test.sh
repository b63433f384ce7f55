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

# Everything the tests need is installed now: a test whose dependency is missing fails, not skips.
export OLTPLAB_REQUIRE_ALL=1
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# Nothing is skipped here (OLTPLAB_REQUIRE_ALL): a missing dependency failed its test above.
awk '/^test result:/ { p += $4; f += $6; i += $8 }
     END { printf "scripts/test.sh: %d tests passed, %d failed, %d ignored; none skipped (OLTPLAB_REQUIRE_ALL=1)\n", p, f, i }' "$log"
