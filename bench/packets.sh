#!/bin/sh
# Packet-listing speed: etmkit vs OpenCSD's trc_pkt_lister (Debian libopencsd-bin).
#
# Input: the bugfix-exact-match snapshot of ../shared (6 ETMv4 sources in 1 MiB of CoreSight
# frames) with its buffer repeated 16 times (16 MiB), written with the same INI files into a
# temporary folder. Both tools list every packet, each at its fastest:
#   etmkit dump --format=ocsd DIR                                  (to /dev/null)
#   trc_pkt_lister -ss_dir DIR -no_time_print -logfilename FILE    (to a file only)
# (by default the lister writes to standard output and to ./trc_pkt_lister.ppl; a file alone is
#  what issue 30 names its fastest setting, though on our VM every way costs about the same: it
#  writes each line with a system call of its own. Debian's 1.3.3 ignores -no_time_print.)
# Prints the best of 3 CPU times for etmkit, one run of the lister (LISTER_RUNS), the ratio
# and the peak RSS of each.
# usage: bench/packets.sh [path/to/etmkit]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
shared=${ETMKIT_SHARED:-$here/../../shared}
snap="$shared/testdata/opencsd/snapshots/bugfix-exact-match"
runs=${RUNS:-3}

if [ ! -d "$snap" ]; then
    echo "packets.sh: $snap not found (../shared is needed)"
    exit 77
fi
for tool in trc_pkt_lister /usr/bin/time; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "packets.sh: $tool not found (make bench-deps installs libopencsd-bin and time)"
        exit 77
    fi
done
[ -x "$etmkit" ] || { echo "packets.sh: $etmkit is not built"; exit 1; }
etmkit=$(cd "$(dirname "$etmkit")" && pwd)/$(basename "$etmkit")

lister_version=$(dpkg-query -W -f '${Version}' libopencsd-bin 2>/dev/null | sed 's/-.*//')
. "$here/result.inc"
tmp=$(mktemp -d)
. "$here/null.inc"
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/snap"
for f in "$snap"/*; do
    [ "$(basename "$f")" = cstrace.bin ] || ln -s "$f" "$tmp/snap/"
done
i=0
while [ $i -lt 16 ]; do
    cat "$snap/cstrace.bin"
    i=$((i + 1))
done >"$tmp/snap/cstrace.bin"
size=$(wc -c <"$tmp/snap/cstrace.bin")

# best_of VAR CMD...: runs CMD $runs times; sets VAR_cpu (user+sys seconds), VAR_wall and
# VAR_rss (peak RSS, KiB) from the run with the least CPU time. CPU time is the figure
# compared: it does not depend on what else the machine runs.
best_of() {
    var=$1
    shift
    best_c= best_w= best_m=
    n=0
    while [ $n -lt "$runs" ]; do
        (cd "$tmp" && /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >"$null" 2>"$tmp/stderr") || {
            echo "$var failed:"
            cat "$tmp/stderr"
            exit 1
        }
        read -r w u s m <<EOT
$(tail -n 1 "$tmp/time")
EOT
        c=$(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')
        if [ -z "$best_c" ] || awk -v a="$c" -v b="$best_c" 'BEGIN { exit !(a < b) }'; then
            best_c=$c best_w=$w best_m=$m
        fi
        n=$((n + 1))
    done
    eval "${var}_cpu=\$best_c ${var}_wall=\$best_w ${var}_rss=\$best_m"
}

echo "packet listing of $size bytes of CoreSight frames (bugfix-exact-match x16), best of $runs"
best_of ek "$etmkit" dump --format=ocsd "$tmp/snap"
printf '  %-16s cpu %8s s  wall %8s s  peak RSS %7s KiB\n' etmkit "$ek_cpu" "$ek_wall" "$ek_rss"
runs=${LISTER_RUNS:-1}
best_of ocsd trc_pkt_lister -ss_dir "$tmp/snap" -no_time_print -logfilename "$tmp/lister.ppl"
rm -f "$tmp/lister.ppl"
printf '  %-16s cpu %8s s  wall %8s s  peak RSS %7s KiB\n' trc_pkt_lister "$ocsd_cpu" "$ocsd_wall" "$ocsd_rss"
awk -v a="$ek_cpu" -v b="$ocsd_cpu" 'BEGIN {
    if (a < 0.01) a = 0.01
    printf "  etmkit is %.1fx faster (CPU time; %.1f MiB/s vs %.2f MiB/s)\n", b / a, 16 / a, 16 / b }'
bench_result packets "packet listing (\`dump --format=ocsd\`), bugfix-exact-match x16 (16 MiB)" \
    "$ek_cpu s CPU" "$ocsd_cpu s CPU (trc_pkt_lister $lister_version, to a file)" \
    "$(awk -v a="$ek_cpu" -v b="$ocsd_cpu" 'BEGIN { if (a < 0.01) a = 0.01; printf "%.1f", b / a }')" ">=25"
