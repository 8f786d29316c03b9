#!/bin/sh
# Instruction-flow decode speed: etmkit against OpenCSD's trc_pkt_lister (Debian's build).
#
#   bench/decode.sh [ETMKIT_BIN]          (default: build/etmkit)
#
# Input: the bugfix-exact-match snapshot of ../shared/testdata/opencsd with its 1 MiB trace
# buffer repeated BENCH_COPIES times (default 16: 16 MiB), built at run time in a temporary
# folder (INI files copied, memory dumps linked). Both decoders list the generic elements
# (etmkit dump --format=ocsd --decode-only to /dev/null, best of 3; trc_pkt_lister -decode_only
# at its fastest, to a file: -logfilename); the
# script prints wall and CPU times, their ratios and peak RSS, then etmkit's decode speed
# without any listing (bench/flow_bench) in MB/s of trace and instructions per second.
set -u
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
bench_bin=$(dirname "$etmkit")/bench/flow_bench
shared=${ETMKIT_SHARED:-$here/../../shared}
src="$shared/testdata/opencsd/snapshots/bugfix-exact-match"
copies=${BENCH_COPIES:-16}

if [ ! -d "$src" ]; then
    echo "decode bench: SKIP: $src is absent (../shared)"
    exit 0
fi
if [ ! -x "$etmkit" ]; then
    echo "decode bench: $etmkit is not built (make)"
    exit 1
fi
lister=$(command -v trc_pkt_lister || true)
time_bin=$(command -v time || true)
[ -x /usr/bin/time ] && time_bin=/usr/bin/time

lister_version=$(dpkg-query -W -f '${Version}' libopencsd-bin 2>/dev/null | sed 's/-.*//')
. "$here/result.inc"
tmp=$(mktemp -d)
. "$here/null.inc"
trap 'rm -rf "$tmp"' EXIT INT TERM
snap="$tmp/bugfix-exact-match-x$copies"
mkdir -p "$snap"
for f in "$src"/*; do
    case "$f" in
    *.ini) cp "$f" "$snap/" ;;
    */cstrace.bin) ;;
    *) ln -s "$f" "$snap/" ;;
    esac
done
i=0
while [ "$i" -lt "$copies" ]; do
    cat "$src/cstrace.bin"
    i=$((i + 1))
done >"$snap/cstrace.bin"
size=$(wc -c <"$snap/cstrace.bin")
mb=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }')
echo "decode bench: bugfix-exact-match x$copies = $mb MiB of trace"
echo "machine: $(nproc) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg)"

# run NAME CMD...: prints "NAME: wall s, CPU s, peak RSS"; sets last_wall, last_cpu
run() {
    name=$1
    shift
    if [ -n "$time_bin" ] && [ "$time_bin" = /usr/bin/time ]; then
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >"$null" 2>"$tmp/err"
        rc=$?
        read -r w u s rss <"$tmp/time"
    else
        start=$(date +%s.%N)
        "$@" >"$null" 2>"$tmp/err"
        rc=$?
        end=$(date +%s.%N)
        w=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
        u=$w
        s=0
        rss=0
    fi
    last_wall=$w
    last_cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
    printf '%-16s %8.2f s wall %8.2f s CPU %9s KB peak RSS  (exit %s)\n' "$name:" "$w" \
        "$last_cpu" "$rss" "$rc"
}

# etmkit: the best of 3 by CPU time; the lister once (it takes a minute or two)
e_wall= e_cpu=
for _ in 1 2 3; do
    run "etmkit" "$etmkit" dump --format=ocsd --decode-only "$snap"
    if [ -z "$e_cpu" ] || awk -v a="$last_cpu" -v b="$e_cpu" 'BEGIN { exit !(a < b) }'; then
        e_wall=$last_wall e_cpu=$last_cpu
    fi
done
if [ -n "$lister" ]; then
    # the lister at its fastest: its listing to a file only (-logfilename; by default it
    # writes to standard output and to ./trc_pkt_lister.ppl: about the same cost here)
    (cd "$tmp" && run "trc_pkt_lister" "$lister" -ss_dir "$snap" -decode_only \
        -logfilename "$tmp/lister.ppl" -no_time_print) | tee "$tmp/lister.line"
    rm -f "$tmp/lister.ppl"
    l_wall=$(awk '{ print $2 }' "$tmp/lister.line")
    l_cpu=$(awk '{ print $5 }' "$tmp/lister.line")
    awk -v lw="$l_wall" -v ew="$e_wall" -v lc="$l_cpu" -v ec="$e_cpu" 'BEGIN {
        printf "ratio (lister / etmkit): %.1fx wall, %.1fx CPU\n",
               (ew > 0 ? lw / ew : 0), (ec > 0 ? lc / ec : 0) }'
    bench_result decode-listing "decode listing (\`dump --format=ocsd --decode-only\`), bugfix-exact-match x$copies ($mb MiB)" \
        "$e_cpu s CPU" "$l_cpu s CPU (trc_pkt_lister -decode_only $lister_version, to a file)" \
        "$(awk -v a="$e_cpu" -v b="$l_cpu" 'BEGIN { printf "%.1f", b / (a > 0 ? a : 0.01) }')" ">=80"
else
    echo "trc_pkt_lister: not installed (apt-get install libopencsd-bin): no comparison"
fi
if [ -x "$bench_bin" ]; then
    "$bench_bin" --repeat 3 "$snap" | sed 's/^flow_bench: /decode only (no listing): /'
fi
