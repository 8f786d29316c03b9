#!/bin/sh
# Simulator speed: `etmkit gen --scenario workload` (4 CPUs, ETE into per-CPU TRBEs, system-wide
# kernel and user tracing; ground truth summarised above 16 MiB) writing a perf.data with
# SIZE bytes of trace into a temporary folder. Prints the CPU time (user + sys), wall time and
# peak RSS of each size, and the CPU seconds per GiB of trace.
# usage: bench/gen.sh [path/to/etmkit]   (SIZES="256M 1G" by default)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
sizes=${SIZES:-256M 1G}
command -v /usr/bin/time >/dev/null 2>&1 || { echo "gen.sh: /usr/bin/time not found (make bench-deps)"; exit 77; }
[ -x "$etmkit" ] || { echo "gen.sh: $etmkit is not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
printf '%-6s %10s %8s %8s %10s %12s\n' size "trace MiB" "CPU s" "wall s" "RSS KiB" "CPU s/GiB"
for size in $sizes; do
    rm -rf "$tmp/out"
    /usr/bin/time -f '%U %S %e %M' -o "$tmp/time" "$etmkit" gen --scenario workload --seed 1 \
        --trace-size "$size" -o "$tmp/out" >/dev/null 2>&1
    bytes=$(sed -n 's/^trace_bytes\t//p' "$tmp/out/truth.summary")
    read -r user sys wall rss <"$tmp/time"
    awk -v s="$size" -v b="$bytes" -v u="$user" -v y="$sys" -v w="$wall" -v r="$rss" 'BEGIN {
        cpu = u + y; printf "%-6s %10.1f %8.2f %8.2f %10d %12.2f\n", s, b / 1048576, cpu, w, r,
        cpu / (b / 1073741824) }'
done
