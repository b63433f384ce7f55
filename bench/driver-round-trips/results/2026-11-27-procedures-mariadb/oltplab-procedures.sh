#!/bin/sh
# The same binary as oltplab-statements, its server runs with --procedures.
bin="$(dirname "$0")/oltplab-statements"
if [ "$1" = run ]; then exec "$bin" "$@" --procedures; else exec "$bin" "$@"; fi
