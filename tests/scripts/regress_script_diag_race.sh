#!/bin/sh
# Regression (issue 6; OPEN in the script branch's src/session/session.c): decoder threads
# report flow diagnostics into one ek_diag_collector without a lock (session.c diag_fn ->
# collector_fn, which reallocs its group table), so two threads meeting damaged trace at the
# same time can crash 'etmkit script' (SIGSEGV seen in sweep_script; ThreadSanitizer shows
# the races in collector_fn, and in qdecode.c code_at / account on shared DSO counters).
# Input: fuzz/corpus/perf/find-index-entry-negative-offset with record 15's size set to 0
# (built here). 'etmkit script -j 2' runs 60 times; any signal is the bug.
# While it is open a crash reports SKIP (exit 77) with the count; ETMKIT_REGRESS_STRICT=1
# makes it fail instead.
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
for i in $(seq 1 60); do
    "$ETMKIT_BIN" script -j 2 --symfs="$T/symfs" --buildid-dir="$T/symfs" "$T/in.data" \
        >/dev/null 2>"$T/err"
    rc=$?
    if [ $rc -ge 128 ] || grep -q 'Sanitizer\|runtime error' "$T/err"; then
        crashes=$((crashes + 1))
    fi
done
if [ $crashes -gt 0 ]; then
    echo "KNOWN OPEN BUG (session diag collector shared by decoder threads): $crashes of 60 runs crashed"
    [ "${ETMKIT_REGRESS_STRICT:-0}" = 1 ] && exit 1
    echo "SKIP: open bug recorded for src/session/session.c"
    exit 77
fi
echo "60 runs of 'etmkit script -j 2' on damaged trace: no crash"
exit 0
