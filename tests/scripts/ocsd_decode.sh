#!/bin/sh
# Instruction-flow decode of every ETMv4 / ETE / ETMv4-M case in ../shared/testdata/opencsd
# matches what OpenCSD 1.8.0's trc_pkt_lister printed: packet lines and generic-element lines,
# per trace ID (same Idx, raw bytes and packet name; same element text), as ocsd-compare
# compares them.
set -u
shared=${ETMKIT_SHARED:-}
cmp_tool="$shared/tools/ocsd-compare"
cases="$shared/testdata/opencsd/cases.tsv"
if [ -z "$shared" ] || [ ! -f "$cases" ] || [ ! -f "$cmp_tool" ]; then
    echo "SKIP: ../shared/testdata/opencsd and ../shared/tools/ocsd-compare are absent"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is needed to run ocsd-compare"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

want=$(awk -F'\t' '!/^#/ && ($3 == "ETMv4" || $3 == "ETE" || $3 == "ETMv4-M")' "$cases" | wc -l)
[ "$want" -gt 0 ] || { echo "no ETMv4/ETE cases in $cases"; exit 1; }

python3 "$cmp_tool" run --cmd "'$ETMKIT_BIN' dump --format=ocsd" \
    --protocol ETMv4,ETE,ETMv4-M >"$tmp/log" 2>&1
rc=$?
grep -v '^PASS' "$tmp/log" | head -60
last=$(tail -n 1 "$tmp/log")
echo "ocsd-compare: $last"
if [ "$rc" -ne 0 ] || [ "$last" != "$want passed, 0 failed" ]; then
    echo "expected all $want ETMv4/ETE/ETMv4-M cases to pass (packets and elements)"
    exit 1
fi
exit 0
