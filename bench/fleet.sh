#!/bin/sh
# etmkit-fleet on Dask: COUNT recordings (default 64) of SIZE trace bytes (default 4M), made by
# `etmkit gen --scenario workload` with seeds 1..DISTINCT (default 8) and listed COUNT/DISTINCT
# times each. Three jobs, each RUNS times (default 3), wall time (the user waits for the job):
#   loop     a plain shell loop: etmkit export --format=branch-list --threads=1 of each
#            recording (the command a fleet task runs: one core), then one etmkit merge of all
#            (the CLI contract, no scheduler)
#   loopall  the same loop with export's default threads (all cores for each recording)
#   local1   etmkit-fleet --local 1 (a Dask LocalCluster of one worker process)
#   local2   etmkit-fleet --local 2
# and prints the medians, local1 / local2 (what the second worker gives) and local1 / loop
# (the scheduler's overhead per recording), each also as the median of the rounds' own ratios
# (what make bench records). The three jobs' fleet.bl are checked equal.
# usage: bench/fleet.sh [path/to/etmkit]   (COUNT, DISTINCT, SIZE, RUNS in the environment)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
etmkit=$(cd "$(dirname "${1:-$here/../build/etmkit}")" && pwd)/$(basename "${1:-etmkit}")
fleet=$(dirname "$etmkit")/etmkit-fleet
count=${COUNT:-64}
distinct=${DISTINCT:-8}
size=${SIZE:-4M}
runs=${RUNS:-3}
[ -x "$etmkit" ] && [ -x "$fleet" ] || { echo "fleet.sh: $etmkit or $fleet is not built"; exit 1; }
/usr/bin/python3 -c 'import distributed' 2>/dev/null ||
    { echo "fleet.sh: Dask's distributed is not installed (make bench-deps)"; exit 77; }
command -v /usr/bin/time >/dev/null 2>&1 || { echo "fleet.sh: /usr/bin/time not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp"

for s in $(seq "$distinct"); do
    "$etmkit" gen --scenario workload --seed "$s" --trace-size "$size" -o "rec$s" >/dev/null 2>&1
done
i=0
while [ "$i" -lt "$count" ]; do
    s=$((i % distinct + 1))
    echo "rec$s/perf.data --symfs rec$s/symfs" >>list
    i=$((i + 1))
done
trace=$(du -cb rec*/perf.data | tail -1 | cut -f1)

timed() { # NAME CMD...: wall seconds appended to NAME.t
    name=$1; shift
    /usr/bin/time -f %e -a -o "$name.t" "$@" >/dev/null 2>&1
}
loop() { # NAME JOBS: the loop, wall seconds appended to NAME.t, the profile in NAME.bl
    /usr/bin/time -f %e -a -o "$1.t" sh -c '
        set -e; etmkit=$1; name=$2; jobs=$3; rm -rf bl; mkdir bl; n=0
        while read -r rec _opt symfs; do
            "$etmkit" export --format=branch-list -q $jobs --symfs="$symfs" -o "bl/$n.bl" "$rec"
            n=$((n + 1))
        done <list
        "$etmkit" merge -q -o "$name.bl" bl/*.bl' sh "$etmkit" "$1" "$2"
}
# each round runs the jobs compared one right after the other (loop, local1, local2), so that
# the per-round ratios see the same host: this VM's speed drifts by 10-20 % between minutes
for r in $(seq "$runs"); do
    loop loop --threads=1
    timed local1 "$fleet" --etmkit "$etmkit" -q --local 1 -o out1 --from list
    timed local2 "$fleet" --etmkit "$etmkit" -q --local 2 -o out2 --from list
    loop loopall ""
done
cmp -s loop.bl out1/fleet.bl && cmp -s loop.bl out2/fleet.bl && cmp -s loop.bl loopall.bl ||
    { echo "fleet.sh: the jobs' profiles differ"; exit 1; }
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
l=$(med loop.t); la=$(med loopall.t); a=$(med local1.t); b=$(med local2.t)
echo "$count recordings ($distinct distinct), $(awk -v t="$trace" -v d="$distinct" -v c="$count" 'BEGIN { printf "%.1f MiB of trace", t / d * c / 1048576 }'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $runs runs, medians of wall seconds"
printf '%-8s %8s\n' job "wall s"
printf '%-8s %8.2f\n' loop "$l" loopall "$la" local1 "$a" local2 "$b"
# the ratios: the median of the rounds' own ratios (the jobs of a round ran minutes apart at
# most), and the ratio of the medians for comparison
rmed() { paste "$1" "$2" | awk '{ printf "%.4f\n", $1 / $2 }' | sort -n |
             awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
wk=$(rmed local1.t local2.t); ov=$(rmed local1.t loop.t)
awk -v l="$l" -v la="$la" -v a="$a" -v b="$b" -v wk="$wk" -v ov="$ov" 'BEGIN {
    printf "local1/local2 = %.2fx (second worker; the rounds\047 median %.2fx)\n", a / b, wk
    printf "local1/loop   = %.3f (scheduler overhead %+.1f%%; the rounds\047 median %+.1f%%)\n", a / l, (a / l - 1) * 100, (ov - 1) * 100
    printf "loopall/local2 = %.2fx (two workers against one export at a time on all cores)\n", la / b }'
echo "rounds (wall s): loop $(tr '\n' ' ' <loop.t)/ local1 $(tr '\n' ' ' <local1.t)/ local2 $(tr '\n' ' ' <local2.t)"
. "$here/result.inc"
bench_result fleet-workers "\`etmkit-fleet --local 2\` against \`--local 1\`, wall time, $count recordings of $size, median of $runs rounds' ratios" \
    "$b s wall (2 workers, median)" "$a s wall (1 worker, median)" "$(awk -v r="$wk" 'BEGIN { printf "%.2f", r }')" ">=1.7"
bench_result fleet-overhead "\`etmkit-fleet --local 1\` against a shell loop of the same exports and merge, wall time, median of $runs rounds' ratios" \
    "$a s wall (fleet, median)" "$l s wall (loop, median)" "$(awk -v r="$ov" 'BEGIN { printf "%.3f", r }')" "<=1.1"
