#!/bin/sh
# --strict (issue 6): damage that still leaves usable output does not change the exit status
# (0), unless --strict is given (1); 'dump --help' without an input describes both inputs.
set -u
fail=0
check() { # expected-status description command...
    want=$1; what=$2; shift 2
    "$@" >/dev/null 2>&1
    rc=$?
    if [ "$rc" -ne "$want" ]; then echo "FAIL: $what: exit $rc, want $want"; fail=1; else echo "ok: $what"; fi
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a snapshot whose device file names a missing memory dump: listed, with a warning
cp -r "$ETMKIT_SRC/examples/etm4-hello" "$T/snap"
printf '\n[dump9]\nfile=missing.bin\naddress=0x900000\nlength=0x100\n' >>"$T/snap/cpu_0.ini"
check 0 "snapshot with a missing dump file, default" "$ETMKIT_BIN" dump --format=ocsd "$T/snap"
check 1 "snapshot with a missing dump file, --strict" "$ETMKIT_BIN" dump --strict "$T/snap"
check 0 "clean snapshot, --strict" "$ETMKIT_BIN" dump --strict "$ETMKIT_SRC/examples/etm4-hello"
P="$ETMKIT_SRC/fuzz/corpus/perf/gen-mmap2-after-aux"
check 0 "perf.data, dump default" "$ETMKIT_BIN" dump "$P"
# truncated perf.data: usable records remain
head -c $(( $(wc -c <"$P") - 100 )) "$P" >"$T/trunc.data"
check 0 "truncated perf.data, dump default" "$ETMKIT_BIN" dump "$T/trunc.data"
check 1 "truncated perf.data, dump --strict" "$ETMKIT_BIN" dump --strict "$T/trunc.data"
check 1 "truncated perf.data, script --strict" "$ETMKIT_BIN" script --strict "$T/trunc.data"
"$ETMKIT_BIN" dump --help | grep -q 'SNAPSHOT_DIR' || { echo "FAIL: dump --help lacks the snapshot form"; fail=1; }
"$ETMKIT_BIN" dump --help | grep -q 'perf.data' || { echo "FAIL: dump --help lacks the perf.data form"; fail=1; }
exit $fail
