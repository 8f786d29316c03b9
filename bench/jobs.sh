#!/bin/sh
# -j 2 against -j 1 (issue 30 item 3): wall time of `etmkit script` on `etmkit gen --scenario
# workload` recordings of SIZE (BENCH_TRACE_SIZE, default 256M) with time stamps and without
# (gen --config timestamps = 0), decoding alone (--itrace=i10000000) and the -F text path, to a
# null device; the median of RUNS (default 3) runs each. -j N lets N threads work at once
# (decoders and writer), so -j 1 is one core. Prints wall and CPU seconds and -j1/-j2.
#
#   bench/jobs.sh [ETMKIT_BIN]          (BENCH_TMP: keep the recordings there)
set -u
here=$(cd "$(dirname "$0")" && pwd)
etmkit=${1:-$here/../build/etmkit}
size=${BENCH_TRACE_SIZE:-256M}
runs=${RUNS:-3}
F=pid,tid,cpu,flags,ip,sym,symoff,dso,addr
[ -x "$etmkit" ] || { echo "jobs bench: $etmkit is not built (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "jobs bench: SKIP: /usr/bin/time is missing (apt-get install time)"; exit 0; }
tmp=${BENCH_TMP:-$(mktemp -d)}
[ -n "${BENCH_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT INT TERM
printf 'timestamps = 0\n' >"$tmp/nots.cfg"
. "$here/null.inc"
. "$here/result.inc"
for kind in ts nots; do
    out="$tmp/workload-$size-$kind"
    [ -f "$out/perf.data" ] && continue
    cfg=""; [ $kind = nots ] && cfg="--config $tmp/nots.cfg"
    # shellcheck disable=SC2086
    "$etmkit" gen -q --scenario workload --trace-size "$size" $cfg -o "$out" ||
        { echo "jobs bench: etmkit gen failed"; exit 1; }
done
echo "machine: $(nproc) CPUs, $(uname -m), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%d)"
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for kind in ts nots; do
    out="$tmp/workload-$size-$kind"
    for mode in decode text; do
        if [ $mode = decode ]; then set -- --itrace=i10000000; else set -- --itrace=b -F $F; fi
        for j in 1 2; do
            : >"$tmp/w$j"; : >"$tmp/c$j"
            for _ in $(seq "$runs"); do
                /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$etmkit" script -q -j $j \
                    -i "$out/perf.data" --symfs "$out/symfs" --kallsyms "$out/kallsyms" "$@" \
                    >"$null" 2>"$tmp/err"
                read -r w u s <"$tmp/time"
                echo "$w" >>"$tmp/w$j"
                awk -v u="$u" -v s="$s" 'BEGIN { print u + s }' >>"$tmp/c$j"
            done
        done
        w1=$(med <"$tmp/w1"); w2=$(med <"$tmp/w2"); c1=$(med <"$tmp/c1"); c2=$(med <"$tmp/c2")
        label=$([ $kind = ts ] && echo "time stamps" || echo "no time stamps")
        awk -v k="$label" -v m="$mode" -v w1="$w1" -v w2="$w2" -v c1="$c1" -v c2="$c2" 'BEGIN {
            printf "%s, %s: -j1 %.2f s wall (%.2f s CPU), -j2 %.2f s wall (%.2f s CPU): %.2fx\n",
                k, m, w1, c1, w2, c2, w1 / w2 }'
        what=$([ $mode = decode ] && echo "decoding (\`--itrace=i10000000\`)" || echo "\`--itrace=b -F\` text")
        bench_result "jobs-$kind-$mode" "\`script -j2\` against \`-j1\`, wall time, workload $size with $label, $what" \
            "$w2 s wall (-j2)" "$w1 s wall (-j1)" \
            "$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.2f", a / (b > 0 ? b : 0.01) }')" ">=1.7"
    done
done
