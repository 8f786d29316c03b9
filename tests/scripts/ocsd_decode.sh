#!/bin/sh
# Packets and instruction flow of every case in ../shared/testdata/opencsd (ETMv4, ETE,
# ETMv4-M, PTM, ETMv3, STM, ITM) as `etmkit dump --format=ocsd` lists them through the decode
# tree match what OpenCSD 1.8.0's trc_pkt_lister printed: packet lines and generic-element
# lines, per trace ID (same Idx, raw bytes and packet name; same element text), as ocsd-compare
# compares them. (tests/scripts/ocsd_protocols.sh adds what ocsd-compare leaves out for the
# PTM/ETMv3/STM/ITM cases.)
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

want=$(awk -F'\t' '!/^#/ && NF >= 3' "$cases" | wc -l)
[ "$want" -gt 0 ] || { echo "no cases in $cases"; exit 1; }
for p in ETMv4 ETE PTM ETMv3+PTM+ITM STM ITM; do
    awk -F'\t' -v p="$p" '!/^#/ && $3 == p {f = 1} END {exit !f}' "$cases" ||
        { echo "no $p case in $cases"; exit 1; }
done

python3 "$cmp_tool" run --cmd "'$ETMKIT_BIN' dump --format=ocsd" >"$tmp/log" 2>&1
rc=$?
grep -v '^PASS' "$tmp/log" | head -60
last=$(tail -n 1 "$tmp/log")
echo "ocsd-compare: $last"
if [ "$rc" -ne 0 ] || [ "$last" != "$want passed, 0 failed" ]; then
    echo "expected all $want cases to pass (packets and elements)"
    exit 1
fi
exit 0
