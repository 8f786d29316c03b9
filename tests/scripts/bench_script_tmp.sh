#!/bin/sh
# bench/script.sh with BENCH_TMP naming a folder that does not exist yet: the bench makes it,
# generates its recording there, times etmkit and perf in turns and compares their outputs.
# (It failed: "cannot create .../gen.log: Directory nonexistent", as bench/recording.inc once
# did.) Without perf the bench has nothing to compare: skipped, as the bench skips.
set -u
src=${ETMKIT_SRC:?}
etmkit=${ETMKIT_BIN:?}
if ! command -v perf >/dev/null 2>&1 || ! perf version >/dev/null 2>&1; then
    echo "SKIP: perf is not installed (apt-get install linux-perf)"
    exit 77
fi
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time is missing (apt-get install time)"; exit 77; }
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT INT TERM
out=$(BENCH_TMP="$top/not/yet" BENCH_TRACE_SIZE=64K BENCH_PERF_RUNS=1 sh "$src/bench/script.sh" \
    "$etmkit" 2>&1)
rc=$?
fail() {
    echo "FAIL: $1"
    printf '%s\n' "$out" | tail -8
    exit 1
}
[ $rc -eq 0 ] || fail "bench/script.sh exited $rc"
[ -f "$top/not/yet/workload/perf.data" ] || fail "no recording in $top/not/yet"
[ "$(printf '%s\n' "$out" | grep -c '^medians of 1 by CPU: etmkit .*; perf ')" -eq 2 ] ||
    fail "not two lines of medians (perf's fields and -F), etmkit and perf in turns"
printf '%s\n' "$out" | grep -q '^outputs: [0-9]* lines from perf' || fail "no output comparison"
echo "bench_script_tmp: ok"
