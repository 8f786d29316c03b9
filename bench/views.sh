#!/bin/sh
# The cost of the views (docs/VIEWS.md) against `etmkit script --itrace=b` on the same
# recording: CPU time (user + sys) and peak RSS of
#   etmkit script --itrace=b > /dev/null          (perf's default fields)
#   etmkit export --format=folded > /dev/null
#   etmkit report > /dev/null
#   etmkit export --format=svg|lcov|perfetto -o FILE (in the temporary folder)
# each the median of BENCH_RUNS (default 3) by CPU, and the ratios (acceptance: each view at
# most 2x script's CPU time).
#
#   bench/views.sh [ETMKIT_BIN]          (default: build/etmkit)
#   BENCH_SCENARIO=workload-real BENCH_TRACE_SIZE=16M bench/views.sh
#
# Input: `etmkit gen --scenario BENCH_SCENARIO --trace-size BENCH_TRACE_SIZE` (default workload,
# 64M, as bench/script.sh), generated into a temporary folder (BENCH_TMP: kept there).
set -u
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
nruns=${BENCH_RUNS:-3}
name=views
. "$here/recording.inc"
bytes=$(wc -c <"$out/perf.data")
echo "views bench: $scenario recording of $(awk -v s="$bytes" 'BEGIN { printf "%.1f", s / 1048576 }') MiB"
echo "machine: $(nproc) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"

# median NAME CMD...: the median of nruns by CPU; sets med_cpu, med_rss
median() {
    name=$1
    shift
    runs=""
    k=0
    while [ $k -lt "$nruns" ]; do
        k=$((k + 1))
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >"$null" 2>"$tmp/err"
        rc=$?
        read -r w u s rss <"$tmp/time"
        cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        echo "  $name (run $k): $w s wall, $cpu s CPU ($u user + $s sys), peak RSS $rss KiB (exit $rc)"
        runs="$runs$cpu $rss
"
    done
    set -- $(printf '%s' "$runs" | sort -n | sed -n "$(((nruns + 1) / 2))p")
    med_cpu=$1
    med_rss=$2
    echo "$name: median $med_cpu s CPU, peak RSS $med_rss KiB"
}

median "etmkit script --itrace=b" "$etmkit" script -q --itrace=b --symfs "$out/symfs" "$out/perf.data"
sc=$med_cpu
median "etmkit export --format=folded" "$etmkit" export -q --format=folded --symfs "$out/symfs" "$out/perf.data"
fc=$med_cpu
median "etmkit report" "$etmkit" report -q --symfs "$out/symfs" "$out/perf.data"
rpc=$med_cpu
median "etmkit export --format=svg" "$etmkit" export -q --format=svg --symfs "$out/symfs" -o "$tmp/v.svg" "$out/perf.data"
vc=$med_cpu
median "etmkit export --format=lcov" "$etmkit" export -q --format=lcov --symfs "$out/symfs" -o "$tmp/v.info" "$out/perf.data"
lc=$med_cpu
median "etmkit export --format=perfetto" "$etmkit" export -q --format=perfetto --symfs "$out/symfs" -o "$tmp/v.pt" "$out/perf.data"
pc=$med_cpu
rm -f "$tmp/v.svg" "$tmp/v.info" "$tmp/v.pt"
for v in "folded $fc" "report $rpc" "svg $vc" "lcov $lc" "perfetto $pc"; do
    set -- $v
    bench_result "view-$1-$scenario" "\`$([ $1 = report ] && echo report || echo "export --format=$1")\` against \`script --itrace=b\`, CPU, $scenario $size" \
        "$2 s CPU" "$sc s CPU (script)" "$(awk -v a="$2" -v s="$sc" 'BEGIN { printf "%.2f", a / (s > 0 ? s : 0.01) }')" "<=2"
done
awk -v s="$sc" -v f="$fc" -v r="$rpc" -v v="$vc" -v l="$lc" -v p="$pc" 'BEGIN {
    s = s > 0 ? s : 0.01
    printf "CPU against script: folded %.2fx, report %.2fx, svg %.2fx, lcov %.2fx, perfetto %.2fx (acceptance: at most 2x)\n", f / s, r / s, v / s, l / s, p / s
    if (f > 2 * s || r > 2 * s || v > 2 * s || l > 2 * s || p > 2 * s) { print "views bench: ABOVE 2x"; exit 1 }
}'
