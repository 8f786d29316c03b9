#!/bin/sh
# -j N must never change a byte (issue 30 item 3): `etmkit script` with -j 1, -j 2, -j 3 and
# the default (every queue on its own thread) on every gen scenario (time stamps or none,
# per-CPU and per-thread queues, shared sinks, TRBE, snapshots of the ring, JIT, v7) and on
# the real recordings in ../shared: the same output, with perf's default fields and with -F,
# branches and instructions. -j N lets N threads work at once (decoders and the writer), each
# giving its turn away while it waits for another: a mistake there shows as a hang (ctest's
# time-out) or as different bytes.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0; n=0
F1=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
scen=$("$ETMKIT_BIN" gen --list 2>/dev/null | awk '{print $1}')
[ "${ETMKIT_SANITIZE:-0}" = 1 ] &&
    scen="basic per-thread shared-sink-multi-cpu per-cpu-trbe time-kernel-clock workload"
cmp_runs() { # name symfs file [more --itrace and -F arguments, one set]
    for args in "--itrace=b" "--itrace=b -F $F1" "--itrace=i100i -F $F1" ${4:+"$4"}; do
        # shellcheck disable=SC2086
        "$ETMKIT_BIN" script -q --symfs "$2" $args "$3" >"$T/a" 2>/dev/null
        for j in 1 2 3; do
            # shellcheck disable=SC2086
            "$ETMKIT_BIN" script -q -j $j --symfs "$2" $args "$3" >"$T/b" 2>/dev/null
            n=$((n + 1))
            if ! cmp -s "$T/a" "$T/b"; then
                echo "FAIL: $1 $args: -j $j differs from the default"
                diff "$T/a" "$T/b" | head -6
                fail=1
            fi
        done
    done
}
for sc in $scen; do
    out="$T/$sc"
    "$ETMKIT_BIN" gen --scenario "$sc" --seed 2 --trace-size 256K -o "$out" >/dev/null 2>&1 || continue
    for data in "$out"/perf*.data; do
        [ -f "$data" ] && cmp_runs "$sc $(basename "$data")" "$out/symfs" "$data"
    done
    rm -rf "$out"
done
# Without time stamps the writer takes queue after queue while the workers take the longest
# queues first (run.c, take_queue): a workload recording of 4 CPUs, whose queues differ in
# length (the first is not the longest, the last the shortest), large enough that a queue's
# text outgrows what a worker may run ahead of the writer (QOUT_LIMIT, 4 MiB), so that workers
# wait for the writer while it waits for a queue in its order. With two threads or more the
# writer encodes the text of such a recording itself, from records of the samples that the
# decoders hand it (run.c, defer): the last-branch stacks (l) travel with those records.
printf 'timestamps = 0\n' >"$T/nots.cfg"
size=1M
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && size=512K
if "$ETMKIT_BIN" gen -q --scenario workload --seed 2 --trace-size $size --config "$T/nots.cfg" \
    -o "$T/nots" >/dev/null 2>&1; then
    cmp_runs "workload without time stamps ($size)" "$T/nots/symfs" "$T/nots/perf.data" \
        "--itrace=i100il -F pid,tid,ip,sym,brstack"
    rm -rf "$T/nots"
else
    echo "FAIL: etmkit gen --scenario workload --config timestamps=0 failed"
    fail=1
fi
S="${ETMKIT_SHARED:-}/testdata/perf"
if [ -d "$S/files" ]; then
    for f in "$S"/files/*.data*; do
        [ -f "$f" ] && cmp_runs "$(basename "$f")" "$S/symfs" "$f"
    done
else
    echo "note: ../shared is absent: real recordings not compared"
fi
[ $n -gt 0 ] || { echo "SKIP: no input"; exit 77; }
echo "$n runs compared"
exit $fail
