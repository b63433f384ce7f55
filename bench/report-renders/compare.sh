#!/bin/sh
# Renders every given result file, and every group of them side by side, with two oltplab binaries
# (HTML, Markdown, CSV) and reports any byte that differs. A refactor of the report's reading must
# change no render. Usage: [REPORT_ARGS="--by terminals"] compare.sh OLD_BIN NEW_BIN WORKDIR RESULT.json...
set -eu
old=$1 new=$2 work=$3
shift 3
mkdir -p "$work"
renders=0 differ=0
render() { # name, files...
    name=$1
    shift
    for fmt in html md csv; do
        "$old" report --quiet ${REPORT_ARGS:-} --format "$fmt" -o - "$@" >"$work/$name.old.$fmt" 2>"$work/$name.old.err" || echo "old refused $name: $(cat "$work/$name.old.err")"
        "$new" report --quiet ${REPORT_ARGS:-} --format "$fmt" -o - "$@" >"$work/$name.new.$fmt" 2>"$work/$name.new.err" || echo "new refused $name: $(cat "$work/$name.new.err")"
        renders=$((renders + 1))
        if ! cmp -s "$work/$name.old.$fmt" "$work/$name.new.$fmt"; then
            differ=$((differ + 1))
            echo "DIFFERS: $name.$fmt"
        fi
    done
}
i=0
for f in "$@"; do
    i=$((i + 1))
    render "$i-$(basename "$(dirname "$f")")-$(basename "$f" .json)" "$f"
done
# Side by side: all of them, and the first with each other (comparison sections).
render all "$@"
echo "$renders renders of $# results, $differ differ"
[ "$differ" -eq 0 ]
