#!/bin/sh
# PTM, ETMv3, STM and ITM through `etmkit dump --format=ocsd --decode` (the decode tree), on
# every such case in ../shared/testdata/opencsd, beyond what ocsd-compare compares
# (tests/scripts/ocsd_decode.sh runs it on every case):
#  - the STM and ITM packet lines have no ' : ' after the packet name, so ocsd-compare compares
#    their elements only: their packet lines are compared here, exactly and in order;
#  - every line that is neither a packet nor an element (the protocol printers in trace ID
#    order, END OF TRACE DATA, a fatal stop of the data path with its logged error, the bytes
#    processed), exactly and in order, from the first "Protocol printer" line on, leaving out
#    the lister's memory-map lines (Gen_Info, Filename=) and "Set trace element decode printer".
set -u
shared=${ETMKIT_SHARED:-}
cases="$shared/testdata/opencsd/cases.tsv"
if [ -z "$shared" ] || [ ! -f "$cases" ]; then
    echo "SKIP: ../shared/testdata/opencsd is absent"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

list=$(awk -F'\t' '!/^#/ && ($3 == "PTM" || $3 == "ETMv3+PTM+ITM" || $3 == "STM" || $3 == "ITM") \
    {print $1 ":" $2 ":" $3}' "$cases")
[ -n "$list" ] || { echo "no PTM/ETMv3/STM/ITM cases in $cases"; exit 1; }
fail=0
n=0
for c in $list; do
    name=${c%%:*}
    rest=${c#*:}
    snap=${rest%%:*}
    proto=${rest#*:}
    n=$((n + 1))
    xz -dc "$shared/testdata/opencsd/expected/$name.ppl.xz" >"$tmp/want.ppl"
    "$ETMKIT_BIN" dump --format=ocsd --decode "$shared/testdata/opencsd/snapshots/$snap" \
        >"$tmp/got.ppl" 2>"$tmp/err"
    if [ "$proto" = STM ] || [ "$proto" = ITM ]; then
        for k in want got; do
            grep -E '^Idx:[0-9]+; ID:[0-9a-f]+; \[' "$tmp/$k.ppl" | grep -v 'OCSD_GEN_TRC_ELEM' \
                >"$tmp/$k.pkt"
        done
        if ! cmp -s "$tmp/want.pkt" "$tmp/got.pkt"; then
            echo "$name: STM/ITM packet lines differ from trc_pkt_lister's (< OpenCSD, > etmkit):"
            diff "$tmp/want.pkt" "$tmp/got.pkt" | head -20
            fail=1
            continue
        fi
        echo "$name: $(wc -l <"$tmp/want.pkt") packet lines identical"
    fi
    for k in want got; do
        sed -n '/^Trace Packet Lister : Protocol/,$p' "$tmp/$k.ppl" | grep -v '^Idx:' |
            grep -v -e '^Gen_Info' -e '^Filename=' -e 'Set trace element decode printer' \
                >"$tmp/$k.other"
    done
    if ! cmp -s "$tmp/want.other" "$tmp/got.other"; then
        echo "$name: other lines differ from trc_pkt_lister's (< OpenCSD, > etmkit):"
        diff "$tmp/want.other" "$tmp/got.other" | head -20
        fail=1
        continue
    fi
    echo "$name: $(wc -l <"$tmp/want.other") other lines identical"
done
[ "$fail" -eq 0 ] || exit 1
echo "$n PTM/ETMv3/STM/ITM cases: lines identical"
exit 0
