#!/bin/sh
# bench/recording.inc with BENCH_TMP naming a folder that does not exist yet: the bench makes
# it and generates its recording there. (It used to fail: "cannot create .../gen.log:
# Directory nonexistent", and `make bench` stopped.)
set -u
src=${ETMKIT_SRC:?}
etmkit=${ETMKIT_BIN:?}
top=$(mktemp -d)
trap 'rm -rf "$top"' EXIT INT TERM
here=$src/bench
name=test
out=$(BENCH_TMP="$top/not/yet" BENCH_TRACE_SIZE=64K here=$here name=$name etmkit=$etmkit \
    sh -c '. "$here/recording.inc"; echo "out=$out"' 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: recording.inc exited $rc: $out"; exit 1; }
[ -f "$top/not/yet/workload/perf.data" ] || { echo "FAIL: no recording in $top/not/yet: $out"; exit 1; }
echo "bench_recording_tmp: $out"
