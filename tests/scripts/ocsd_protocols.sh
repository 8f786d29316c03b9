#!/bin/sh
# PTM, ETMv3, STM and ITM decode of every such case in ../shared/testdata/opencsd matches what
# OpenCSD 1.8.0's trc_pkt_lister printed (packet lines and generic-element lines, per trace
# ID, as ocsd-compare compares them). The library modules are driven by the test driver
# tests/tools/proto_dump.c until `etmkit dump` drives them through the decode tree.
set -u
shared=${ETMKIT_SHARED:-}
cmp_tool="$shared/tools/ocsd-compare"
cases="$shared/testdata/opencsd/cases.tsv"
driver="$ETMKIT_BUILD/tests/ek_proto_dump"
if [ -z "$shared" ] || [ ! -f "$cases" ] || [ ! -f "$cmp_tool" ]; then
    echo "SKIP: ../shared/testdata/opencsd and ../shared/tools/ocsd-compare are absent"
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is needed to run ocsd-compare"
    exit 77
fi
[ -x "$driver" ] || { echo "missing test driver $driver"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

protos="PTM,ETMv3+PTM+ITM,STM,ITM"
want=$(awk -F'\t' '!/^#/ && ($3 == "PTM" || $3 == "ETMv3+PTM+ITM" || $3 == "STM" || $3 == "ITM")' \
    "$cases" | wc -l)
[ "$want" -gt 0 ] || { echo "no PTM/ETMv3/STM/ITM cases in $cases"; exit 1; }

python3 "$cmp_tool" run --cmd "'$driver'" --protocol "$protos" >"$tmp/log" 2>&1
rc=$?
grep -v '^PASS' "$tmp/log" | head -60
last=$(tail -n 1 "$tmp/log")
echo "ocsd-compare: $last"
if [ "$rc" -ne 0 ] || [ "$last" != "$want passed, 0 failed" ]; then
    echo "expected all $want PTM/ETMv3/STM/ITM cases to pass (packets and elements)"
    exit 1
fi

# The STM and ITM listings have no ' : ' after the packet name, so ocsd-compare compares
# their elements only; compare their packet lines here, exactly and in order.
for c in $(awk -F'\t' '!/^#/ && ($3 == "STM" || $3 == "ITM") {print $1 ":" $2}' "$cases"); do
    name=${c%%:*}
    snap=${c#*:}
    xz -dc "$shared/testdata/opencsd/expected/$name.ppl.xz" |
        grep -E '^Idx:[0-9]+; ID:[0-9a-f]+; \[' | grep -v 'OCSD_GEN_TRC_ELEM' >"$tmp/want"
    "$driver" --decode "$shared/testdata/opencsd/snapshots/$snap" |
        grep -E '^Idx:[0-9]+; ID:[0-9a-f]+; \[' | grep -v 'OCSD_GEN_TRC_ELEM' >"$tmp/got"
    if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "$name: STM/ITM packet lines differ from trc_pkt_lister's:"
        diff "$tmp/want" "$tmp/got" | head -20
        exit 1
    fi
    echo "$name: $(wc -l <"$tmp/want") packet lines identical"
done
exit 0
