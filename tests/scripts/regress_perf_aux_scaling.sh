#!/bin/sh
# Regression (issue 6, limits audit; fixed in src/session/perf_queues.c by a sorted index of
# the buffers): every AUX record was matched by scanning all AUXTRACE buffers, so slicing took
# time naux x nbuf: 2000 pairs 0.07 s, 8000 0.4 s, 32000 4.7 s -- a 64 MiB file of small records
# (500000 pairs) would take hours, i.e. hang. This runs 'etmkit dump --slices' on 128000
# pairs (16 MiB) with a 60 s bound (a linear matcher needs about a second).
# Second case (RELIABILITY.md, residual of the limits audit): the same file plus a last
# AUXTRACE record claiming 2^40 bytes at AUX offset 0 of CPU 0. It overlaps every buffer of
# CPU 0, so the walk back from each AUX record went through all of them: 7-12 s. The walk now
# stops where no earlier buffer reaches the record, and after a budget of steps looks at the 64
# nearest buffers only, with a perf.buffers-overlap warning. The slices must be those of the
# first file (the huge buffer comes last in the file, so no record belongs to it).
# The 60 s bounds are hang detectors, not speed assertions (speed is measured in bench/).
# Normal build only.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: timing is checked in the normal build"; exit 77; }
GEN="$ETMKIT_BUILD/fuzz/fuzz_make_perf_seeds"
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# slices NAME WHAT: 'etmkit dump --slices' of $T/NAME.data into $T/NAME.txt (diagnostics in
# $T/err) within 60 s, no crash; prints how long it took
slices() {
    start=$(date +%s)
    timeout 60 "$ETMKIT_BIN" dump --slices "$T/$1.data" >"$T/$1.txt" 2>"$T/err"
    rc=$?
    secs=$(( $(date +%s) - start ))
    if [ $rc -eq 124 ]; then
        echo "FAIL: $2 not sliced in 60 s (AUX slicing is naux x nbuf again?)"
        exit 1
    fi
    [ $rc -ge 128 ] && { echo "FAIL: $2: crashed ($rc)"; head -5 "$T/err"; exit 1; }
    echo "$2 sliced in ${secs}s (exit $rc)"
}

"$GEN" --many 128000 "$T/many.data" || exit 1
slices many "128000 AUX records"
"$GEN" --many-huge 128000 "$T/huge.data" || exit 1
slices huge "128000 AUX records and a 2^40-byte buffer"
grep -q 'perf.buffers-overlap' "$T/err" || { echo "FAIL: no perf.buffers-overlap warning"; head -5 "$T/err"; exit 1; }
if ! grep -v '^buffer 128000: ' "$T/huge.txt" | cmp -s - "$T/many.txt"; then
    echo "FAIL: the 2^40-byte buffer changed the slices:"
    grep -v '^buffer 128000: ' "$T/huge.txt" | diff "$T/many.txt" - | head -5
    exit 1
fi
echo "the 2^40-byte buffer leaves the slices as they were"
exit 0
