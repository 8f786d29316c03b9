#!/bin/sh
# The cost of a profile against the text it is made from (issue 30): CPU time (user + sys) of
#   etmkit export --format=autofdo -o FILE          (the AutoFDO profile)
#   etmkit script --itrace=b -F pid,tid,cpu,flags,ip,sym,symoff,dso,addr > null device
# on the same recording, run in turns BENCH_RUNS times (default 3), each the median of its runs
# by CPU, and their ratio (acceptance: export at most 1.3x script -F).
#
#   bench/export.sh [ETMKIT_BIN]          (default: build/etmkit)
#
# Input: `etmkit gen --scenario BENCH_SCENARIO --trace-size BENCH_TRACE_SIZE` (default workload,
# 64M, as bench/script.sh), generated into a temporary folder (BENCH_TMP: kept there).
set -u
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
nruns=${BENCH_RUNS:-3}
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
name=export
. "$here/recording.inc"
echo "export bench: $scenario $size; machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# once FILE NAME CMD...: one run, its CPU seconds and peak RSS appended to FILE
once() {
    file=$1
    name=$2
    shift 2
    /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >"$null" 2>"$tmp/err" || {
        echo "export bench: $name failed:"; tail -3 "$tmp/err"; exit 1; }
    awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$tmp/time" >>"$file"
}
# median FILE NAME: the median of FILE's runs by CPU seconds; sets med
median() {
    set -- $(sort -n "$1" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }') "$2"
    med=$1
    echo "$3: $1 s CPU (median of $nruns), peak RSS $2 KiB"
}
# the two in turns, so that a change in the machine's load falls on both
: >"$tmp/cpus.script"
: >"$tmp/cpus.export"
for _ in $(seq "$nruns"); do
    once "$tmp/cpus.script" "script -F" "$etmkit" script -q --symfs "$out/symfs" --itrace=b \
        -F $F "$out/perf.data"
    once "$tmp/cpus.export" "export --format=autofdo" "$etmkit" export -q --format=autofdo \
        --symfs "$out/symfs" -o "$tmp/profile.txt" "$out/perf.data"
done
median "$tmp/cpus.script" "script -F"
s=$med
median "$tmp/cpus.export" "export --format=autofdo"
e=$med
ratio=$(awk -v e="$e" -v s="$s" 'BEGIN { printf "%.2f", e / (s > 0 ? s : 0.01) }')
echo "export / script -F: ${ratio}x CPU"
bench_result "export-autofdo-$scenario" "\`export --format=autofdo\` against \`script --itrace=b -F ...\`, CPU, $scenario $size" \
    "$e s CPU (export)" "$s s CPU (script -F)" "$ratio" "<=1.3"
