#!/bin/bash
# etmkit export --format=perfetto with --tid, --pid and --comm: the stacks follow every sample
# and only the threads kept get tracks, so each kept thread's track must be exactly its track
# in the unfiltered trace, and the CPU tracks the unfiltered CPU slices of the kept threads
# (tests/scripts/perfetto_tracks.py). The filter used to apply before the stacks: a switch to a
# thread left out was never seen, so the frame a kept thread entered last before being
# switched out for good (cpu_switch_to) never showed, and a CPU slice ran on over the threads
# left out.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
command -v protoc >/dev/null || { echo "SKIP: no protoc (Debian package protobuf-compiler)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
proto_dir="$ETMKIT_SRC/tests/data"
check="$ETMKIT_SRC/tests/scripts/perfetto_tracks.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
decode() { # TRACE TEXT
    protoc --proto_path="$proto_dir" --decode=perfetto.protos.Trace perfetto_trace.proto <"$1" >"$2" 2>"$2.err"
}
export_to() { # OUT.txt DATA SYMFS [filter options]: the trace, decoded
    local t=$1 data=$2 symfs=$3
    shift 3
    "$ETMKIT_BIN" export -q --format=perfetto --symfs "$symfs" "$@" -o "$t.pt" "$data" 2>"$t.err" &&
        decode "$t.pt" "$t"
}

runs=("workload 1 --trace-size 1M" "two-processes 1" "kernel-and-user 2" "per-cpu-trbe 1")
# under the sanitizers (several times slower) two of them
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && runs=("two-processes 1" "per-cpu-trbe 1")
for run in "${runs[@]}"; do
    set -- $run
    sc=$1 seed=$2
    shift 2
    out="$tmp/$sc-$seed"
    "$ETMKIT_BIN" gen -q --scenario "$sc" --seed "$seed" "$@" -o "$out" >"$out.log" 2>&1 ||
        { echo "FAIL $sc: etmkit gen failed: $(head -2 "$out.log")"; fail=1; continue; }
    data=$out/perf.data
    export_to "$tmp/whole.txt" "$data" "$out/symfs" || { echo "FAIL $sc: export: $(head -2 "$tmp/whole.txt.err")"; fail=1; continue; }
    # the threads by their branches samples: pid tid comm count, most first (script prints
    # "comm pid/tid"; the idle task is left out: perf's --tid 0 is every thread's idle time)
    "$ETMKIT_BIN" script -q --symfs "$out/symfs" --itrace=b -F comm,pid,tid "$data" 2>/dev/null |
        awk '{ split($2, a, "/"); if (a[2] == 0) next; k = a[1] " " a[2] " " $1; c[k]++ }
             END { for (k in c) print k, c[k] }' | sort -k4,4nr -k2,2n >"$tmp/threads"
    [ "$(wc -l <"$tmp/threads")" -ge 2 ] || { echo "FAIL $sc: fewer than two threads"; fail=1; continue; }
    read -r pid tid comm _ <"$tmp/threads"
    # --tid of the busiest thread; --pid and --comm of its process (every thread of it); a
    # --tid of the least busy thread with another process's pid
    pid_tids=$(awk -v p="$pid" '$1 == p { print $2 }' "$tmp/threads" | tr '\n' ' ')
    comm_tids=$(awk -v c="$comm" '$3 == c { print $2 }' "$tmp/threads" | tr '\n' ' ')
    read -r _ last _ _ < <(tail -1 "$tmp/threads")
    for f in "--tid $tid|$tid" "--pid $pid|$pid_tids" "--comm $comm|$comm_tids" "--tid $last,$tid|$last $tid"; do
        opts=${f%%|*} want=${f#*|}
        # shellcheck disable=SC2086
        if ! export_to "$tmp/f.txt" "$data" "$out/symfs" $opts; then
            echo "FAIL $sc $opts: export: $(head -2 "$tmp/f.txt.err")"; fail=1; continue
        fi
        # shellcheck disable=SC2086
        if ! python3 "$check" "$tmp/whole.txt" "$tmp/f.txt" $want >"$tmp/cmp"; then
            echo "FAIL $sc $opts:"; head -5 "$tmp/cmp"; fail=1; continue
        fi
        n=$((n + 1))
    done
done
# a filter that keeps no thread: a trace with no thread track, and no error
out="$tmp/two-processes-1"
if export_to "$tmp/none.txt" "$out/perf.data" "$out/symfs" --tid 999999; then
    grep -q 'thread {' "$tmp/none.txt" && { echo "FAIL --tid 999999: a thread track"; fail=1; }
else
    echo "FAIL --tid 999999: export failed: $(head -2 "$tmp/none.txt.err")"; fail=1
fi
[ $fail -eq 0 ] && echo "ok: $n filtered traces hold their threads' tracks of the whole trace"
exit $fail
