#!/bin/sh
# Regression (issue 6, docs/RELIABILITY.md finding 9): decoder threads reported flow
# diagnostics to the caller's diag sink (the CLI's ek_diag_collector, which reallocs its group
# table) outside the session's lock, and updated shared DSO counters without atomics, so two
# threads meeting damaged trace at once could crash 'etmkit script' (SIGSEGV in sweep_script;
# ThreadSanitizer showed the races in collector_fn and in qdecode.c code_at / account).
# Fixed: the session serialises every call of the caller's sink; the DSO counters are atomic.
# Input: fuzz/corpus/perf/find-index-entry-negative-offset with record 15's size set to 0
# (built here) and gen-flush-partial-packet (two CPUs reporting bad packets); each runs 30
# times with '-j 2'. Any signal or sanitizer report fails.
set -u
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$ETMKIT_SRC/fuzz/corpus/perf/find-index-entry-negative-offset" "$T/in.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
struct.pack_into('<H', d, 0xe90 + 6, 0)
open(sys.argv[2], 'wb').write(d)
PY
mkdir -p "$T/symfs/bin" && cp "$ETMKIT_SRC/fuzz/corpus/elf/exe" "$T/symfs/bin/loop"
crashes=0
for input in "$T/in.data" "$ETMKIT_SRC/fuzz/corpus/perf/gen-flush-partial-packet"; do
    for i in $(seq 1 30); do
        "$ETMKIT_BIN" script -j 2 --symfs="$T/symfs" --buildid-dir="$T/symfs" "$input" \
            >/dev/null 2>"$T/err"
        rc=$?
        if [ $rc -ge 128 ] || grep -q 'Sanitizer\|runtime error' "$T/err"; then
            crashes=$((crashes + 1))
            echo "FAIL: run $i on $(basename "$input") exit $rc"; head -5 "$T/err"
        fi
    done
done
if [ $crashes -gt 0 ]; then
    echo "$crashes of 60 runs of 'etmkit script -j 2' crashed (session threads)"
    exit 1
fi
echo "60 runs of 'etmkit script -j 2' on damaged trace: no crash"
exit 0
