#!/bin/sh
# Peak memory against the recording's size (issue 30 item 4): `etmkit script --itrace=i10000000`
# (decoding, almost no output) and `etmkit script --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,
# dso,addr` (the text path) on `etmkit gen --scenario workload` recordings of 64 MiB and
# 1 GiB of trace (BENCH_SIZES to change: sizes gen takes), generated into a temporary folder
# (BENCH_TMP: kept there; the 1 GiB one needs 1.1 GB of disk and about 25 s).
# Prints peak RSS per size and the ratio of the largest to the smallest.
#
#   bench/memory.sh [ETMKIT_BIN]
set -u
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
sizes=${BENCH_SIZES:-64M 1G}
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
[ -x "$etmkit" ] || { echo "memory bench: $etmkit is not built (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "memory bench: SKIP: /usr/bin/time is missing (apt-get install time)"; exit 0; }
tmp=${BENCH_TMP:-$(mktemp -d)}
[ -n "${BENCH_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/null.inc"
. "$here/result.inc"
echo "machine: $(nproc) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
for sz in $sizes; do
    out="$tmp/workload-$sz"
    if [ ! -f "$out/perf.data" ]; then
        "$etmkit" gen -q --scenario workload --trace-size "$sz" -o "$out" || {
            echo "memory bench: etmkit gen --trace-size $sz failed"; exit 1; }
    fi
done
for mode in decode text; do
    first=""
    for sz in $sizes; do
        out="$tmp/workload-$sz"
        if [ $mode = decode ]; then set -- --itrace=i10000000; else set -- --itrace=b -F $F; fi
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$etmkit" script -q -i "$out/perf.data" \
            --symfs "$out/symfs" --kallsyms "$out/kallsyms" "$@" >"$null" 2>"$tmp/err"
        read -r w u s rss <"$tmp/time"
        [ -n "$first" ] || { first=$rss; firstsz=$sz; }
        ratio=$(awk -v a="$rss" -v b="$first" 'BEGIN { printf "%.2f", a / b }')
        echo "$mode, $sz of trace: peak RSS $rss KiB (${ratio}x the first size), $w s wall, $u s user"
        if [ "$mode" = decode ] && [ "$sz" != "$firstsz" ]; then
            bench_result "memory-$sz" "peak RSS decoding (\`--itrace=i10000000\`) workload $sz against $firstsz" \
                "$rss KiB" "$first KiB ($firstsz, etmkit)" "$ratio" "<=1.5"
        fi
    done
done
