#!/bin/sh
# Regression (issue 6, limits audit; fixed in src/session/perf_queues.c by a sorted index of
# the buffers): every AUX record was matched by scanning all AUXTRACE buffers, so slicing took
# time naux x nbuf: 2000 pairs 0.07 s, 8000 0.4 s, 32000 4.7 s -- a 64 MiB file of small records
# (500000 pairs) would take hours, i.e. hang. This runs 'etmkit dump --slices' on 128000
# pairs (16 MiB) with a 60 s bound (a linear matcher needs about a second).
# The 60 s bound is a hang detector, not a speed assertion (speed is measured in bench/).
# Normal build only.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: timing is checked in the normal build"; exit 77; }
GEN="$ETMKIT_BUILD/fuzz/fuzz_make_perf_seeds"
[ -x "$GEN" ] || { echo "SKIP: $GEN not built"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$GEN" --many 128000 "$T/many.data" || exit 1
start=$(date +%s)
timeout 60 "$ETMKIT_BIN" dump --slices "$T/many.data" >/dev/null 2>"$T/err"
rc=$?
secs=$(( $(date +%s) - start ))
if [ $rc -eq 124 ]; then
    echo "FAIL: 128000 AUX records not sliced in 60 s (AUX slicing is naux x nbuf again?)"
    exit 1
fi
[ $rc -ge 128 ] && { echo "FAIL: crashed ($rc)"; head -5 "$T/err"; exit 1; }
echo "128000 AUX records sliced in ${secs}s (exit $rc)"
exit 0
